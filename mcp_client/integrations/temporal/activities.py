"""The worker side: one Temporal activity per MCP operation per server, run on the worker's shared clients.

A ``tools/call`` activity runs the call under the MCP policy the workflow gave (idle reset by progress, the hard
maximum counted from when the activity was first scheduled, over every attempt) and heartbeats while it is in
flight. What the last attempt did comes back in ``activity.info().heartbeat_details``:

* a task: the server made it, so this attempt resumes it (``client.resume``) and never calls the tool again;
* ``written``: the request may have reached the server; the tool is called again only if it is safe to repeat
  (``idempotentHint``/``readOnlyHint``, or the worker client's policy rules), else the activity fails for good
  with :class:`~mcp_client.integrations.temporal.WorkerLost`;
* nothing (or a ``written`` the last attempt withdrew): the call never left, so it is made now.

The checkpoint is read first, before the policy or the connection. ``written`` is confirmed in Temporal (a round
trip through the worker's client and its payload codec) before the request is written, and a task's reference
before the attempt counts on the next one to resume it: a crash at any point leaves a record that is true. A
failure known to be "never sent" withdraws ``written`` (``unsent``), so that the next attempt sends it.
Every failure is the one typed error as an ``ApplicationError`` (:mod:`.failures`), never an exception group.

Cancelling the activity (the workflow cancelled it) cancels the call on the wire (``notifications/cancelled`` or
the stream closed for a plain call, ``tasks/cancel`` for a task). When the worker shuts down or Temporal timed the
attempt out, a task is left running for the next attempt only if its reference is confirmed in Temporal and another
attempt can follow; otherwise it is cancelled, so that no task is left without an owner. Other operations are reads,
safe to repeat, and need no checkpoint.

Touches the public client, the task reference, Temporal's ``activity`` module and this package's wire, heartbeat,
failures and connections.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import mcp_types
from temporalio import activity

from mcp_client._log_guard import package_logger
from mcp_client.client.call import Call
from mcp_client.client.client import Client
from mcp_client.client.task_reference import TaskReference
from mcp_client.errors import ConnectError, MaxTimeout, MCPClientError, TransportError
from mcp_client.integrations.temporal.attempt import Attempt
from mcp_client.integrations.temporal.connections import Connection, Connections
from mcp_client.integrations.temporal.failures import (
    CheckpointNotRecorded,
    WorkerLost,
    activity_failure,
    client_error,
    invalid_reference,
)
from mcp_client.integrations.temporal.heartbeat import Heartbeat
from mcp_client.integrations.temporal.wire import Checkpoint, RequestInput, ToolCallInput, activity_name
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.policy import TimeoutPolicy

__all__ = ["MCPActivities"]

logger = package_logger("mcp_client.integrations.temporal")

ResultT = TypeVar("ResultT")

Confirm = Callable[[Any], Awaitable[None]]
"""Records heartbeat details in Temporal and returns once the service acknowledged them."""

_CONFIRM_WAIT = 30.0
"""Seconds a checkpoint's confirmation may take (and never more than what is left of the call's maximum)."""

_CANCEL_WAIT = 5.0
"""Seconds a cancelled activity waits for its call to end (its wire cancel is then under way in the background)."""


def _policy(client: Client, tool: str | None, idle: float | None, left: float | None) -> TimeoutPolicy:
    """The worker client's policy for the call with the workflow's limits; ``left`` is what remains of the maximum
    (see :meth:`Attempt.left`)."""
    base = client.resolve(tool)[0]
    return TimeoutPolicy(
        idle=idle,
        maximum=left,
        connect=base.connect,
        notify_after=base.notify_after,
        reset_on_any_message=base.reset_on_any_message,
        pause_maximum=base.pause_maximum,
        reset_on_log=base.reset_on_log,
    )


def _maximum_passed(maximum: float | None, *, method: str, ran: bool) -> MaxTimeout:
    """The maximum passed before this attempt could start; ``ran``: an earlier attempt may have run the call."""
    error = MaxTimeout(
        "the call's maximum passed before this attempt started"
        + (", after an earlier attempt may have sent it" if ran else ""),
        timeout=maximum,
        method=method,
    )
    error.may_have_run = ran
    return error


def _confirm_within(policy: TimeoutPolicy) -> float:
    return _CONFIRM_WAIT if policy.maximum is None else max(0.0, min(_CONFIRM_WAIT, policy.maximum))


def _idempotent(client: Client, tool: str) -> bool:
    """The client's rule: the policy's ``idempotent`` where it says, else the tool's annotations."""
    retry = client.resolve(tool)[1]
    if retry is not None and retry.idempotent is not None:
        return retry.idempotent
    return client.is_idempotent(tool)


def _heartbeat_timeout() -> float | None:
    timeout = activity.info().heartbeat_timeout
    return timeout.total_seconds() if timeout else None


async def _confirm_through_client(details: Any) -> None:
    """A heartbeat through the worker's Temporal client: encoded by its converter and codec, and awaited until the
    service recorded it (``activity.heartbeat`` only schedules one)."""
    handle = activity.client().get_async_activity_handle(task_token=activity.info().task_token)
    await handle.heartbeat(details)


class _Progress:
    """What the attempt of a call has done so far."""

    def __init__(self) -> None:
        self.task: TaskReference | None = None
        self.resumable = False
        """The task's reference is confirmed in Temporal: the next attempt resumes it."""
        self.sent = False
        """The request may have left (or the task it made is being resumed)."""


class MCPActivities:
    """The activities of every server of a plugin, over its :class:`Connections`.

    Args:
        connections: The worker's clients.
        confirm: How a checkpoint is recorded and acknowledged (default: a heartbeat through the worker's client).
    """

    def __init__(self, connections: Connections, confirm: Confirm | None = None) -> None:
        self.connections = connections
        self._confirm = confirm if confirm is not None else _confirm_through_client

    def definitions(self) -> list[Callable[..., Any]]:
        """Every activity, named by :func:`~mcp_client.integrations.temporal.wire.activity_name`."""
        definitions: list[Callable[..., Any]] = []
        for server in self.connections.factories:
            definitions.extend(self._for_server(server))
        return definitions

    def _for_server(self, server: str) -> list[Callable[..., Any]]:
        async def call_tool(request: ToolCallInput) -> mcp_types.CallToolResult:
            return await self.call_tool(server, request)

        async def list_tools(request: RequestInput) -> list[mcp_types.Tool]:
            return await self._read(server, request, lambda c, t: c.list_tools(timeout=t, cache=False))

        async def list_prompts(request: RequestInput) -> list[mcp_types.Prompt]:
            return await self._read(server, request, lambda c, t: c.list_prompts(timeout=t, cache=False))

        async def get_prompt(request: RequestInput) -> mcp_types.GetPromptResult:
            return await self._read(
                server, request, lambda c, t: c.get_prompt(request.name or "", request.arguments, timeout=t)
            )

        async def list_resources(request: RequestInput) -> list[mcp_types.Resource]:
            return await self._read(server, request, lambda c, t: c.list_resources(timeout=t, cache=False))

        async def read_resource(request: RequestInput) -> mcp_types.ReadResourceResult:
            return await self._read(
                server, request, lambda c, t: c.read_resource(request.uri or "", timeout=t, cache=False)
            )

        functions: list[Callable[..., Awaitable[Any]]] = [
            call_tool,
            list_tools,
            list_prompts,
            get_prompt,
            list_resources,
            read_resource,
        ]
        return [activity.defn(name=activity_name(server, f.__name__))(f) for f in functions]

    async def _read(
        self,
        server: str,
        request: RequestInput,
        operation: Callable[[Client, TimeoutPolicy], Awaitable[ResultT]],
    ) -> ResultT:
        """A read: no checkpoint, since repeating it is harmless; a retryable failure is retried by Temporal."""
        attempt = Attempt(activity.info())
        connection = await self._connect(server, request.maximum, attempt, method="read")
        beat = Heartbeat(activity.heartbeat, _heartbeat_timeout())
        try:
            left = attempt.left(request.maximum)
            if left is not None and left <= 0:
                raise _maximum_passed(request.maximum, method="read", ran=False)
            policy = _policy(connection.client, None, request.idle, left)
            async with anyio.create_task_group() as beats:
                beats.start_soon(beat.run)
                try:
                    result = await operation(connection.client, policy)
                finally:
                    beats.cancel_scope.cancel()
            return result
        except BaseException as exc:
            error = _typed(exc, sent=None)
            if error is None:
                raise
            self._after_failure(connection, error)
            raise activity_failure(error, idempotent=True) from error
        finally:
            self.connections.release(connection)

    async def call_tool(self, server: str, request: ToolCallInput) -> mcp_types.CallToolResult:
        """The ``tools/call`` activity of ``server`` (see the module's docstring)."""
        attempt = Attempt(activity.info())  # the last attempt's checkpoint, read before anything else
        beat = Heartbeat(activity.heartbeat, _heartbeat_timeout(), self._confirm)
        progress = _Progress()
        last = attempt.checkpoint
        # A task left behind is resumed, or cancelled once the maximum passed: its connection may take that long.
        cleanup = _CANCEL_WAIT if last is not None and last.task is not None else 0.0
        connection = await self._connect(
            server, request.maximum, attempt, method="tools/call", ran_before=last is not None, cleanup=cleanup
        )
        try:
            return await self._call_tool(connection, request, attempt, beat, progress)
        finally:
            self.connections.release(connection)

    async def _call_tool(
        self, connection: Connection, request: ToolCallInput, attempt: Attempt, beat: Heartbeat, progress: _Progress
    ) -> mcp_types.CallToolResult:
        last = attempt.checkpoint
        client = connection.client
        idempotent = False
        try:
            if last is not None and last.task is not None:
                try:
                    reference = TaskReference.from_dict(last.task)
                    client.check_reference(reference)
                except ValueError as exc:
                    raise invalid_reference(exc) from exc
                progress.task, progress.resumable, progress.sent = reference, True, True
                return await self._resume(client, reference, last, attempt, request)
            left = attempt.left(request.maximum)
            if left is not None and left <= 0:
                raise _maximum_passed(request.maximum, method="tools/call", ran=last is not None)
            # The listing that says whether the tool is safe to repeat is part of the call: under its limits.
            tool = await connection.tool(request.name, _policy(client, request.name, request.idle, left))
            idempotent = _idempotent(client, request.name)
            if last is not None and not idempotent:
                # Annotations that call the tool safe would contradict the rule that said it is not.
                hints = tool.annotations if tool is not None and not client.is_idempotent(request.name) else None
                raise WorkerLost(request.name, hints, attempt=attempt.number)
            left = attempt.left(request.maximum)
            if left is not None and left <= 0:
                raise _maximum_passed(request.maximum, method="tools/call", ran=last is not None)
            policy = _policy(client, request.name, request.idle, left)
            return await self._call(client, request, beat, policy, attempt, progress)
        except BaseException as exc:
            error = _typed(exc, sent=progress.sent)
            if error is None:
                raise
            if not progress.sent:  # a failure of the listing or of the checkpoint: this attempt sent no call
                error.may_have_run = False
            error.about_tool(request.name, None)
            await self._settle(client, beat, progress, error)
            self._after_failure(connection, error)
            raise activity_failure(
                error, idempotent=idempotent, resumable=progress.resumable, ran_before=last is not None
            ) from error

    async def _call(
        self,
        client: Client,
        request: ToolCallInput,
        beat: Heartbeat,
        policy: TimeoutPolicy,
        attempt: Attempt,
        progress: _Progress,
    ) -> mcp_types.CallToolResult:
        try:
            # In Temporal before the request exists: a crash from here on leaves "written", however long the
            # payload codec awaits (a beat of activity.heartbeat would be encoded later, in the background).
            await beat.confirm(Checkpoint("written"), _confirm_within(policy))
        except Exception as exc:
            logger.warning(
                "the checkpoint of a call to %r could not be recorded in Temporal", request.name, exc_info=True
            )
            raise CheckpointNotRecorded(  # (the codec's own text stays in the worker's log, out of history)
                f"the call's checkpoint could not be recorded in Temporal ({type(exc).__name__}); "
                "the request was not sent",
                may_have_run=False,
                method="tools/call",
            ) from exc
        left = attempt.left(request.maximum)  # the confirmation's time counts too
        if left is not None and left <= 0:
            raise _maximum_passed(request.maximum, method="tools/call", ran=False)
        policy = dataclasses.replace(policy, maximum=left)
        call = client.tool_call(request.name, request.arguments, timeout=policy, on_progress=beat.beat)
        async with anyio.create_task_group() as beats:
            beats.start_soon(beat.run)
            progress.sent = True
            call.start()
            try:
                reference = await call.handoff()
                if reference is not None:
                    progress.task = reference
                    await self._confirm_task(beat, reference, progress)
                result = await call.result()
            except anyio.get_cancelled_exc_class():
                lost_beat = _cancelled_by_the_sdk()
                await _stop(call, leave=_worker_leaving() and progress.resumable and not attempt.final())
                if lost_beat:  # the SDK could not record a beat and cancelled the activity: say so, typed
                    raise _beat_not_recorded(sent=True) from None
                raise
            finally:
                beats.cancel_scope.cancel()
        return result

    @staticmethod
    async def _confirm_task(beat: Heartbeat, reference: TaskReference, progress: _Progress) -> None:
        """Confirm the task's reference in Temporal; if that fails the call goes on in this attempt, and a task
        left behind by it is cancelled rather than counted on the next attempt."""
        try:
            await beat.confirm(Checkpoint("task", reference.to_dict()), _CONFIRM_WAIT)
        except Exception:
            logger.warning("the reference of task %s could not be recorded in Temporal", reference.task_id)
        else:
            progress.resumable = True

    async def _settle(self, client: Client, beat: Heartbeat, progress: _Progress, error: MCPClientError) -> None:
        """After a failed call: withdraw ``written`` when the request surely never left (the next attempt may send
        it), and cancel a task that nobody will resume. Best effort: what cannot be done leaves the safe record."""
        written = beat.checkpoint is not None and beat.checkpoint.phase == "written"
        if written and may_have_run(error) is Ran.NO:
            try:
                await beat.confirm(Checkpoint("unsent"), _CANCEL_WAIT)
            except Exception:
                logger.warning("a call that never left could not withdraw its checkpoint; it counts as sent")
        if progress.task is not None and not progress.resumable:
            with anyio.move_on_after(_CANCEL_WAIT, shield=True):
                try:
                    await client.cancel_task(progress.task.task_id)
                except MCPClientError:
                    logger.warning("task %s may be left running: its tasks/cancel failed", progress.task.task_id)

    async def _resume(
        self, client: Client, reference: TaskReference, last: Checkpoint, attempt: Attempt, request: ToolCallInput
    ) -> mcp_types.CallToolResult:
        left = attempt.left(request.maximum)
        if left is not None and left <= 0:  # the task may be running: it is cancelled, never abandoned
            with anyio.move_on_after(_CANCEL_WAIT, shield=True):
                try:
                    await client.cancel_task(reference.task_id)
                except MCPClientError:
                    logger.warning("task %s may be left running: its tasks/cancel failed", reference.task_id)
            raise _maximum_passed(request.maximum, method="tools/call", ran=True)
        policy = _policy(client, request.name, request.idle, left)
        beat = Heartbeat(activity.heartbeat, _heartbeat_timeout())
        beat.record(last)  # first beat of this attempt: the next attempt still finds the task
        async with anyio.create_task_group() as beats:
            beats.start_soon(beat.run)
            try:
                result = await client.resume(
                    reference, timeout=policy, leave_running=lambda: _worker_leaving() and not attempt.final()
                )
            finally:
                beats.cancel_scope.cancel()
        return result

    async def _connect(
        self,
        server: str,
        maximum: float | None,
        attempt: Attempt,
        *,
        method: str,
        ran_before: bool = False,
        cleanup: float = 0.0,
    ) -> Connection:
        """The worker's connection to ``server`` (started now if there is none), within what is left of the call's
        maximum: a start behind a slow server ends with the call's maximum, not the worker client's connect
        budget. ``ran_before``: an earlier attempt may have sent the call; ``cleanup``: seconds past the maximum
        the connection may still take, for the ``tasks/cancel`` of a task an earlier attempt left behind."""
        try:
            left = attempt.left(maximum)
            budget = math.inf if left is None else max(left, 0.0) + cleanup
            if budget <= 0:
                raise _maximum_passed(maximum, method=method, ran=ran_before)
            with anyio.move_on_after(budget):
                return await self.connections.get(server, activity.info().workflow_id)
            passed = MaxTimeout(
                "the call's maximum passed while the worker's connection to the server started"
                + (", after an earlier attempt may have sent it" if ran_before else ""),
                timeout=maximum,
                method=method,
            )
            passed.may_have_run = ran_before
            raise passed
        except (ConnectError, MaxTimeout) as exc:
            raise activity_failure(exc, idempotent=False, ran_before=ran_before) from exc

    def _after_failure(self, connection: Connection, error: MCPClientError) -> None:
        """A connection that failed may be broken: the next activity starts a new one."""
        if isinstance(error, ConnectError | TransportError) and not isinstance(error, WorkerLost):
            self.connections.discard(connection)


def _worker_leaving() -> bool:
    """Whether the activity is cancelled because this worker goes away or Temporal timed the attempt out (not
    because the workflow asked)."""
    details = activity.cancellation_details()
    return details is not None and (details.worker_shutdown or details.timed_out) and not details.cancel_requested


def _typed(exc: BaseException, *, sent: bool | None) -> MCPClientError | None:
    """The one typed error an activity fails with for ``exc``, or None to let ``exc`` through (the caller's own
    cancellation, a bug). A cancellation by the SDK itself (a beat it could not encode or record) is typed here,
    wherever it struck: left to end the activity, the SDK would report the codec's own error, its text included,
    to Temporal as a retryable failure with no ``may_have_run``. ``sent``: whether the call's request may have left
    (None: a read, which may have)."""
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return _beat_not_recorded(sent=sent) if _cancelled_by_the_sdk() else None
    return client_error(exc)


def _beat_not_recorded(*, sent: bool | None) -> CheckpointNotRecorded:
    if sent is None:
        outcome = "; the read was stopped"
    elif sent:
        outcome = " after the request was sent; the call was cancelled"
    else:
        outcome = " before the request was sent; it was not sent"
    return CheckpointNotRecorded(
        f"a heartbeat could not be recorded in Temporal{outcome}",
        may_have_run=sent,
        method=None if sent is None else "tools/call",
    )


def _cancelled_by_the_sdk() -> bool:
    """Whether the cancellation came from the worker's SDK itself, with no reason from the service: it does that
    when a heartbeat could not be encoded or recorded."""
    details = activity.cancellation_details()
    if details is None:
        return True
    reasons = (details.cancel_requested, details.worker_shutdown, details.timed_out, details.paused, details.reset)
    return not any(reasons) and not details.not_found


async def _stop(call: Call[Any], *, leave: bool) -> None:
    """End the call because the activity was cancelled: cancel it on the wire, or, when ``leave`` (the worker goes
    away and the next attempt will resume the task), leave its task running."""
    if leave:
        call.detach()
        call.stop("the worker is shutting down")
    else:
        call.cancel("the activity was cancelled")
    with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_WAIT):
        await call.wait()
