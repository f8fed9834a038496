"""The runner: the whole life of one call, from the caller's ``await`` to its result or typed error.

One :class:`CallRunner` per client runs every call (``Client.call_tool``, ``Client.request``, the ``tool_call``
handle, the handshake). For each it owns:

* the call's one :class:`~mcp_client.policy.Deadline`, created here from the caller's start time and enclosing
  deadline, read by everything else (the write's bound, the wait, retries, input rounds, the progress drain);
* the attempts and their retries, in one loop: :func:`~mcp_client.policy.retry.decide` alone says whether an
  attempt that failed is sent again, and where: on the same session after a backoff, or, when the connection died
  and its owner replaces it (a supervised stdio server's restart), on the next one; and the input rounds of
  2026-07-28;
* closing the call's progress sink, once, when the call ends (whatever sessions it ran on);
* progress delivery (:mod:`.delivery`): which sink the reader offers updates to, and the pump a callback needs;
* the renewal of a 2025-11-25 session the server ended, through the owner of the connection, once per call;
* the wait for a slot when the client limits its calls in flight (:mod:`.in_flight_limit`), inside the one maximum.

Each request on the wire is one attempt (:mod:`.attempt`); the session hands out its id and token and routes its
answer. The runner's ``session`` is written by the owner of the connection alone (the client's
:class:`~mcp_client.client.link.Link`), which the runner asks what it needs through :class:`ConnectionOwner`. May
touch the session, the policy core, progress sinks and the errors and events; never a transport.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

import anyio

from mcp_client._types import JSONObject
from mcp_client.calls.attempt import run_attempt
from mcp_client.calls.delivery import progress_delivery
from mcp_client.calls.in_flight_limit import Held, InFlightLimit
from mcp_client.calls.input_rounds import answer_input_round, wants_input
from mcp_client.calls.options import CallOptions
from mcp_client.calls.progress import CallbackPump, ProgressCallback, ProgressSink
from mcp_client.errors import (
    Attempt,
    MaxTimeout,
    MCPClientError,
    ProtocolError,
    RequestCancelled,
    SessionExpired,
    TransportError,
)
from mcp_client.events import RequestFinished, RetryScheduled
from mcp_client.policy import Deadline, TimeoutPolicy
from mcp_client.policy.retry import RetryBudget, decide
from mcp_client.protocol.era import Era
from mcp_client.session.handlers import InputHandler
from mcp_client.session.inflight import CallState, RequestControl
from mcp_client.session.session import Session

__all__ = ["CallRunner", "ConnectionOwner", "Then"]

Then = Callable[[CallState, JSONObject, JSONObject], Awaitable[JSONObject]]
"""What a call goes on with after its first answer, as the same call (its deadline, control, events and end):
given the call, its params and that answer, it returns the call's result. The task phase of a task-backed tool
call."""


class ConnectionOwner(Protocol):
    """What a runner asks of the one owner of its connection (the client's :class:`~mcp_client.client.link.Link`),
    which alone writes the runner's ``session``."""

    @property
    def heals(self) -> bool:
        """Whether a connection that died is replaced now (a supervised stdio server that will be restarted)."""
        ...

    async def session_after(self, session: Session) -> Session | None:
        """Wait until a session other than ``session`` serves and return it; None once none will."""
        ...

    async def renew(self) -> None:
        """Start a new session after the server ended ours (``SessionExpired``); concurrent calls share one."""
        ...


class CallRunner:
    """Runs the calls of one client over its current session. Created by the client's
    :class:`~mcp_client.client.link.Link` (its ``owner``), which alone moves it to a new session."""

    def __init__(
        self,
        session: Session,
        *,
        budget: RetryBudget | None = None,
        max_rounds: int = 10,
        progress_interval: float | None = None,
        input_handler: InputHandler | None = None,
        in_flight_limit: InFlightLimit | None = None,
        owner: ConnectionOwner | None = None,
    ) -> None:
        self.session = session
        """The session calls start on: the owner's current one (it alone writes this)."""
        self.in_flight_limit = in_flight_limit
        self.renewal: anyio.Event | None = None
        """Set by the owner while it renews the session (set when the renewal ended): a call waits for it before
        its first write, inside its maximum, rather than go out on a session that has none."""
        """The client's limit of calls in flight, if it has one (a session renewal and a restart keep it)."""
        self._budget = budget
        self._max_rounds = max_rounds
        self._progress_interval = progress_interval
        self._input_handler = input_handler
        self._owner = owner

    @property
    def heals(self) -> bool:
        """Whether a connection that died is replaced (a supervised stdio server's restart)."""
        return self._owner is not None and self._owner.heals

    async def session_after(self, session: Session) -> Session | None:
        """The session that replaces ``session`` once it serves, or None when none will."""
        return await self._owner.session_after(session) if self._owner is not None else None

    def run(
        self,
        method: str,
        params: JSONObject,
        options: CallOptions,
        *,
        started_at: float | None = None,
        on_progress: ProgressCallback | None = None,
        sink: ProgressSink | None = None,
        control: RequestControl | None = None,
        then: Then | None = None,
    ) -> Awaitable[JSONObject]:
        """Run one call to its end and return its ``result`` object, or raise a typed error (await what this
        returns, at once: the call's clocks start here).

        ``options`` (:class:`~mcp_client.calls.options.CallOptions`) are the call's policies, decided by the caller.
        A call may take several requests on the wire: retries of a failed attempt (when ``options.retry`` allows and
        it is safe), rounds of input at 2026-07-28 (``input_required``), and one more try after the runner's renewal
        started a new session (when ``options.renews``). Each gets a fresh id and progress token; all share one
        maximum, counted from ``started_at`` (the caller's call, on the session's clock; default: now), and one
        progress stream. Accepted progress goes to ``on_progress`` and to ``sink`` (the handle's iterator);
        ``control`` lets another task cancel the call.
        ``then`` goes on after the first answer, as the same call (a task-backed tool call's polls): one deadline,
        one ``RequestFinished``, the progress stream open until it ends.

        Raises:
            IdleTimeout, MaxTimeout: a clock of ``policy`` ran out (the request is cancelled on the wire).
            RequestCancelled: ``control.cancel()`` was called.
            ServerError: the server answered with a JSON-RPC error.
            TransportError: the channel failed; ``written`` says whether the request may have left.
            ProtocolError: the answer was not a valid response.
        """
        # (A plain function that hands back the one coroutine of the call: a call in flight holds little more than
        # its frames, so the runner's whole life of a call is one frame, _live, with as few locals as can be.)
        if not self.session.connected:
            raise RuntimeError("the session is not connected")
        deadline = self._deadline(options.policy, started_at)  # (read here, on the caller's task, before any await)
        pump = None
        if on_progress is not None:
            sink, pump = progress_delivery(on_progress, sink, self._progress_interval, self.session.after_batch)
        if pump is None:
            return self._live(method, params, options, deadline, sink, control, then)
        # (the pump's frame takes the slot, for _live to give back when the request was answered)
        held = Held(None)
        call = self._live(method, params, options, deadline, sink, control, then, held)
        return self._beside_pump(pump, method, deadline, control, call, held)

    def _deadline(self, policy: TimeoutPolicy, started_at: float | None) -> Deadline:
        """The call's clocks: its maximum counts from ``started_at`` (never later than now), capped by the caller's
        own enclosing deadline."""
        now = self.session.clock()
        started = now if started_at is None else min(started_at, now)
        return Deadline(policy, started_at=started, caller_deadline=anyio.current_effective_deadline())

    async def _beside_pump(
        self,
        pump: CallbackPump,
        method: str,
        deadline: Deadline,
        control: RequestControl | None,
        call: Coroutine[Any, Any, JSONObject],
        held: Held,
    ) -> JSONObject:
        """``call`` (:meth:`_live` with ``held``) with a progress callback that needs a task of its own: the pump
        runs beside the call, which takes its slot here (``held``; :meth:`_live` gives it back when the request was
        answered, while the callback may still drain its last update)."""
        try:
            held.limit = await self._enter_slot(method, deadline, control)
        except BaseException:
            call.close()  # never started: nothing to unwind, but it must not be left unawaited
            raise
        try:
            error: MCPClientError | None = None
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(pump.run)
                try:
                    result = await call
                except MCPClientError as exc:  # raised below, outside the task group, so it is not wrapped in a group
                    error = exc
                # A slow callback may finish its last update, but never past the call's hard deadline.
                pump.finish(succeeded=error is None, deadline=deadline.hard_deadline(self.session.clock()))
            if error is not None:
                raise error
            return result
        finally:
            held.leave()

    async def _enter_slot(
        self, method: str, deadline: Deadline, control: RequestControl | None, *, first: bool = False
    ) -> InFlightLimit | None:
        """A counted call waits for a slot first, inside its maximum (:mod:`.in_flight_limit`); returns the limit it
        entered (to leave when its request was answered), or None when the call is not counted. ``first``: the call
        held a slot already and must be sent again: it keeps its place, at the head of the line."""
        limit = self.in_flight_limit
        if limit is None or not InFlightLimit.counts(method):
            return None
        if not limit.try_enter(first=first):
            await limit.wait_for_turn(method, deadline, control, self.session, first=first)
        return limit

    async def _live(
        self,
        method: str,
        params: JSONObject,
        options: CallOptions,
        deadline: Deadline,
        sink: ProgressSink | None,
        control: RequestControl | None,
        then: Then | None,
        held: Held | None = None,
    ) -> JSONObject:
        """The call: a slot if the client limits its calls in flight, its attempts and input rounds on this session
        (then what it goes on with, ``then``), and once more on a new session if the server ended ours before it
        saw the call. ``held``: the slot the caller took for the call (None: the call takes its own). The slot is
        given back once the request was answered, before ``then`` (a task's life holds none)."""
        session = self.session
        if held is None and self.in_flight_limit is not None:
            held = Held(await self._enter_slot(method, deadline, control))
        try:
            renewed = False
            while True:
                call = CallState(method, deadline, sink, options.headers)
                if control is not None:
                    control.attach(call)
                error: MCPClientError | None = None
                succeeded = cancelled = renewing = False
                try:
                    if self.renewal is not None and options.renews:  # (the renewal's own handshake goes on)
                        # The owner is starting a new session: there is none to send on until it has.
                        session = await self._after_renewal(self.renewal, call)
                    # The attempts and input rounds (inline, not a coroutine of their own: one frame less per call).
                    attempt = rounds = 0
                    round_params = params
                    while True:
                        attempt += 1
                        started = session.clock()
                        if options.before_send is not None:
                            options.before_send()  # (it may refuse the send: nothing of this attempt is written)
                        try:
                            result = await run_attempt(session, call, round_params, options.want_progress, attempt)
                        except MCPClientError as exc:
                            # The one retry loop: the same session, the next one, or the error raised.
                            session = await self._before_retry(session, call, exc, started, attempt, options)
                            continue
                        if self._budget is not None:
                            self._budget.record_success()
                        if not wants_input(method, result, allowed=session.input_rounds):
                            if held is not None:  # answered: the slot goes back (a task's life holds none)
                                held.leave()
                            if then is not None:
                                try:
                                    result = await then(call, params, result)
                                except MCPClientError as exc:
                                    if session.closed_error is None:
                                        raise
                                    # The connection died in the call's task phase: the call itself may go to the
                                    # next one, sent again from its start (when the retry rule allows it), in a
                                    # slot again, taken at the head of the line (it keeps its place).
                                    session = await self._before_retry(session, call, exc, started, attempt, options)
                                    if held is not None:
                                        held.limit = await self._enter_slot(method, deadline, control, first=True)
                                    round_params, rounds = params, 0
                                    continue
                            succeeded = True
                            return result
                        rounds += 1
                        if rounds > self._max_rounds:
                            raise ProtocolError(
                                f"{method}: the server asked for input more than {self._max_rounds} times"
                            )
                        with session.waiting_on_a_person([call]):
                            round_params = await answer_input_round(call, params, result, self._input_handler)
                        call.tracker.restart_attempt()
                        attempt = 0
                except MCPClientError as exc:
                    now = session.clock()
                    error = exc.with_context(
                        method=method,
                        request_ids=tuple(call.request_ids),
                        elapsed=deadline.elapsed(now),
                        last_progress=call.tracker.last_delivered,
                    )
                    if error.may_have_run is None:
                        error.may_have_run = call.may_have_run
                    error.attempts = call.attempts or (
                        Attempt(_last(call.request_ids), error, deadline.started_at, now),
                    )
                    # (Never when the call may have run: a task's poll that met the ended session, say.)
                    renewing = isinstance(exc, SessionExpired) and options.renews and not renewed
                    renewing = renewing and not error.may_have_run
                    if not renewing:
                        raise error from None
                except anyio.get_cancelled_exc_class():
                    cancelled = True
                    raise
                finally:
                    call.tracker.finish()
                    if sink is not None and not renewing:
                        sink.close(drain=succeeded)
                    if session.observed:
                        elapsed = deadline.elapsed(session.clock())
                        session.emit(RequestFinished(_last(call.request_ids), method, elapsed, error, cancelled))
                # The server ended our 2025-11-25 session before it saw the request: a new session, then once more.
                assert self._owner is not None, "a call that renews needs a runner with an owner that renews"
                # The renewal (and the wait for another call's) counts against the call's one maximum: a renewal
                # that comes too late leaves the original error (the call surely never ran).
                try:
                    renewed = await _unless_cancelled(call, deadline.hard_deadline(session.clock()), self._owner.renew)
                except MCPClientError:  # (its control cancelled the call, or the renewal failed: it never ran)
                    if sink is not None:
                        sink.close(drain=False)
                    raise
                if not renewed:
                    assert error is not None  # (renewing: the call's error)
                    if sink is not None:
                        sink.close(drain=False)
                    raise error from None
        finally:
            deadline.finish()
            if held is not None:
                held.leave()

    async def _after_renewal(self, renewal: anyio.Event, call: CallState) -> Session:
        """Wait for the owner's renewal under way, until the call's maximum (the caller's own deadline cancels the
        wait the anyio way) or its cancel; return the session to send on, or raise ``MaxTimeout`` or
        ``RequestCancelled`` (nothing was sent)."""
        deadline = call.deadline
        if not await _unless_cancelled(call, deadline.maximum_at(self.session.clock()), renewal.wait):
            limit = deadline.policy.maximum or deadline.elapsed(self.session.clock())
            raise MaxTimeout(
                f"{call.method}: the {limit:g} s maximum passed while the session was being renewed; it was never sent",
                timeout=limit,
            )
        return self.session

    async def _before_retry(
        self,
        session: Session,
        call: CallState,
        error: MCPClientError,
        started: float,
        attempt: int,
        options: CallOptions,
    ) -> Session:
        """Attempt ``attempt`` of ``call`` on ``session`` failed with ``error``: record it, then raise ``error`` (no
        retry: not allowed, not safe, no time left, the call cancelled, or the connection gone for good), or return
        the session of the next attempt: this one, after a backoff and the abandoned attempt's cancel on the wire;
        or, when the connection died and its owner replaces it, the next one once it serves (the restart is the
        wait; nothing to cancel on a dead connection)."""
        now = session.clock()
        call.attempts += (Attempt(_last(call.request_ids), error, started, now),)
        retry = options.retry
        if retry is None or call.cancel_reason is not None:
            raise error
        moving = session.closed_error is not None
        if moving:
            if not (isinstance(error, TransportError) and self.heals):
                raise error  # (a connection that is gone comes back only when its owner replaces it)
            if error.may_have_run is None:  # (a request of the call's task phase: the call's own fact decides)
                error.may_have_run = call.may_have_run
        decision = decide(
            error,
            policy=retry,
            attempt=attempt,
            idempotent=options.idempotent,
            now=now,
            hard_deadline=call.deadline.hard_deadline(now),
            budget=self._budget,
        )
        if not decision.retry:
            raise error
        if moving:
            next_session = await self._next_session(session, call, call.deadline.hard_deadline(now))
            if next_session is None:
                raise error  # none will serve (the owner gave up, or the client closes), or not before the maximum
            next_session.emit(RetryScheduled(_last(call.request_ids), attempt + 1, 0.0, error))
            call.tracker.restart_attempt()
            return next_session
        session.emit(RetryScheduled(_last(call.request_ids), attempt + 1, decision.delay, error))
        await session.cancel_written(_last(call.request_ids))  # the abandoned attempt is cancelled first
        await _wait_between_attempts(call, decision.delay)
        call.tracker.restart_attempt()
        return session

    async def _next_session(self, dead: Session, call: CallState, hard_deadline: float) -> Session | None:
        """The session that replaced ``dead``, once it serves; None if none does before ``hard_deadline``. A cancel
        through the call's control ends the wait (``RequestCancelled``)."""
        found: list[Session | None] = [None]

        async def next_one() -> None:
            found[0] = await self.session_after(dead)

        await _unless_cancelled(call, hard_deadline, next_one)
        return found[0]

    # -- the handshake (protocol.negotiate.Handshake) -----------------------------------------------------------

    async def request(
        self, method: str, params: JSONObject, *, policy: TimeoutPolicy, want_progress: bool = True
    ) -> JSONObject:
        """Run one request with no retries, progress consumer or renewal (the handshake's requests)."""
        return await self.run(method, params, CallOptions(policy, want_progress=want_progress))

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification (best effort: a transport failure raises :class:`~mcp_client.TransportError`)."""
        await self.session.notify(method, params)

    def use_era(self, era: Era) -> None:
        """Speak ``era`` from now on (the session keeps it)."""
        self.session.use_era(era)


async def _unless_cancelled(call: CallState, until: float, wait: Callable[[], Awaitable[None]]) -> bool:
    """Await ``wait()`` until ``until``: True if it ended, False if the time came first. A cancel through the
    call's control ends the wait (and the call, with ``RequestCancelled``); an error of ``wait`` is raised as it
    is, never in a group."""
    failure: MCPClientError | None = None
    ended = False
    with anyio.move_on_at(until):
        async with anyio.create_task_group() as task_group:

            async def on_cancel() -> None:
                await call.cancelled.wait()
                task_group.cancel_scope.cancel()

            task_group.start_soon(on_cancel)
            try:
                await wait()
                ended = True
            except MCPClientError as exc:
                failure = exc
            task_group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if not ended and call.cancel_reason is not None:
        # (what it waited for is a new connection: the last request went to one that is gone, so no cancel went out)
        error = RequestCancelled(
            f"{call.method} was cancelled: {call.cancel_reason}", reason=call.cancel_reason, cancel_sent=False
        )
        error.may_have_run = call.may_have_run
        raise error
    return ended


async def _wait_between_attempts(call: CallState, delay: float) -> None:
    """Back off before a retry; a cancel through the call's control ends the wait (and the call)."""
    with anyio.move_on_after(delay):
        await call.cancelled.wait()
    if call.cancel_reason is not None:
        raise RequestCancelled(f"{call.method} was cancelled: {call.cancel_reason}", reason=call.cancel_reason)


def _last(request_ids: list[int]) -> int:
    return request_ids[-1] if request_ids else 0
