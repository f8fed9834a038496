"""Driving a task-backed tool call to its end under the call's one policy.

When a server runs a ``tools/call`` as a task, the call is not over: :class:`TaskDriver` polls ``tasks/get`` on the
schedule of :class:`~mcp_client.policy.tasks.PollSchedule`, answers input the task asks for (2026-07-28:
``inputRequests`` through the host's handlers, then ``tasks/update``; 2025-11-25: ``tasks/result``, on whose
stream the server sends its requests), and turns the end into the call's outcome: ``completed`` gives the tool's
result, ``failed`` raises :class:`~mcp_client.TaskFailed`, ``cancelled`` :class:`~mcp_client.RequestCancelled`.

The policy is the call's: one maximum spans the creation, every poll, every input round and the result fetch
(nothing extends it); each poll is a request of its own under the idle limit; a poll that fails on the transport
is a read, so it is sent again (new id, with backoff) inside the maximum. When the call ends early (idle or
maximum timeout, ``call.cancel()``, the caller's task cancelled, a broken answer), ``tasks/cancel`` goes out
exactly once, in the background and bounded by ``cancel_timeout``: the caller's error never waits for it. A task is
never cancelled with ``notifications/cancelled``, and a detached call leaves its task running.

Each request of a task goes through :class:`~mcp_client.calls.CallRunner` (its own id, the call's maximum, the
control that cancels it); of the session it reads the clock, the era and whether the connection is gone.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from mcp_client._backends.auto import current_backend
from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject
from mcp_client.calls.attempt import CALLER_SCOPE_GRACE, run_attempt
from mcp_client.calls.input_rounds import answer_input_round
from mcp_client.calls.options import CallOptions
from mcp_client.calls.runner import CallRunner, Then
from mcp_client.errors import (
    InvalidParams,
    MaxTimeout,
    MCPClientError,
    ProtocolError,
    RequestCancelled,
    ServerError,
    TaskFailed,
    TaskNotFound,
    TransportError,
)
from mcp_client.events import Slow, TaskCancelSent, TaskCreated, TaskStatus
from mcp_client.policy import TimeoutKind, TimeoutPolicy
from mcp_client.policy.tasks import (
    DEFAULT_POLL,
    InputKeys,
    PollPolicy,
    PollSchedule,
    StatusChange,
    StatusTracker,
    TaskState as State,
)
from mcp_client.protocol.tasks import Task
from mcp_client.session.handlers import InputHandler
from mcp_client.session.inflight import CallState, RequestControl, WireRequest
from mcp_client.session.pending import Pending

if TYPE_CHECKING:
    from mcp_client.protocol.era import Era
    from mcp_client.session.session import Session

__all__ = ["TaskControl", "TaskDriver", "task_not_found"]

logger = package_logger("mcp_client.tasks")


@dataclass(slots=True)
class TaskControl:
    """What a :class:`~mcp_client.Call` handle knows of its task: the id, once the server made one, and whether the
    host detached the call (then the task is left running when the call stops locally)."""

    task_id: str | None = None
    leave_running: bool = False
    on_answer: Callable[[Task | None], None] | None = None
    """Told of the call's first answer: the task the server made of it, or None for an ordinary result."""

    def answered(self, task: Task | None) -> None:
        """The call's first answer arrived (``task``: what it created, if anything)."""
        if task is not None:
            self.task_id = task.task_id
        if self.on_answer is not None:
            self.on_answer(task)


@dataclass(slots=True, eq=False)
class _Run:
    """The state of one drive."""

    task_id: str
    call: CallState
    control: RequestControl
    extension: bool
    """The 2026-07-28 extension's flavour (the era's ``tasks_extension``), else 2025-11-25's experimental one."""
    schedule: PollSchedule
    session: Session  # the session whose server made the task: its requests go there, never to a restarted process
    tracker: StatusTracker = field(default_factory=StatusTracker)
    keys: InputKeys = field(default_factory=InputKeys)
    settled: bool = False
    """True once the server reported an end (or does not know the task): nothing left to cancel."""
    hinted: bool = False
    """A status notification named the task since the last poll: poll now."""


class TaskDriver:
    """Drives the tasks of one client's calls to their ends, on its call runner. Created by the client."""

    def __init__(
        self,
        call_runner: CallRunner,
        *,
        task_group: anyio.abc.TaskGroup,
        input_handler: InputHandler | None,
        cancel_timeout: float,
        poll: PollPolicy = DEFAULT_POLL,
        rng: random.Random | None = None,
    ) -> None:
        self._call_runner = call_runner
        self._task_group = task_group
        self._input_handler = input_handler
        self._cancel_timeout = cancel_timeout
        self.poll = poll
        self._rng = rng if rng is not None else random.Random()
        self._new_waiter = current_backend().new_waiter  # (created inside the loop, by the client's __aenter__)
        self._cancels_pending = Pending()
        self._runs: set[_Run] = set()
        """The drives under way (to stop them when the client closes)."""
        self._runs_pending = Pending()
        self._plain_phase = _ToolPhase(self, False, None, None)
        self._closing = False

    @property
    def _session(self) -> Session:
        """The session the call runner runs on now (after a supervised stdio server's restart, the new one)."""
        return self._call_runner.session

    def _gone(self, run: _Run) -> bool:
        """Whether no request of ``run`` will be answered any more: the connection its task lives on is gone (a
        restarted server does not know the task), or the client is closing (over HTTP nothing reports the
        connection closed, so the flag is the client's own)."""
        return self._closing or run.session.closed_error is not None

    @property
    def _era(self) -> Era:
        """The era of the current session: what a task looks like on its wire, which flavour of tasks it has."""
        era = self._session.era
        assert era is not None  # (tasks are driven on a session that negotiated)
        return era

    # -- one task, to its end ---------------------------------------------------------------------------------

    def tool_phase(self, *, asked: bool, control: RequestControl | None, handle: TaskControl | None) -> Then:
        """What the call runner runs after the first answer of a ``tools/call`` (as the same call: its deadline,
        its events, its end): the answer itself, or, when the server made a task of the call, the task polled to
        its end. ``asked``: 2025-11-25, whether the call asked for a task; ``control`` cancels the call (None:
        one is made if a task is)."""
        if not asked and control is None and handle is None:
            return self._plain_phase  # (most calls: one object for all of them, nothing per call in flight)
        return _ToolPhase(self, asked, control, handle)

    def resume_phase(self, task_id: str, control: RequestControl, handle: TaskControl | None = None) -> Then:
        """What the call runner runs after the first ``tasks/get`` of a task picked up by its id: the task polled
        to its end, as above."""

        async def phase(call: CallState, params: JSONObject, answer: JSONObject) -> JSONObject:
            return await self._drive(call, task_id, self._era.task_of(answer), control, handle)

        return phase

    async def _drive(
        self, call: CallState, task_id: str, first: Task, control: RequestControl, handle: TaskControl | None
    ) -> JSONObject:
        """Poll the task to its end under ``call`` (its one deadline) and return the tool's result object (a
        ``CallToolResult`` as sent). Raises what a call raises, plus :class:`TaskFailed` and :class:`TaskNotFound`;
        every error says the call may have run."""
        schedule = PollSchedule(self.poll, self._rng)
        run = _Run(task_id, call, control, self._era.tasks_extension, schedule, self._session)
        self._runs.add(run)
        self._runs_pending.add()
        try:
            report: Task | None = first
            while True:
                if report is not None:
                    outcome = await self._advance(run, report)
                    if outcome is not None:
                        return outcome
                await self._wait_for_poll(run)
                report = await self._poll(run)
        except MCPClientError as exc:
            if not run.settled and not (handle is not None and handle.leave_running):
                self.cancel_in_background(task_id, _reason(exc))
            exc.may_have_run = True  # the server made a task of the call: whatever came after, it may have run
            raise
        except anyio.get_cancelled_exc_class():
            if not run.settled and not (handle is not None and handle.leave_running):
                self.cancel_in_background(task_id, "the caller was cancelled")
            raise
        finally:
            self._runs.discard(run)
            self._runs_pending.done()

    async def _advance(self, run: _Run, report: Task) -> JSONObject | None:
        """Take in one report of the task; return the tool's result when the task is done, None to poll on."""
        if report.task_id != run.task_id:
            raise ProtocolError(f"asked for task {run.task_id!r}, the server reported task {report.task_id!r}")
        change = run.tracker.observe(report.status, report.status_message, report.last_updated_at)
        if change is StatusChange.INVALID:
            raise ProtocolError(f"task {run.task_id!r}: unknown status {report.status!r}")
        if change is not StatusChange.UNCHANGED:
            backwards = change is StatusChange.BACKWARDS
            self._session.emit(TaskStatus(run.task_id, report.status, report.status_message, backwards))
            if backwards:
                logger.info("task %s: ignoring a status report that goes backwards (%s)", run.task_id, report.status)
        run.schedule.answered(
            self._session.clock(),
            interval=report.poll_interval,
            changed=change in (StatusChange.FIRST, StatusChange.CHANGED),
        )
        status = run.tracker.status
        if status is State.COMPLETED:
            run.settled = True
            if not run.extension:
                return await self._fetch_result(run)  # (None: the read failed; poll, then read again)
            if report.result is None:
                raise ProtocolError(f"task {run.task_id!r} completed without a result")
            return report.result
        if status is State.FAILED:
            run.settled = True
            if not run.extension:
                if await self._fetch_result(run) is None:  # else it raised the task's error
                    return None
                raise ProtocolError(f"task {run.task_id!r} failed, but tasks/result returned a result")
            raise _failed(run.task_id, report.error, report.status_message)
        if status is State.CANCELLED:
            run.settled = True
            reason = report.status_message or "the task was cancelled on the server"
            raise RequestCancelled(f"task {run.task_id!r} was cancelled: {reason}", reason=reason)
        if status is State.INPUT_REQUIRED and change is not StatusChange.BACKWARDS:
            if not run.extension:
                # 2025-11-25: the server sends its requests on the stream of tasks/result, which ends with the task.
                return await self._fetch_result(run, waiting=True)
            requests = report.input_requests or {}
            fresh = run.keys.fresh(requests)
            kept = run.keys.to_resend(requests)
            if fresh or kept:
                await self._answer(run, fresh, kept)
        return None

    async def _wait_for_poll(self, run: _Run) -> None:
        """Sleep until the next poll is due (or a status notification names the task); raise when the call is
        cancelled or its maximum passes first. No request is in flight: the idle clock does not run."""
        call = run.call
        deadline = call.deadline
        while True:
            now = self._session.clock()
            if deadline.take_slow(now):
                self._session.emit(Slow(_last(call.request_ids), call.method, deadline.elapsed(now)))
            kind = _hard_expiry(deadline.expired(now))
            if kind is TimeoutKind.CALLER:
                await anyio.sleep(CALLER_SCOPE_GRACE)  # the caller's own scope cancels us
                kind = TimeoutKind.MAXIMUM
            if kind is not None:
                maximum = deadline.policy.maximum
                limit = maximum if maximum is not None else deadline.elapsed(now)
                raise MaxTimeout(f"tools/call: the {limit:g} s maximum passed (task {run.task_id!r})", timeout=limit)
            due = run.schedule.next_poll_at(deadline.hard_deadline(now))
            wake = min(due, deadline.slow_at())
            if call.cancel_reason is None and wake > now and not run.hinted:
                # The loop's own timer and future, as a request's wait (no cancel scope per poll); a cancel through
                # the control settles the placeholder request, which wakes the wait at once.
                waiter = self._new_waiter()
                call.current = WireRequest(0, None, call, waiter)
                try:
                    await waiter.wait(wake)
                finally:
                    call.current = None
            if call.cancel_reason is not None:
                reason = call.cancel_reason
                raise RequestCancelled(f"tools/call was cancelled: {reason} (task {run.task_id!r})", reason=reason)
            now = self._session.clock()
            if (run.hinted or now >= due) and _hard_expiry(deadline.expired(now)) is None:
                run.hinted = False
                return

    async def _poll(self, run: _Run) -> Task | None:
        """One ``tasks/get``: the task's report, or None when the poll failed on the transport (it is retried)."""
        try:
            raw = await self._request(run, "tasks/get", {"taskId": run.task_id})
        except TransportError:
            if self._gone(run):
                raise  # the connection is gone for good: no poll will be answered
            run.schedule.failed(self._session.clock())
            return None
        except InvalidParams as exc:
            run.settled = True
            raise task_not_found(exc, run.task_id) from None
        return self._era.task_of(raw)

    async def _fetch_result(self, run: _Run, *, waiting: bool = False) -> JSONObject | None:
        """2025-11-25 ``tasks/result``: the tool's result, or the task's error as :class:`TaskFailed`.

        While the task waits for input (``waiting``) the request stays open until the task ends, so no idle limit
        applies to it. A read is safe to repeat: a transport failure means "poll on, then read again" (None).
        """
        try:
            result = await self._request(run, "tasks/result", {"taskId": run.task_id}, no_idle=waiting)
        except TransportError:
            if self._gone(run):
                raise
            run.schedule.failed(self._session.clock())
            return None
        except ServerError as exc:
            run.settled = True
            error = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            raise _failed(run.task_id, error, None) from None
        run.settled = True
        return result

    async def _answer(self, run: _Run, requests: JSONObject, kept: JSONObject) -> None:
        """2026-07-28: answer the task's new input requests through the host's handlers, then ``tasks/update`` with
        those answers and the ``kept`` ones an earlier update failed to deliver (the person is never asked twice)."""
        responses = dict(kept)
        if requests:
            with self._session.waiting_on_a_person([run.call]):
                answered = await answer_input_round(run.call, {}, {"inputRequests": requests}, self._input_handler)
            responses.update(answered.get("inputResponses") or {})
        try:
            await self._request(run, "tasks/update", {"taskId": run.task_id, "inputResponses": responses})
        except TransportError:
            if self._gone(run):
                raise
            run.keys.hold(responses)  # not delivered: sent again, as they are, when a poll still asks for them
            run.schedule.failed(self._session.clock())
            return
        run.keys.delivered()
        run.schedule.answered(self._session.clock(), interval=None, changed=True)

    async def _request(self, run: _Run, method: str, params: JSONObject, *, no_idle: bool = False) -> JSONObject:
        """One ``tasks/*`` request of the drive: an attempt of the call, under its one deadline (the idle clock
        starts again at the write; ``no_idle``: none for this request), with an id of its own."""
        deadline = run.call.deadline
        request = CallState(method, deadline, None)
        run.control.attach(request)
        policy = deadline.policy
        if no_idle:
            deadline.policy = policy.replace(idle=None)
        try:
            return await run_attempt(run.session, request, params, False, 1)
        finally:
            deadline.policy = policy
            run.control.attach(run.call)  # cancels between requests reach the drive again

    # -- single requests on a task ---------------------------------------------------------------------------

    async def get(self, task_id: str, *, policy: TimeoutPolicy) -> Task:
        """One ``tasks/get``; :class:`TaskNotFound` for an unknown or expired id."""
        try:
            raw = await self._call_runner.run("tasks/get", {"taskId": task_id}, CallOptions.without_progress(policy))
        except InvalidParams as exc:
            raise task_not_found(exc, task_id) from None
        return self._era.task_of(raw)

    async def result(
        self, task_id: str, *, policy: TimeoutPolicy, started_at: float, handle: TaskControl | None = None
    ) -> JSONObject:
        """Pick the task up by its id and poll it to its end, as one call (a first ``tasks/get``, then the drive);
        the tool's result object. :class:`TaskNotFound` for an unknown or expired id. Every error says the call may
        have run: the work behind a task id may have run, whatever became of our requests (a first ``tasks/get``
        never written included)."""
        control = RequestControl()
        try:
            return await self._call_runner.run(
                "tasks/get",
                {"taskId": task_id},
                CallOptions.without_progress(policy),
                started_at=started_at,
                control=control,
                then=self.resume_phase(task_id, control, handle),
            )
        except MCPClientError as exc:
            error = task_not_found(exc, task_id) if isinstance(exc, InvalidParams) and not exc.may_have_run else exc
            error.may_have_run = True  # (an InvalidParams that may have run is the drive's own, not the first get's)
            raise error from None

    async def cancel(self, task_id: str, *, policy: TimeoutPolicy, reason: str = "cancelled by the client") -> None:
        """``tasks/cancel``, awaited; :class:`TaskNotFound` for an unknown, expired (or, at 2025-11-25, already
        finished) task."""
        try:
            await self._call_runner.run("tasks/cancel", {"taskId": task_id}, CallOptions.without_progress(policy))
        except InvalidParams as exc:
            raise task_not_found(exc, task_id, "could not cancel") from None
        self._session.emit(TaskCancelSent(task_id, reason, True))

    def cancel_in_background(self, task_id: str, reason: str) -> None:
        """Send ``tasks/cancel`` from the client's task group, bounded by ``cancel_timeout``; never raises (when the
        client is already shut down, nothing can be sent: the task is reported as not acknowledged)."""
        try:
            self._task_group.start_soon(self._send_cancel, task_id, reason)
        except RuntimeError:  # the task group has ended: the connection with it
            logger.debug("tasks/cancel for task %s not sent: the client is closed", task_id)
            self._session.emit(TaskCancelSent(task_id, reason, False))
            return
        self._cancels_pending.add()

    def status_hint(self, params: JSONObject) -> None:
        """A status notification (``notifications/tasks/status``, or ``notifications/tasks`` on a listen stream)
        named a task: the drives of that task poll at once. Only a hint: what the poll answers is what counts."""
        task_id = params.get("taskId")
        for run in self._runs:
            if run.task_id == task_id:
                run.hinted = True
                run.call.nudge()

    async def close(self, reason: str, timeout: float) -> None:
        """Stop every drive under way (their tasks are cancelled with ``tasks/cancel``, unless detached) and wait,
        at most ``timeout`` s, until they have ended; from now on no poll is sent again after a failure."""
        self._closing = True
        for run in list(self._runs):
            run.control.cancel(reason)
        await self._runs_pending.drained(timeout)

    async def _send_cancel(self, task_id: str, reason: str) -> None:
        acknowledged = False
        policy = TimeoutPolicy(idle=None, maximum=self._cancel_timeout, connect=None)
        try:
            with anyio.move_on_after(self._cancel_timeout):
                await self._call_runner.run("tasks/cancel", {"taskId": task_id}, CallOptions.without_progress(policy))
                acknowledged = True
        except MCPClientError as exc:
            logger.debug("tasks/cancel for task %s failed: %s", task_id, exc)
        finally:
            self._session.emit(TaskCancelSent(task_id, reason, acknowledged))
            self._cancels_pending.done()

    async def drain(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until the background ``tasks/cancel`` requests have ended."""
        await self._cancels_pending.drained(timeout)


class _ToolPhase:
    """:meth:`TaskDriver.tool_phase`, as a small object (shared by the calls that need nothing of their own)."""

    __slots__ = ("_asked", "_control", "_driver", "_handle")

    def __init__(
        self, driver: TaskDriver, asked: bool, control: RequestControl | None, handle: TaskControl | None
    ) -> None:
        self._driver = driver
        self._asked = asked
        self._control = control
        self._handle = handle

    async def __call__(self, call: CallState, params: JSONObject, answer: JSONObject) -> JSONObject:
        driver = self._driver
        task = driver._era.created_task(answer, asked=self._asked)
        if self._handle is not None:
            self._handle.answered(task)
        if task is None:
            return answer
        control = self._control
        if control is None:  # (a call without a handle: the drive needs one, to stop it when the client closes)
            control = RequestControl()
            control.attach(call)
        tool = params.get("name")
        driver._session.emit(TaskCreated(task.task_id, tool if isinstance(tool, str) else "", task.ttl))
        return await driver._drive(call, task.task_id, task, control, self._handle)


def task_not_found(error: InvalidParams, task_id: str, what: str = "does not know") -> TaskNotFound:
    """The one reading of ``-32602`` on a task request: the server does not know the task (never existed, expired,
    or for ``tasks/cancel`` at 2025-11-25 already finished)."""
    return TaskNotFound(f"the server {what} task {task_id!r}: {error.message}", task_id=task_id)


def _hard_expiry(kind: TimeoutKind | None) -> TimeoutKind | None:
    """Between a task's requests only the hard limits count (the idle clock runs while a request is out)."""
    return None if kind is TimeoutKind.IDLE else kind


def _last(request_ids: list[int]) -> int:
    return request_ids[-1] if request_ids else 0


def _failed(task_id: str, error: JSONObject | None, status_message: str | None) -> TaskFailed:
    message = error.get("message") if error is not None else None
    detail = message if isinstance(message, str) and message else status_message or "no details"
    return TaskFailed(f"task {task_id!r} failed: {detail}", task_id=task_id, error=error)


def _reason(error: MCPClientError) -> str:
    if isinstance(error, RequestCancelled) and error.reason:
        return error.reason
    return f"{type(error).__name__}: {error.message}"
