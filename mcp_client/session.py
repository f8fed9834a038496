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
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from mcp_client.errors import (
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
    ServerNotification,
    ServerStderr,
    Slow,
    TimedOut,
    TransportFailure,
)
from mcp_client.policy import (
    Deadline,
    Progress,
    ProgressTokens,
    ProgressTracker,
    ProgressVerdict,
    RequestIds,
    TimeoutKind,
    TimeoutPolicy,
)
from mcp_client.progress import ProgressSink
from mcp_client.protocol.era import Era
from mcp_client.transports.base import Connection, JSONObject, RequestId

__all__ = ["RequestControl", "ServerRequestHandler", "Session"]

logger = logging.getLogger("mcp_client.session")

ServerRequestHandler = Callable[[str, JSONObject], Awaitable[JSONObject]]
"""Answers a server-initiated request (2025-11-25): ``(method, params) -> result``; raise ServerError to refuse."""

_RECENT_LIMIT = 4096
_NOT_CANCELLABLE = frozenset({"initialize", "server/discover"})


class RequestControl:
    """Lets someone other than the awaiting task end a request early (the ``Call`` handle's ``cancel``)."""

    __slots__ = ("_request", "reason")

    def __init__(self) -> None:
        self.reason: str | None = None
        self._request: _Request | None = None

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self.reason is not None

    def cancel(self, reason: str = "cancelled by the client") -> None:
        """End the request with :class:`~mcp_client.RequestCancelled`; the server is told. Idempotent."""
        if self.reason is not None:
            return
        self.reason = reason
        if self._request is not None:
            self._request.cancel(reason)

    def _attach(self, request: _Request) -> None:
        self._request = request
        if self.reason is not None:
            request.cancel(self.reason)


_CANCELLED: JSONObject = {}
"""Sentinel outcome: the request was cancelled through its control."""


class _Request:
    """One request on the wire, as the session tracks it while it is in flight."""

    __slots__ = (
        "cancel_reason",
        "deadline",
        "done",
        "failure",
        "method",
        "outcome",
        "request_id",
        "sink",
        "token",
        "tracker",
    )

    def __init__(
        self,
        request_id: int,
        method: str,
        token: str | None,
        deadline: Deadline,
        sink: ProgressSink | None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.token = token
        self.deadline = deadline
        self.sink = sink
        self.tracker = ProgressTracker()
        self.done = anyio.Event()
        self.outcome: JSONObject | None = None
        self.failure: MCPClientError | None = None
        self.cancel_reason: str | None = None

    def cancel(self, reason: str) -> None:
        """End the request as cancelled by the client (unless it already ended)."""
        if self.outcome is None and self.failure is None:
            self.cancel_reason = reason
            self.settle(_CANCELLED)

    def settle(self, outcome: JSONObject, failure: MCPClientError | None = None) -> None:
        """Record how the request ended (the first settlement wins) and wake its waiter."""
        if self.outcome is None and self.failure is None:
            self.outcome = outcome
            self.failure = failure
            self.done.set()


class Session:
    """Requests and routing over one connection. Created and driven by :class:`~mcp_client.Client`."""

    def __init__(
        self,
        *,
        task_group: anyio.abc.TaskGroup,
        emit: Callable[[Event], None] | None = None,
        cancel_timeout: float = 5.0,
        server_request_handler: ServerRequestHandler | None = None,
    ) -> None:
        self._task_group = task_group
        self._emit = emit
        self._cancel_timeout = cancel_timeout
        self._server_request_handler = server_request_handler
        self._ids = RequestIds()
        self._tokens = ProgressTokens()
        self._in_flight: dict[int, _Request] = {}
        self._by_token: dict[str, _Request] = {}
        self._recent: OrderedDict[int, float] = OrderedDict()
        self._recent_tokens: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._connection: Connection | None = None
        self._closed: TransportError | None = None
        self.era: Era | None = None

    # -- wiring ---------------------------------------------------------------------------------------------

    def attach(self, connection: Connection) -> None:
        """Use ``connection`` for every request from now on."""
        self._connection = connection

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

    # -- requests ---------------------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JSONObject,
        *,
        policy: TimeoutPolicy,
        sink: ProgressSink | None = None,
        control: RequestControl | None = None,
        want_progress: bool = True,
        headers: dict[str, str] | None = None,
    ) -> JSONObject:
        """Send one request and return its ``result`` object, or raise a typed error.

        Raises:
            IdleTimeout, MaxTimeout: a clock of ``policy`` ran out (the request is cancelled on the wire).
            RequestCancelled: ``control.cancel()`` was called.
            ServerError: the server answered with a JSON-RPC error.
            TransportError: the channel failed; ``written`` says whether the request may have left.
            ProtocolError: the answer was not a valid response.
        """
        connection = self._connection
        if connection is None or self.era is None:
            raise RuntimeError("the session is not connected")
        now = anyio.current_time()
        deadline = Deadline(policy, started_at=now, caller_deadline=anyio.current_effective_deadline())
        request_id = self._ids.allocate()
        # A token whenever its progress matters: to reset idle, or for a consumer. Not only when a callback exists.
        token = self._tokens.allocate() if want_progress and (sink is not None or policy.idle is not None) else None
        request = _Request(request_id, method, token, deadline, sink)
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": self.era.stamp(params, token),
        }
        if self._closed is not None:
            raise self._context(self._closed, request, now, written=False)
        self._in_flight[request_id] = request
        if token is not None:
            self._by_token[token] = request
        if control is not None:
            control._attach(request)
        written = False
        error: MCPClientError | None = None
        try:
            written = await self._send(connection, request, message, headers)
            return await self._await_outcome(request)
        except MCPClientError as exc:
            error = self._context(exc, request, anyio.current_time(), written=written)
            raise error from None
        except anyio.get_cancelled_exc_class():
            if written and request.outcome is None:
                self._abandon(request, "cancelled by the caller")
            raise
        finally:
            self._finish(request, error)

    async def _send(
        self, connection: Connection, request: _Request, message: JSONObject, headers: dict[str, str] | None
    ) -> bool:
        deadline = request.deadline
        with anyio.CancelScope(deadline=deadline.hard_deadline(anyio.current_time())) as scope:
            await connection.send_request(message, headers=headers)
        if scope.cancelled_caught:
            # The write itself outlived the maximum: the request may be half-written, so it counts as written.
            await anyio.lowlevel.checkpoint()  # let the caller's own deadline, if that was it, cancel us
            self._abandon(request, "maximum timeout passed while sending")
            raise self._timeout(request, TimeoutKind.MAXIMUM, anyio.current_time())
        deadline.mark_sent(anyio.current_time())
        self.emit(RequestSent(request.request_id, request.method, request.token))
        return True

    async def _await_outcome(self, request: _Request) -> JSONObject:
        deadline = request.deadline
        while True:
            now = anyio.current_time()
            with anyio.CancelScope(deadline=deadline.next_wakeup(now)):
                await request.done.wait()
            if request.failure is not None:
                raise request.failure
            if request.outcome is not None:
                return self._unwrap(request)
            now = anyio.current_time()
            if deadline.take_slow(now):
                self.emit(Slow(request.request_id, request.method, deadline.elapsed(now)))
            kind = deadline.expired(now)
            if kind is TimeoutKind.CALLER:
                await anyio.lowlevel.checkpoint()  # the caller's scope cancels us here
                kind = TimeoutKind.MAXIMUM  # only reached if that scope was shielded from us: a hard stop anyway
            if kind is not None:
                self.emit(TimedOut(request.request_id, request.method, kind, deadline.elapsed(now)))
                self._abandon(request, _timeout_reason(kind, deadline.policy))
                raise self._timeout(request, kind, now)

    def _unwrap(self, request: _Request) -> JSONObject:
        outcome = request.outcome
        assert outcome is not None
        if outcome is _CANCELLED:
            reason = request.cancel_reason or "cancelled by the client"
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

    def _timeout(self, request: _Request, kind: TimeoutKind, now: float) -> MCPClientError:
        policy = request.deadline.policy
        if kind is TimeoutKind.IDLE:
            return IdleTimeout(
                f"{request.method}: no sign of life from the server for {policy.idle:g} s", timeout=policy.idle
            )
        limit = policy.maximum if policy.maximum is not None else request.deadline.elapsed(now)
        return MaxTimeout(f"{request.method}: the {limit:g} s maximum passed", timeout=limit)

    def _context(self, exc: MCPClientError, request: _Request, now: float, *, written: bool) -> MCPClientError:
        if isinstance(exc, TransportError) and not written:
            exc.written = False
        return exc.with_context(
            method=request.method,
            request_ids=(request.request_id,),
            elapsed=request.deadline.elapsed(now),
            last_progress=request.tracker.last_delivered,
        )

    def _forget(self, request: _Request) -> None:
        """Take the request out of the tables (idempotent); from now on anything for it is late."""
        request.deadline.finish()
        request.tracker.finish()
        now = anyio.current_time()
        if self._in_flight.pop(request.request_id, None) is not None:
            _remember(self._recent, request.request_id, now)
        if request.token is not None and self._by_token.pop(request.token, None) is not None:
            _remember(self._recent_tokens, request.token, (request.request_id, now))

    def _finish(self, request: _Request, error: MCPClientError | None) -> None:
        """The call is over: forget it, let its progress consumer finish, free its channel, report it."""
        self._forget(request)
        if request.sink is not None:
            succeeded = error is None and request.outcome is not None and request.outcome is not _CANCELLED
            request.sink.close(drain=succeeded)
        if self._connection is not None:
            self._connection.release(request.request_id)
        if self._emit is not None:
            elapsed = request.deadline.elapsed(anyio.current_time())
            self.emit(RequestFinished(request.request_id, request.method, elapsed, error))

    def _abandon(self, request: _Request, reason: str) -> None:
        """The request ends without its answer: stop routing to it and cancel it on the wire, in the background."""
        self._forget(request)
        if request.method in _NOT_CANCELLABLE or self._connection is None or self._closed is not None:
            return
        self._task_group.start_soon(self._send_cancel, self._connection, request.request_id, reason)

    async def _send_cancel(self, connection: Connection, request_id: int, reason: str) -> None:
        modern = self.era is not None and self.era.modern
        with anyio.move_on_after(self._cancel_timeout):
            try:
                how = await connection.cancel(request_id, reason, modern=modern)
            except TransportError as exc:
                logger.debug("could not cancel request %s: %s", request_id, exc)
                return
            self.emit(CancelSent(request_id, how, reason))

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
        if "result" not in message and "error" not in message:
            request.settle({}, ProtocolError(f"{request.method}: a response with neither result nor error"))
        else:
            request.settle(message)
        # Forget it now, not when its waiter next runs: a duplicate answer or progress arriving in between is late.
        self._forget(request)

    def _late_or_unknown(self, raw_id: object, request_id: int | None, message: JSONObject) -> None:
        if request_id is not None and self._ids.was_issued(request_id):
            ended = self._recent.get(request_id)
            late_by = anyio.current_time() - ended if ended is not None else None
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
                self.emit(LateMessage(request_id, "progress", anyio.current_time() - ended, message))
            else:
                self.emit(ProgressRejected(None, token, value, "unknown progress token"))
            return
        verdict, deliver = request.tracker.accept(value)
        now = anyio.current_time()
        if verdict is not ProgressVerdict.ACCEPTED:
            self.emit(ProgressRejected(request.request_id, token, value, verdict.value))
            if request.deadline.policy.reset_on_any_message:
                request.deadline.sign_of_life(now)
            return
        if request.deadline.sign_of_life(now) and self._emit is not None:
            self.emit(IdleTimerReset(request.request_id, request.deadline.idle_at(now)))
        total = params.get("total")
        note = params.get("message")
        update = Progress(
            float(value),  # type: ignore[arg-type]
            _finite_or_none(total),
            note if isinstance(note, str) else None,
        )
        if deliver and request.sink is not None:
            request.sink.offer(update)
        if self._emit is not None:
            self.emit(ProgressAccepted(request.request_id, update, deliver))

    def _on_notification(self, method: str, params: JSONObject) -> None:
        if method == "notifications/message":
            logger.log(_log_level(params.get("level")), "server log: %s", params.get("data"))
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
        elif self._server_request_handler is None:
            response["error"] = {"code": -32601, "message": f"the client does not handle {method}"}
        else:
            try:
                response["result"] = await self._server_request_handler(method, params)
            except ServerError as exc:
                response["error"] = {"code": exc.code, "message": exc.message}
            except Exception:
                logger.exception("handler for the server's %s request failed", method)
                response["error"] = {"code": -32603, "message": "the client failed to handle the request"}
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

    def on_request_failed(self, request_id: RequestId, error: TransportError) -> None:
        """One request's channel broke (HTTP): that request fails, nothing else."""
        key = _as_int_id(request_id)
        request = self._in_flight.get(key) if key is not None else None
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


def _finite_or_none(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


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
