"""The session: request ids, the in-flight table, routing of what the server sends, and the timeout loop.

One :class:`Session` sits on one connection. :meth:`Session.request` runs one request from write to result under
a :class:`~mcp_client.TimeoutPolicy`, driving the sans-IO :class:`~mcp_client.policy.Deadline`: the awaiting task
sleeps until the deadline's next wake-up or until the answer lands, whichever is first, so progress never
reschedules a timer. When a request ends without its answer (timeout, cancel, the caller's task cancelled), it
leaves the table at once and its cancellation goes on the wire in the background, bounded, so the caller's error
is never delayed by it.

The reader side (:meth:`on_message` and friends, called from the transport's reader task) never blocks: responses
wake their waiter, progress is validated and handed to a latest-wins mailbox, anything for a request that already
ended becomes a ``LateMessage`` event and nothing else.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from mcp_client._batch import AfterBatch
from mcp_client._clock import running_clock, timer_lead
from mcp_client.errors import (
    Attempt,
    IdleTimeout,
    MaxTimeout,
    MCPClientError,
    ProtocolError,
    RequestCancelled,
    ServerError,
    TransportError,
)
from mcp_client.events import (
    CancelSent,
    Event,
    IdleTimerReset,
    LateMessage,
    ProgressAccepted,
    ProgressRejected,
    ProtocolViolation,
    RequestFinished,
    RequestSent,
    RetryScheduled,
    ServerNotification,
    ServerStderr,
    Slow,
    TimedOut,
    TransportFailure,
)
from mcp_client.inflight import CANCELLED, CallState, RequestControl, WireRequest
from mcp_client.input_rounds import InputHandler, answer_input_round, wants_input
from mcp_client.policy import (
    Deadline,
    Progress,
    ProgressTokens,
    ProgressVerdict,
    RequestIds,
    TimeoutKind,
    TimeoutPolicy,
)
from mcp_client.policy.retry import RetryBudget, RetryPolicy, decide
from mcp_client.progress import ProgressSink
from mcp_client.protocol.era import Era
from mcp_client.transports.base import Connection, JSONObject, RequestId

__all__ = ["InputHandler", "RequestControl", "Session"]

logger = logging.getLogger("mcp_client.session")

_INPUT_REQUEST_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})

_RECENT_LIMIT = 4096
_CALLER_SCOPE_GRACE = 0.05
"""Seconds to wait, once the caller's own deadline has come, for the caller's cancel scope to cancel us."""
_NOT_CANCELLABLE = frozenset({"initialize", "server/discover"})


class Session:
    """Requests and routing over one connection. Created and driven by :class:`~mcp_client.Client`."""

    def __init__(
        self,
        *,
        task_group: anyio.abc.TaskGroup,
        emit: Callable[[Event], None] | None = None,
        cancel_timeout: float = 5.0,
        input_handler: InputHandler | None = None,
        on_notification: Callable[[str, JSONObject], None] | None = None,
    ) -> None:
        self._task_group = task_group
        self._emit = emit
        self._cancel_timeout = cancel_timeout
        self._input_handler = input_handler
        self._on_notification_hook = on_notification
        self._ids = RequestIds()
        self._tokens = ProgressTokens()
        self._in_flight: dict[int, WireRequest] = {}
        self._by_token: dict[str, WireRequest] = {}
        self._recent: OrderedDict[int, float] = OrderedDict()
        self._recent_tokens: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._connection: Connection | None = None
        self._closed: TransportError | None = None
        self._cancels_pending = 0
        self._cancels_drained = anyio.Event()
        self._cancels_in_progress: dict[int, anyio.Event] = {}
        self._server_requests: dict[str, anyio.CancelScope] = {}
        self._now: Callable[[], float] = anyio.current_time
        self._timer_lead = 0.0
        self.era: Era | None = None
        self.after_batch = AfterBatch()
        """Work deferred until the messages read together have all been routed (sync progress callbacks)."""
        self.on_batch_begin = self.after_batch.open
        self.on_batch_end = self.after_batch.run

    # -- wiring ---------------------------------------------------------------------------------------------

    def attach(self, connection: Connection) -> None:
        """Use ``connection`` for every request from now on. Called inside the event loop."""
        self._connection = connection
        self._now = running_clock()
        self._timer_lead = timer_lead()

    def now(self) -> float:
        """The session's clock (the event loop's), as ``started_at`` of :meth:`request` takes it."""
        return self._now()

    @property
    def in_flight(self) -> int:
        """How many requests await their answer."""
        return len(self._in_flight)

    def emit(self, event: Event) -> None:
        """Hand an event to the host's hook; a failing hook is logged, never propagated."""
        if self._emit is None:
            return
        try:
            self._emit(event)
        except Exception:
            logger.exception("on_event hook failed on %r", event)

    async def drain_cancels(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until the cancellations scheduled so far have been written."""
        with anyio.move_on_after(timeout):
            while self._cancels_pending:
                self._cancels_drained = anyio.Event()
                await self._cancels_drained.wait()

    # -- calls ----------------------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JSONObject,
        *,
        policy: TimeoutPolicy,
        sink: ProgressSink | None = None,
        control: RequestControl | None = None,
        want_progress: bool = True,
        retry: RetryPolicy | None = None,
        idempotent: bool = False,
        budget: RetryBudget | None = None,
        max_rounds: int = 10,
        headers: dict[str, str] | None = None,
        started_at: float | None = None,
    ) -> JSONObject:
        """Run one call to its end and return its ``result`` object, or raise a typed error.

        A call may take several requests on the wire: retries of a failed attempt (when ``retry`` allows and it
        is safe), and rounds of input at 2026-07-28 (``input_required``). Each gets a fresh id and progress
        token; all share one maximum, one progress stream and one error history. The maximum counts from
        ``started_at`` (the caller's call, on :meth:`now`'s clock; default: now).

        Raises:
            IdleTimeout, MaxTimeout: a clock of ``policy`` ran out (the request is cancelled on the wire).
            RequestCancelled: ``control.cancel()`` was called.
            ServerError: the server answered with a JSON-RPC error.
            TransportError: the channel failed; ``written`` says whether the request may have left.
            ProtocolError: the answer was not a valid response.
        """
        if self._connection is None or self.era is None:
            raise RuntimeError("the session is not connected")
        now = self._now()
        started = now if started_at is None else min(started_at, now)
        deadline = Deadline(policy, started_at=started, caller_deadline=anyio.current_effective_deadline())
        call = CallState(method, deadline, sink, headers)
        if control is not None:
            control.attach(call)
        error: MCPClientError | None = None
        succeeded = False
        cancelled = False
        try:
            result = await self._drive(call, params, want_progress, retry, idempotent, budget, max_rounds)
            succeeded = True
            return result
        except MCPClientError as exc:
            now = self._now()
            error = exc.with_context(
                method=method,
                request_ids=tuple(call.request_ids),
                elapsed=call.deadline.elapsed(now),
                last_progress=call.tracker.last_delivered,
            )
            error.attempts = tuple(call.attempts) or (
                Attempt(_last(call.request_ids), error, call.deadline.started_at, now),
            )
            raise error from None
        except anyio.get_cancelled_exc_class():
            cancelled = True
            raise
        finally:
            call.deadline.finish()
            call.tracker.finish()
            if sink is not None:
                sink.close(drain=succeeded)
            if self._emit is not None:
                elapsed = call.deadline.elapsed(self._now())
                self.emit(RequestFinished(_last(call.request_ids), method, elapsed, error, cancelled))

    async def _drive(
        self,
        call: CallState,
        params: JSONObject,
        want_progress: bool,
        retry: RetryPolicy | None,
        idempotent: bool,
        budget: RetryBudget | None,
        max_rounds: int,
    ) -> JSONObject:
        attempt = 0
        rounds = 0
        round_params = params
        while True:
            attempt += 1
            started = self._now()
            try:
                result = await self._attempt(call, round_params, want_progress, attempt)
            except MCPClientError as exc:
                now = self._now()
                call.attempts.append(Attempt(_last(call.request_ids), exc, started, now))
                if retry is None or call.cancel_reason is not None or self._closed is not None:
                    raise  # (a connection that is gone will not come back for a retry)
                decision = decide(
                    exc,
                    policy=retry,
                    attempt=attempt,
                    idempotent=idempotent,
                    now=now,
                    hard_deadline=call.deadline.hard_deadline(now),
                    budget=budget,
                )
                if not decision.retry:
                    raise
                self.emit(RetryScheduled(_last(call.request_ids), attempt + 1, decision.delay, exc))
                await self._cancel_written(_last(call.request_ids))  # the abandoned attempt is cancelled first
                await self._wait_between_attempts(call, decision.delay)
                call.tracker.restart_attempt()
                continue
            if budget is not None:
                budget.record_success()
            if not wants_input(call.method, result, modern=self.era is not None and self.era.modern):
                return result
            rounds += 1
            if rounds > max_rounds:
                raise ProtocolError(f"{call.method}: the server asked for input more than {max_rounds} times")
            with self.waiting_on_a_person([call]):
                round_params = await answer_input_round(call, params, result, self._input_handler)
            call.tracker.restart_attempt()
            attempt = 0

    async def _attempt(self, call: CallState, params: JSONObject, want_progress: bool, attempt: int) -> JSONObject:
        connection = self._connection
        era = self.era
        assert connection is not None
        assert era is not None
        if call.cancel_reason is not None:
            raise RequestCancelled(f"{call.method} was cancelled: {call.cancel_reason}", reason=call.cancel_reason)
        if self._closed is not None:
            raise TransportError(self._closed.message, written=False)
        request_id = self._ids.allocate()
        policy = call.deadline.policy
        # A token whenever its progress matters: to reset idle, or for a consumer. Not only when a callback exists.
        wants_token = want_progress and (call.sink is not None or policy.idle is not None)
        token = self._tokens.allocate() if wants_token else None
        request = WireRequest(request_id, token, call)
        call.request_ids.append(request_id)
        call.current = request
        self._in_flight[request_id] = request
        if token is not None:
            self._by_token[token] = request
        try:
            # Built in the call, not kept in a local: the message is garbage once written, not held for the wait.
            await self._send(connection, request, _message(era, request, params), attempt)
            # The wait is inline, not a method of its own: one coroutine frame less per call in flight.
            deadline = call.deadline
            while True:
                now = self._now()
                if not request.settled:
                    wake = deadline.next_wakeup(now)
                    if wake - now > self._timer_lead:
                        await request.done.wait(wake - self._timer_lead)  # also woken by nudge() when clocks move
                        continue
                    if wake > now:
                        await anyio.lowlevel.checkpoint()  # the last stretch before a clock runs out (timer_lead)
                        continue
                if request.failure is not None:
                    raise request.failure
                if request.outcome is not None:
                    return self._unwrap(request)
                kind = self._clock_out(request, now)
                if kind is TimeoutKind.CALLER:
                    # The caller's own scope cancels us: give its timer the moment it may fire after ours (timers
                    # are set early here, and the loop's selector rounds). Past that, the scope is shielded from us.
                    await anyio.sleep(_CALLER_SCOPE_GRACE)
                    kind = TimeoutKind.MAXIMUM  # only reached if that scope was shielded from us: a hard stop anyway
                if kind is not None:
                    raise self._timed_out(request, kind, now)
        except anyio.get_cancelled_exc_class():
            # (A failed write reports for itself, in TransportError.written, whether anything left.)
            if request.written and request.outcome is None:
                self._abandon(request, "cancelled by the caller")
            elif request.outcome is not None and request.outcome is not CANCELLED:
                # The answer crossed the caller's cancellation: it came before this task resumed, and is dropped.
                self.emit(LateMessage(request.request_id, "response", None, request.outcome))
            raise
        finally:
            call.current = None
            self._forget(request)
            connection.release(request_id)

    async def _send(self, connection: Connection, request: WireRequest, message: JSONObject, attempt: int) -> None:
        """Write the request, bounded by the call's hard deadline (a server that stops reading cannot hold us)."""
        deadline = request.call.deadline
        if len(request.call.request_ids) > 1 or deadline.caller_deadline == -math.inf:
            # A caller cancelled before the write: nothing goes out. (Before a call's first write there was no
            # await since request() read the caller's scopes, where -inf says one was cancelled: no need to look.)
            await anyio.lowlevel.checkpoint_if_cancelled()
        if request.call.headers is None and connection.try_send_request(message):
            request.written = True
        else:
            with anyio.CancelScope(deadline=deadline.hard_deadline(self._now())):
                await connection.send_request(message, headers=request.call.headers)
                request.written = True
        if not request.written:
            # The write itself outlived the maximum: the request may be half-written, so it counts as written.
            await anyio.lowlevel.checkpoint()  # let the caller's own deadline, if that was it, cancel us
            self._abandon(request, "maximum timeout passed while sending")
            raise self._timeout(request, TimeoutKind.MAXIMUM, self._now())
        deadline.mark_sent(self._now())
        if self._emit is not None:
            ids = request.call.request_ids
            previous = ids[-2] if len(ids) > 1 else None
            target = _target_of(message.get("params"))
            self.emit(RequestSent(request.request_id, request.method, request.token, attempt, target, previous))

    def _clock_out(self, request: WireRequest, now: float) -> TimeoutKind | None:
        """Which clock of the call ran out at ``now``, if any; reports ``Slow`` the first time it applies."""
        deadline = request.call.deadline
        if deadline.take_slow(now):
            self.emit(Slow(request.request_id, request.method, deadline.elapsed(now)))
        return deadline.expired(now)

    def _timed_out(self, request: WireRequest, kind: TimeoutKind, now: float) -> MCPClientError:
        """Report the timeout, cancel the request on the wire (in the background) and return the error to raise."""
        deadline = request.call.deadline
        if self._emit is not None:
            self.emit(TimedOut(request.request_id, request.method, kind, deadline.elapsed(now)))
        self._abandon(request, _timeout_reason(kind, deadline.policy))
        return self._timeout(request, kind, now)

    def _unwrap(self, request: WireRequest) -> JSONObject:
        outcome = request.outcome
        assert outcome is not None
        if outcome is CANCELLED:
            reason = request.call.cancel_reason or "cancelled by the client"
            self._abandon(request, reason)
            raise RequestCancelled(f"{request.method} was cancelled: {reason}", reason=reason)
        if "error" in outcome:
            error = outcome["error"]
            if not isinstance(error, dict):
                raise ProtocolError(f"{request.method}: the error member of the response is not an object")
            raise ServerError.from_error(error)
        result = outcome.get("result")
        if not isinstance(result, dict):
            raise ProtocolError(f"{request.method}: the response has no result object")
        return result

    def _timeout(self, request: WireRequest, kind: TimeoutKind, now: float) -> MCPClientError:
        policy = request.call.deadline.policy
        if kind is TimeoutKind.IDLE:
            return IdleTimeout(
                f"{request.method}: no sign of life from the server for {policy.idle:g} s", timeout=policy.idle
            )
        limit = policy.maximum if policy.maximum is not None else request.call.deadline.elapsed(now)
        return MaxTimeout(f"{request.method}: the {limit:g} s maximum passed", timeout=limit)

    async def _wait_between_attempts(self, call: CallState, delay: float) -> None:
        """Back off before a retry; a cancel through the call's control ends the wait (and the call)."""
        with anyio.move_on_after(delay):
            await call.cancelled.wait()
        if call.cancel_reason is not None:
            raise RequestCancelled(f"{call.method} was cancelled: {call.cancel_reason}", reason=call.cancel_reason)

    # -- waiting on a person ----------------------------------------------------------------------------------

    @contextmanager
    def waiting_on_a_person(self, calls: list[CallState] | None = None) -> Iterator[None]:
        """Stop the idle clock (and the maximum, if the policy says so) of ``calls`` (default: every call in flight)
        while the host asks a person something; restart them after."""
        targets = calls if calls is not None else list({r.call for r in self._in_flight.values()})
        now = self._now()
        for call in targets:
            call.deadline.pause(now)
        try:
            yield
        finally:
            now = self._now()
            for call in targets:
                call.deadline.resume(now)
                call.nudge()

    # -- ending requests ------------------------------------------------------------------------------------

    def _forget(self, request: WireRequest) -> None:
        """Take the request out of the tables (idempotent); from now on anything for it is late."""
        now = self._now()
        if self._in_flight.pop(request.request_id, None) is not None:
            _remember(self._recent, request.request_id, now)
        if request.token is not None and self._by_token.pop(request.token, None) is not None:
            _remember(self._recent_tokens, request.token, (request.request_id, now))

    def _abandon(self, request: WireRequest, reason: str) -> None:
        """The request ends without its answer: stop routing to it and cancel it on the wire, at once if that
        cannot block (a stdio line), else in the background."""
        self._forget(request)
        if request.method in _NOT_CANCELLABLE or self._connection is None or self._closed is not None:
            return
        modern = self.era is not None and self.era.modern
        try:  # a line that fits in the pipe goes now, before the caller even sees the error
            how = self._connection.try_cancel(request.request_id, reason, modern=modern)
        except TransportError as exc:
            logger.debug("could not cancel request %s: %s", request.request_id, exc)
            return
        if how is not None:
            self.emit(CancelSent(request.request_id, how, reason))
            return
        self._cancels_pending += 1
        self._cancels_in_progress[request.request_id] = anyio.Event()
        self._task_group.start_soon(self._send_cancel, self._connection, request.request_id, reason)

    async def _send_cancel(self, connection: Connection, request_id: int, reason: str) -> None:
        modern = self.era is not None and self.era.modern
        try:
            with anyio.move_on_after(self._cancel_timeout):
                try:
                    how = await connection.cancel(request_id, reason, modern=modern)
                except TransportError as exc:
                    logger.debug("could not cancel request %s: %s", request_id, exc)
                    return
                self.emit(CancelSent(request_id, how, reason))
        finally:
            self._cancels_in_progress.pop(request_id, anyio.Event()).set()
            self._cancels_pending -= 1
            if not self._cancels_pending:
                self._cancels_drained.set()

    async def _cancel_written(self, request_id: int) -> None:
        """Wait until the cancellation of ``request_id`` (if one is under way) has been written, bounded."""
        written = self._cancels_in_progress.get(request_id)
        if written is not None:
            with anyio.move_on_after(self._cancel_timeout):
                await written.wait()

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification (best effort: a transport failure raises :class:`TransportError`)."""
        if self._connection is None:
            raise RuntimeError("the session is not connected")
        message: JSONObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._connection.send_notification(message)

    # -- what the reader hands us ----------------------------------------------------------------------------

    def on_message(self, message: JSONObject) -> None:
        """Route one message from the server. Never blocks, never raises."""
        if "id" in message and "method" not in message:
            self._on_response(message)
        elif "method" in message:
            method = message["method"]
            params = message.get("params")
            if not isinstance(method, str) or (params is not None and not isinstance(params, dict)):
                self.emit(ProtocolViolation("a message with an invalid method or params", message))
            elif "id" in message:
                self._on_server_request(message["id"], method, params or {})
            elif method == "notifications/progress":
                self._on_progress(params or {}, message)
            else:
                self._on_notification(method, params or {})
        else:
            self.emit(ProtocolViolation("neither a response, a request nor a notification", message))

    def _on_response(self, message: JSONObject) -> None:
        raw_id = message["id"]
        request_id = _as_int_id(raw_id)
        request = self._in_flight.get(request_id) if request_id is not None else None
        if request is None:
            self._late_or_unknown(raw_id, request_id, message)
            return
        if request.settled:
            # It ended (cancelled through its handle) before its task resumed to take it out of the tables.
            self._forget(request)
            self.emit(LateMessage(request.request_id, "response", None, message))
            return
        if "result" not in message and "error" not in message:
            request.settle({}, ProtocolError(f"{request.method}: a response with neither result nor error"))
        else:
            request.settle(message)
        # Forget it now, not when its waiter next runs: a duplicate answer or progress arriving in between is late.
        self._forget(request)

    def _late_or_unknown(self, raw_id: object, request_id: int | None, message: JSONObject) -> None:
        if request_id is not None and self._ids.was_issued(request_id):
            ended = self._recent.get(request_id)
            late_by = self._now() - ended if ended is not None else None
            logger.debug("dropping a late response to request %s", raw_id)
            self.emit(LateMessage(request_id, "response", late_by, message))
        elif raw_id is None and "error" in message:
            # An error the server could not attribute (it could not read our id): nothing to fail, report it.
            self.emit(ProtocolViolation("an error response without an id", message))
        else:
            self.emit(ProtocolViolation(f"a response to request id {raw_id!r}, which was never sent", message))

    def _on_progress(self, params: JSONObject, message: JSONObject) -> None:
        token = params.get("progressToken")
        value = params.get("progress")
        request = self._by_token.get(token) if isinstance(token, str) else None
        if request is None:
            remembered = self._recent_tokens.get(token) if isinstance(token, str) else None
            if remembered is not None:
                request_id, ended = remembered
                self.emit(LateMessage(request_id, "progress", self._now() - ended, message))
            else:
                self.emit(ProgressRejected(None, token, value, "unknown progress token"))
            return
        call = request.call
        verdict, deliver = call.tracker.accept(value)
        now = self._now()
        if verdict is not ProgressVerdict.ACCEPTED:
            self.emit(ProgressRejected(request.request_id, token, value, verdict.value))
            if call.deadline.policy.reset_on_any_message:
                call.deadline.sign_of_life(now)
            return
        if call.deadline.sign_of_life(now) and self._emit is not None:
            self.emit(IdleTimerReset(request.request_id, call.deadline.idle_at(now)))
        total = params.get("total")
        note = params.get("message")
        update = Progress(
            float(value),  # type: ignore[arg-type]
            _finite_or_none(total),
            note if isinstance(note, str) else None,
        )
        if deliver and call.sink is not None:
            call.sink.offer(update)
        if self._emit is not None:
            self.emit(ProgressAccepted(request.request_id, update, deliver))

    def _on_notification(self, method: str, params: JSONObject) -> None:
        if method == "notifications/cancelled":
            # 2025-11-25: the server withdraws a request it made of us (an elicitation the user has not answered).
            scope = self._server_requests.get(_request_key(params.get("requestId")))
            if scope is not None:
                scope.cancel()
        if method == "notifications/message":
            logger.log(_log_level(params.get("level")), "server log: %s", params.get("data"))
        if self._on_notification_hook is not None:
            self._on_notification_hook(method, params)
        self.emit(ServerNotification(method, params))

    def _on_server_request(self, request_id: Any, method: str, params: JSONObject) -> None:
        if self.era is not None and self.era.modern:
            # At 2026-07-28 servers must not send requests and clients never send responses.
            self.emit(ProtocolViolation(f"a {method!r} request from a 2026-07-28 server", None))
            return
        self._task_group.start_soon(self._answer_server_request, request_id, method, params)

    async def _answer_server_request(self, request_id: Any, method: str, params: JSONObject) -> None:
        response: JSONObject = {"jsonrpc": "2.0", "id": request_id}
        if method == "ping":
            response["result"] = {}
        elif self._input_handler is None or method not in _INPUT_REQUEST_METHODS:
            response["error"] = {"code": -32601, "message": f"the client does not handle {method}"}
        else:
            key = _request_key(request_id)
            with anyio.CancelScope() as scope:
                self._server_requests[key] = scope
                try:
                    with self.waiting_on_a_person():
                        response["result"] = await self._input_handler(method, params)
                except ServerError as exc:
                    response["error"] = {"code": exc.code, "message": exc.message}
                except Exception:
                    logger.exception("handler for the server's %s request failed", method)
                    response["error"] = {"code": -32603, "message": "the client failed to handle the request"}
                finally:
                    self._server_requests.pop(key, None)
            if scope.cancelled_caught:
                return  # the server cancelled its request: it expects no response
        if self._connection is not None:
            with anyio.move_on_after(self._cancel_timeout):
                try:
                    await self._connection.send_response(response)
                except TransportError as exc:
                    logger.debug("could not answer the server's %s: %s", method, exc)

    def on_invalid(self, detail: str, raw: bytes | None, request_id: RequestId | None) -> None:
        """A line that is not a message: report it; fail its request when it can be attributed to one."""
        logger.debug("invalid message from the server: %s", detail)
        self.emit(ProtocolViolation(detail, raw))
        key = _as_int_id(request_id) if request_id is not None else None
        request = self._in_flight.get(key) if key is not None else None
        if request is not None:
            request.settle({}, ProtocolError(f"{request.method}: the response could not be read: {detail}"))
            self._forget(request)

    def on_request_failed(self, request_id: RequestId, error: MCPClientError) -> None:
        """One request failed on its own channel (HTTP): that request fails, nothing else."""
        key = _as_int_id(request_id)
        request = self._in_flight.get(key) if key is not None else None
        if isinstance(error, TransportError):
            self.emit(TransportFailure(request_id, error))
        if request is not None:
            request.settle({}, error)
            self._forget(request)

    def on_closed(self, error: TransportError) -> None:
        """The shared channel is gone: every request in flight fails now, each with the same typed error."""
        if self._closed is not None:
            return
        self._closed = error
        self.emit(TransportFailure(None, error))
        for request in list(self._in_flight.values()):
            request.settle({}, TransportError(error.message, written=True))

    def on_stderr(self, line: str) -> None:
        """A line from the server's stderr (stdio)."""
        self.emit(ServerStderr(line))

    @property
    def closed_error(self) -> TransportError | None:
        """Why the connection is gone, once it is."""
        return self._closed


def _last(request_ids: list[int]) -> int:
    return request_ids[-1] if request_ids else 0


def _remember(table: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    table[key] = value
    if len(table) > _RECENT_LIMIT:
        table.popitem(last=False)


def _as_int_id(raw: object) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) <= 18:
        return int(raw)
    return None


def _target_of(params: object) -> str | None:
    """What a request is about: a tool or prompt name, a resource URI (for events and tracing)."""
    if not isinstance(params, dict):
        return None
    target = params.get("name", params.get("uri"))
    return target if isinstance(target, str) else None


def _request_key(raw: object) -> str:
    """A server's request id as a dict key: ids 7 and "7" are the same request."""
    return str(raw)


def _finite_or_none(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _message(era: Era, request: WireRequest, params: JSONObject) -> JSONObject:
    """The JSON-RPC request for ``request``: a copy of ``params`` stamped with the era's ``_meta`` and the token."""
    stamped = era.stamp(dict(params), request.token)
    return {"jsonrpc": "2.0", "id": request.request_id, "method": request.method, "params": stamped}


def _timeout_reason(kind: TimeoutKind, policy: TimeoutPolicy) -> str:
    if kind is TimeoutKind.IDLE:
        return f"idle timeout: no progress for {policy.idle:g} s"
    if policy.maximum is not None and kind is TimeoutKind.MAXIMUM:
        return f"maximum timeout of {policy.maximum:g} s passed"
    return "the caller's deadline passed"


def _log_level(level: object) -> int:
    levels = {
        "debug": logging.DEBUG,
        "info": logging.INFO,
        "notice": logging.INFO,
        "warning": logging.WARNING,
        "error": logging.ERROR,
        "critical": logging.CRITICAL,
        "alert": logging.CRITICAL,
        "emergency": logging.CRITICAL,
    }
    return levels.get(level, logging.INFO) if isinstance(level, str) else logging.INFO
