"""The session is the wire of one connection: ids and tokens, the in-flight table, routing, late drops, events,
and the cancellations that go out in the background.

One :class:`Session` sits on one connection and owns its protocol era. It hands out each request of a call (a
fresh id and progress token, :meth:`Session.open_request`), stamps and writes it, and takes it out of its tables
when it ends; the life of the call around those requests (its deadline, attempts, input rounds, waiting) is the
call room's (:mod:`mcp_client.calls`). When a request ends without its answer (timeout, cancel, the caller's task
cancelled), it leaves the table at once and its cancellation goes on the wire in the background, bounded, so the
caller's error is never delayed by it.

The reader side (:meth:`on_message` and friends, called from the transport's reader task) never blocks: responses
wake their waiter, progress is validated and handed to a latest-wins mailbox, anything for a request that already
ended becomes a ``LateMessage`` event and nothing else. The server's own requests (2025-11-25) are answered by
:mod:`mcp_client.session.server_requests`. May touch the policy core, the era, the connection's contract
(``transports.base``) and the errors and events; never the call room, the client or a concrete transport.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from mcp_client._backends.auto import current_backend
from mcp_client._backends.base import Backend
from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject, RequestId
from mcp_client.errors import MCPClientError, ProtocolError, TransportError
from mcp_client.events import (
    CancelSent,
    Event,
    IdleTimerReset,
    LateMessage,
    ProgressAccepted,
    ProgressRejected,
    ProtocolViolation,
    ServerNotification,
    ServerStderr,
    TransportFailure,
)
from mcp_client.policy import Progress, ProgressTokens, ProgressVerdict, RequestIds
from mcp_client.policy.ids import wire_id
from mcp_client.policy.progress import finite_number
from mcp_client.protocol.era import Era
from mcp_client.protocol.logs import asks_for_logs, log_text, python_level, server_log
from mcp_client.session.batch import AfterBatch
from mcp_client.session.handlers import InputHandler
from mcp_client.session.inflight import CallState, WireRequest
from mcp_client.session.listeners import NotificationListener, tell
from mcp_client.session.pending import Pending
from mcp_client.session.server_requests import DEFAULT_MAX_SERVER_REQUESTS, ServerRequests
from mcp_client.transports.base import Connection

__all__ = ["Session"]

logger = package_logger("mcp_client.session")

_RECENT_LIMIT = 4096
_NOT_CANCELLABLE = frozenset(
    {"initialize", "server/discover", "tasks/get", "tasks/result", "tasks/update", "tasks/cancel"}
)
"""Never cancelled on the wire: the handshake (the spec forbids it), and the task requests, which are reads or
acknowledgements; a task is cancelled with ``tasks/cancel`` alone, never with ``notifications/cancelled``."""
_STANDING = frozenset({"subscriptions/listen"})
"""Requests that stay open for as long as the host wants: an open one does not make the server busy."""
_ANOTHER_LOOP = "the client's connection belongs to another event loop: use the client in the loop that opened it"


class Session:
    """Requests and routing over one connection. Created by :class:`~mcp_client.Client`, driven by the call room."""

    def __init__(
        self,
        *,
        task_group: anyio.abc.TaskGroup,
        emit: Callable[[Event], None] | None = None,
        cancel_timeout: float = 5.0,
        input_handler: InputHandler | None = None,
        on_notification: Callable[[str, JSONObject], None] | None = None,
        max_server_requests: int = DEFAULT_MAX_SERVER_REQUESTS,
    ) -> None:
        self._task_group = task_group
        self._emit = emit
        self._cancel_timeout = cancel_timeout
        self._on_notification_hook = on_notification
        self._ids = RequestIds()
        self._tokens = ProgressTokens()
        self._in_flight: dict[int, WireRequest] = {}
        self._standing = 0  # requests of _STANDING methods among them
        self._by_token: dict[str, WireRequest] = {}
        self._recent: OrderedDict[int, float] = OrderedDict()
        self._recent_tokens: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._connection: Connection | None = None
        self._closed: TransportError | None = None
        self._cancels_pending = Pending()
        self._cancels_in_progress: dict[int, anyio.Event] = {}
        self._listeners: list[NotificationListener] = []
        self._server_requests = ServerRequests(
            task_group=task_group,
            handler=input_handler,
            waiting_on_a_person=self.waiting_on_a_person,
            send_response=self._send_response,
            send_timeout=cancel_timeout,
            max_concurrent=max_server_requests,
            on_dropped=lambda detail: self.emit(ProtocolViolation(detail, None)),
        )
        backend: Backend = current_backend()  # the backend's fast paths, looked up once
        self.clock = backend.now
        """The session's clock (the event loop's) as a plain function."""
        self.timer_lead = backend.timer_lead
        """Seconds a request's waiter sets its timer early (see :mod:`mcp_client._backends.base`)."""
        self._new_waiter = backend.new_waiter
        self._running_loop, self._loop = backend.running_loop, backend.running_loop()  # (the loop it lives in)
        self.era: Era | None = None
        self._asking_for_logs: set[int] = set()
        """Requests in flight that asked for their log messages (2026-07-28), to tell whose a log is on stdio."""
        self.after_batch = AfterBatch(backend.call_soon)
        """Work deferred until the messages read together have all been routed (sync progress callbacks)."""
        self.on_batch_begin = self.after_batch.open
        self.on_batch_end = self.after_batch.run

    # -- wiring ---------------------------------------------------------------------------------------------

    def attach(self, connection: Connection) -> None:
        """Use ``connection`` for every request from now on. Called inside the event loop."""
        self._connection = connection

    def use_era(self, era: Era) -> None:
        """Speak ``era`` from now on (negotiation settles it; the session is the one owner of its connection's era)."""
        self.era = era

    @property
    def connection(self) -> Connection | None:
        """The connection in use (None before :meth:`attach`)."""
        return self._connection

    @property
    def connected(self) -> bool:
        """True once a connection is attached and an era is in use: requests may be opened."""
        return self._connection is not None and self.era is not None

    @property
    def input_rounds(self) -> bool:
        """Whether a result may ask for input (``input_required``) in this session's era."""
        return self.era is not None and self.era.input_rounds

    @property
    def observed(self) -> bool:
        """True when the host has an event hook: events are only built then."""
        return self._emit is not None

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

    def add_listener(self, listener: NotificationListener) -> Callable[[], None]:
        """Hand every notification (and the end of the connection) to ``listener`` too; returns its remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def drain_cancels(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until the cancellations scheduled so far have been written."""
        await self._cancels_pending.drained(timeout)

    # -- one request of a call ----------------------------------------------------------------------------------

    def open_request(self, call: CallState, *, want_token: bool) -> WireRequest:
        """A new request of ``call`` on the wire: a fresh id (and progress token), in the tables from now on.

        Raises :class:`TransportError` (``written=False``) when the connection is already gone.
        """
        if self._closed is not None:
            raise TransportError(self._closed.message, written=False)
        if self._running_loop() is not self._loop:  # refused before anything is written
            raise TransportError(_ANOTHER_LOOP, written=False)
        request_id = self._ids.allocate()
        token = self._tokens.allocate() if want_token else None
        request = WireRequest(request_id, token, call, self._new_waiter())
        call.request_ids.append(request_id)
        call.current = request
        self._in_flight[request_id] = request
        if call.method in _STANDING:
            self._standing += 1
        if token is not None:
            self._by_token[token] = request
        return request

    def message(self, request: WireRequest, params: JSONObject) -> JSONObject:
        """The JSON-RPC request for ``request``: a copy of ``params`` stamped with the era's ``_meta`` and the token."""
        era = self.era
        assert era is not None
        stamped = era.stamp(dict(params), request.token)
        if era.request_logs and asks_for_logs(stamped):
            self._asking_for_logs.add(request.request_id)
        return {"jsonrpc": "2.0", "id": request.request_id, "method": request.method, "params": stamped}

    def try_write(self, message: JSONObject) -> bool:
        """Write a request at once if that cannot block (see :meth:`Connection.try_send_request`). While earlier
        requests await their answers, the server is busy: the transport may write this one at the end of the loop
        turn, together with the others of the turn, so the server finds several per wake-up."""
        assert self._connection is not None
        busy = len(self._in_flight) - self._standing > 1  # (the request being written is in the table already)
        return self._connection.try_send_request(message, server_busy=busy)

    async def write(self, message: JSONObject, headers: dict[str, str] | None) -> None:
        """Write a request (the caller bounds the wait)."""
        assert self._connection is not None
        await self._connection.send_request(message, headers=headers)

    def close_request(self, request: WireRequest) -> None:
        """The request's wait is over: out of the tables, and the connection frees what it held for it."""
        request.call.current = None
        self._forget(request)
        if self._connection is not None:
            self._connection.release(request.request_id)

    def drop_crossed_answer(self, request: WireRequest) -> None:
        """The answer crossed the caller's cancellation (it came before the cancelled task resumed): dropped."""
        assert request.outcome is not None
        self.emit(LateMessage(request.request_id, "response", None, request.outcome))

    # -- waiting on a person ----------------------------------------------------------------------------------

    @contextmanager
    def waiting_on_a_person(self, calls: list[CallState] | None = None) -> Iterator[None]:
        """Stop the idle clock (and the maximum, if the policy says so) of ``calls`` (default: every call in flight)
        while the host asks a person something; restart them after."""
        targets = calls if calls is not None else list({r.call for r in self._in_flight.values()})
        now = self.clock()
        for call in targets:
            call.deadline.pause(now)
        try:
            yield
        finally:
            now = self.clock()
            for call in targets:
                call.deadline.resume(now)
                call.nudge()

    # -- ending requests ------------------------------------------------------------------------------------

    def _forget(self, request: WireRequest) -> None:
        """Take the request out of the tables (idempotent); from now on anything for it is late."""
        request_id = request.request_id
        if self._in_flight.pop(request_id, None) is None:
            return  # (forgotten already: the answer came, and now its wait is over; a request leaves both together)
        now = self.clock()
        _remember(self._recent, request_id, now)
        if self._asking_for_logs:
            self._asking_for_logs.discard(request_id)
        if self._standing and request.method in _STANDING:
            self._standing -= 1
        if request.token is not None and self._by_token.pop(request.token, None) is not None:
            _remember(self._recent_tokens, request.token, (request_id, now))

    def abandon(self, request: WireRequest, reason: str) -> None:
        """The request ends without its answer: stop routing to it and cancel it on the wire, at once if that
        cannot block (a stdio line), else in the background."""
        self._forget(request)
        if request.method in _NOT_CANCELLABLE or self._connection is None or self._closed is not None:
            return
        try:  # a line that fits in the pipe goes now, before the caller even sees the error
            how = self._connection.try_cancel(request.request_id, reason)
        except TransportError as exc:
            logger.debug("could not cancel request %s: %s", request.request_id, exc)
            return
        if how is not None:
            self.emit(CancelSent(request.request_id, how, reason))
            return
        self._cancels_pending.add()
        self._cancels_in_progress[request.request_id] = anyio.Event()
        self._task_group.start_soon(self._send_cancel, self._connection, request.request_id, reason)

    async def _send_cancel(self, connection: Connection, request_id: int, reason: str) -> None:
        try:
            with anyio.move_on_after(self._cancel_timeout):
                try:
                    how = await connection.cancel(request_id, reason)
                except TransportError as exc:
                    logger.debug("could not cancel request %s: %s", request_id, exc)
                    return
                self.emit(CancelSent(request_id, how, reason))
        finally:
            self._cancels_in_progress.pop(request_id, anyio.Event()).set()
            self._cancels_pending.done()

    async def cancel_written(self, request_id: int) -> None:
        """Wait until the cancellation of ``request_id`` (if one is under way) has been written, bounded."""
        written = self._cancels_in_progress.get(request_id)
        if written is not None:
            with anyio.move_on_after(self._cancel_timeout):
                await written.wait()

    async def _send_response(self, message: JSONObject) -> None:
        if self._connection is not None:
            await self._connection.send_response(message)

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification (best effort: a transport failure raises :class:`TransportError`)."""
        if self._connection is None:
            raise RuntimeError("the session is not connected")
        message: JSONObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._connection.send_notification(message)

    # -- what the reader hands us ----------------------------------------------------------------------------

    def on_message(self, message: JSONObject, stream: RequestId | None = None) -> None:
        """Route one message from the server. Never blocks, never raises.

        ``stream``: the request on whose response stream the message came, when the transport knows (HTTP)."""
        if "id" in message and "method" not in message:
            self._on_response(message)
        elif "method" in message:
            method = message["method"]
            params = message.get("params")
            if not isinstance(method, str) or (params is not None and not isinstance(params, dict)):
                self.emit(ProtocolViolation("a message with an invalid method or params", message))
            elif "id" in message:
                if self.era is not None and not self.era.server_requests:
                    # At 2026-07-28 servers must not send requests and clients never send responses.
                    self.emit(ProtocolViolation(f"a {method!r} request from a 2026-07-28 server", None))
                else:
                    self._server_requests.accept(message["id"], method, params or {})
            elif method == "notifications/progress":
                self._on_progress(params or {}, message)
            else:
                self._on_notification(method, params or {}, stream)
        else:
            self.emit(ProtocolViolation("neither a response, a request nor a notification", message))

    def _on_response(self, message: JSONObject) -> None:
        raw_id = message["id"]
        request_id = wire_id(raw_id)
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
            late_by = self.clock() - ended if ended is not None else None
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
                self.emit(LateMessage(request_id, "progress", self.clock() - ended, message))
            else:
                self.emit(ProgressRejected(None, token, value, "unknown progress token"))
            return
        call = request.call
        verdict, deliver = call.tracker.accept(value)
        now = self.clock()
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
            finite_number(total),
            note if isinstance(note, str) else None,
        )
        if deliver and call.sink is not None:
            call.sink.offer(update)
        if self._emit is not None:
            self.emit(ProgressAccepted(request.request_id, update, deliver))

    def _on_notification(self, method: str, params: JSONObject, stream: RequestId | None = None) -> None:
        if method == "notifications/cancelled":
            # 2025-11-25: the server withdraws a request it made of us (an elicitation the user has not answered).
            self._server_requests.withdraw(params)
        if method == "notifications/message":
            self._on_log(params, stream)
        if self._on_notification_hook is not None:
            self._on_notification_hook(method, params)
        tell(self._listeners, "on_notification", method, params)
        self.emit(ServerNotification(method, params))

    def _on_log(self, params: JSONObject, stream: RequestId | None) -> None:
        """A server log message: a :class:`ServerLog` event for the request it belongs to, and, when that request's
        policy says so, a sign of life for it."""
        request = self._log_owner(stream)
        log = server_log(params, request.request_id if request is not None else None)
        level = python_level(log.level)
        if logger.isEnabledFor(level):
            logger.log(level, "server log: %s", log_text(log.data))
        if request is not None:
            deadline = request.call.deadline
            if deadline.policy.reset_on_log or deadline.policy.reset_on_any_message:
                now = self.clock()
                if deadline.sign_of_life(now) and self._emit is not None:
                    self.emit(IdleTimerReset(request.request_id, deadline.idle_at(now)))
        self.emit(log)

    def _log_owner(self, stream: RequestId | None) -> WireRequest | None:
        """The request a log message belongs to: the one whose stream it came on; where logs are per request
        (2026-07-28) and there is no stream (stdio), the only request in flight that asked for logs, since servers
        then log only for requests that asked, and only on theirs."""
        if stream is not None:
            key = wire_id(stream)
            return self._in_flight.get(key) if key is not None else None
        if self.era is not None and self.era.request_logs and len(self._asking_for_logs) == 1:
            return self._in_flight.get(next(iter(self._asking_for_logs)))
        return None

    def on_invalid(self, detail: str, raw: bytes | None, request_id: RequestId | None) -> None:
        """A line that is not a message: report it; fail its request when it can be attributed to one."""
        logger.debug("invalid message from the server: %s", detail)
        self.emit(ProtocolViolation(detail, raw))
        key = wire_id(request_id) if request_id is not None else None
        request = self._in_flight.get(key) if key is not None else None
        if request is not None:
            request.settle({}, ProtocolError(f"{request.method}: the response could not be read: {detail}"))
            self._forget(request)

    def on_request_failed(self, request_id: RequestId, error: MCPClientError) -> None:
        """One request failed on its own channel (HTTP): that request fails, nothing else."""
        key = wire_id(request_id)
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
        tell(self._listeners, "on_closed", error)

    def on_client_closed(self, error: TransportError) -> None:
        """The client closed while requests still wait on the connection (awaited in tasks other than the client's):
        they fail now, as :meth:`on_closed` fails them. A close with none waiting is no failure: nothing reported."""
        if self._closed is None and self._in_flight:
            self.on_closed(error)

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
