"""The scripted MCP peer over Streamable HTTP, on a real loopback socket, for robustness tests of HTTP clients.

:class:`HttpPeer` serves a :class:`~mcp_client.testing.peer.ScriptedPeer` on ``127.0.0.1`` with a minimal HTTP/1.1
server written on anyio alone (no ASGI stack), so a test controls every byte on the wire::

    http_peer = HttpPeer(ScriptedPeer(), idle_close=0.3)
    async with http_peer.serving() as url, Client(http(url)) as client:
        await client.call_tool("echo", {"text": "hi"})
    http_peer.stats.posts("tools/call")  # what was received and sent, request by request

What it speaks (both eras, on one endpoint, ``POST`` only):

* **2026-07-28**: a POST whose body carries ``params._meta["io.modelcontextprotocol/protocolVersion"]``. The
  ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers must match the body (``400`` with ``-32020``
  otherwise). Stateless: one shared peer connection serves every such POST. Closing a ``tools/call``'s response
  stream cancels the tool (recorded in :attr:`HttpPeerStats.disconnect_cancels`), unless ``cancel_on_close`` is off.
* **2025-11-25**: ``initialize`` opens a peer connection of its own and answers with ``Mcp-Session-Id``; every later
  POST must carry it (``400`` without it, ``404`` once the session is gone); ``DELETE`` ends the session. Closing a
  response stream does not cancel anything; a POSTed ``notifications/cancelled`` does.

A request is answered as ``application/json`` when its response is the first thing the peer writes within
``stream_after`` seconds (always, with ``json_response=True``, which also drops progress like the reference
server's JSON mode), else as ``text/event-stream``: notifications, then the response, then the end of the stream.
Notifications and client responses get ``202``. Connections are persistent unless the client sends
``Connection: close``; ``idle_close`` closes idle ones after that many seconds, as uvicorn does after 5 s.

Misbehaviours (see :class:`~mcp_client.testing._http_peer_faults.HttpFault`) are chosen by calling the HTTP tools
(``drop_mid_stream``, ``trickle``, ``http_500``, ``http_503_retry_after``, ``slow_headers``, ``garbage_body``,
``oversized``; listed by ``tools/list``) or by the ``faults`` option, keyed by tool name or JSON-RPC method. One
more HTTP tool, ``barrier``, answers only once ``count`` calls of it wait in the server together: proof of how many
calls a client really has in flight.

Peer output is routed to the right HTTP response by a context variable that tool tasks inherit from the POST that
started them (see :meth:`ScriptedPeer.open_session <mcp_client.testing.peer.ScriptedPeer.open_session>`).
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import logging
import math
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import anyio
from anyio.abc import ByteSendStream, ByteStream, SocketAttribute, SocketStream, TaskGroup, TaskStatus

from mcp_client.testing._http_peer_faults import HTTP_TOOLS, HttpFault, fault_from_tool_call
from mcp_client.testing._http_peer_wire import (
    LAST_CHUNK,
    MalformedRequest,
    RequestHead,
    RequestReader,
    chunk,
    response_head,
    sse_event,
)
from mcp_client.testing._peer_tools import JsonObject, RequestId
from mcp_client.testing.peer import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    PROTOCOL_VERSION_META_KEY,
    PeerSession,
    PeerStats,
    ScriptedPeer,
)

__all__ = ["HttpFault", "HttpPeer", "HttpPeerStats", "HttpRequestLog"]

logger = logging.getLogger("mcp_client.testing.http_peer")

HEADER_MISMATCH = -32020
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
_BAD_REQUEST_CODES = frozenset({-32020, -32021, -32022})
"""JSON-RPC errors a 2026-07-28 server answers with HTTP 400 rather than 200."""
_NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_STREAM_ERRORS = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError)
_SERVER_HEADER = ("Server", "mcp-client-http-peer")

EraName: TypeAlias = Literal["modern", "legacy"]


class _Signal(enum.Enum):
    DISCONNECTED = "the client closed the connection"
    PEER_DIED = "the peer connection ended"


_Item: TypeAlias = tuple[JsonObject | None, bytes] | _Signal
"""What a request's exchange receives: a message the peer wrote (None if it is not JSON) with its bytes, or a signal."""


@dataclass
class HttpRequestLog:
    """One HTTP request as the server saw it, and what it did about it."""

    connection: int
    """Which TCP connection carried it (1 for the first the server accepted)."""
    method: str
    path: str
    headers: dict[str, str]
    """Request headers, names lower-cased (the last value of a repeated header)."""
    body: bytes
    started_at: float
    message: JsonObject | None = None
    """The JSON-RPC message of a POST, when its body was one."""
    status: int | None = None
    """The status sent (None when no status line was sent)."""
    content_type: str | None = None
    fault: str | None = None
    """The misbehaviour applied to this request, if any."""
    closed_early: bool = False
    """The client closed the connection before the response was complete."""
    dropped_by_server: bool = False
    """The server closed the connection before the response was complete, on purpose (or its peer died)."""
    cancelled_tool: bool = False
    """Closing the response stream cancelled the tool (2026-07-28)."""
    sent: list[JsonObject] = field(default_factory=list)
    """The JSON-RPC messages written in the response, in order."""
    dropped: list[JsonObject] = field(default_factory=list)
    """Messages for this request not sent: progress in ``json_response`` mode."""
    finished_at: float | None = None

    @property
    def rpc_method(self) -> str | None:
        """The JSON-RPC method of the body (None for a response or a non-JSON body)."""
        method = self.message.get("method") if self.message is not None else None
        return method if isinstance(method, str) else None

    @property
    def rpc_id(self) -> Any:
        """The JSON-RPC id of the body, or None."""
        return self.message.get("id") if self.message is not None else None

    @property
    def tool(self) -> str | None:
        """The tool name of a ``tools/call``, else None."""
        if self.rpc_method != "tools/call" or self.message is None:
            return None
        params = self.message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        return name if isinstance(name, str) else None


@dataclass
class HttpPeerStats:
    """What the HTTP server saw and did, for tests to inspect; :attr:`peer` is the scripted peer's own record."""

    peer: PeerStats
    requests: list[HttpRequestLog] = field(default_factory=list)
    """Every HTTP request, in the order their heads were read."""
    connections_opened: int = 0
    open_connections: int = 0
    max_open_connections: int = 0
    idle_closed: int = 0
    """Keep-alive connections the server closed for being idle ``idle_close`` seconds."""
    sessions_created: list[str] = field(default_factory=list)
    sessions_deleted: list[str] = field(default_factory=list)
    disconnect_cancels: list[RequestId] = field(default_factory=list)
    """``tools/call`` ids cancelled because the client closed their response stream (2026-07-28)."""
    undelivered: list[bytes] = field(default_factory=list)
    """Peer output for a request whose response was already over (late answers, answers after a close)."""
    errors: list[str] = field(default_factory=list)
    """Unexpected exceptions in the server itself (a test should expect none)."""

    def posts(self, rpc_method: str | None = None, *, tool: str | None = None) -> list[HttpRequestLog]:
        """The POSTs, optionally only those of one JSON-RPC method and/or one tool."""
        return [
            log
            for log in self.requests
            if log.method == "POST"
            and (rpc_method is None or log.rpc_method == rpc_method)
            and (tool is None or log.tool == tool)
        ]


_CURRENT_EXCHANGE: ContextVar[_Exchange | None] = ContextVar("mcp_client_http_peer_exchange", default=None)
"""The exchange of the POST being handled; tool tasks inherit it, so their output goes to the right response."""


class _Exchange:
    """The peer's output for one POSTed request, queued for the task writing its HTTP response."""

    def __init__(self, request_id: RequestId, stats: HttpPeerStats) -> None:
        self.request_id = request_id
        self._stats = stats
        self._send, self._receive = anyio.create_memory_object_stream[_Item](math.inf)
        self.finished = False

    def push(self, item: _Item) -> None:
        if self.finished:
            if not isinstance(item, _Signal):
                self._stats.undelivered.append(item[1])
            return
        self._send.send_nowait(item)

    async def receive(self) -> _Item:
        return await self._receive.receive()

    def finish(self) -> None:
        self.finished = True
        self._send.close()
        self._receive.close()


class _Router(ByteSendStream):
    """The output stream of every peer connection: each write goes to the exchange of the task that wrote it."""

    def __init__(self, stats: HttpPeerStats) -> None:
        self._stats = stats

    async def send(self, item: bytes) -> None:
        exchange = _CURRENT_EXCHANGE.get()
        for raw in bytes(item).rstrip(b"\n").split(b"\n"):  # several lines in one write: one event each
            if exchange is None or exchange.finished:
                self._stats.undelivered.append(raw)
                continue
            try:
                parsed = json.loads(raw)
            except (ValueError, RecursionError):  # hostile tools write lines nested too deep to parse
                parsed = None
            exchange.push((parsed if isinstance(parsed, dict) else None, raw))

    def drop_current(self) -> None:
        """Cut the response of the request whose task calls this (a listen's stream ends with nothing)."""
        exchange = _CURRENT_EXCHANGE.get()
        if exchange is not None:
            exchange.push(_Signal.PEER_DIED)

    async def aclose(self) -> None:
        """Nothing to close: the HTTP responses are closed by their own tasks."""


class _PeerHolder:
    """One connection of the scripted peer, kept open by a task of the server: the shared 2026-07-28 one, or one
    2025-11-25 session."""

    def __init__(self, era: EraName, session_id: str | None = None) -> None:
        self.era: EraName = era
        self.session_id = session_id
        self.session: PeerSession | None = None
        self.end = anyio.Event()
        self.dead = False
        self.exchanges: set[_Exchange] = set()

    @property
    def live_session(self) -> PeerSession | None:
        return None if self.dead or self.session is None or self.session.stopped else self.session


class _Watch:
    """Watches a connection while one request is handled: the client closing it is a disconnect."""

    def __init__(self, reader: RequestReader) -> None:
        self._reader = reader
        self.disconnected = anyio.Event()
        self.exchange: _Exchange | None = None

    async def run(self) -> None:
        await self._reader.wait_closed()
        self.disconnected.set()
        if self.exchange is not None:
            self.exchange.push(_Signal.DISCONNECTED)

    async def sleep(self, seconds: float) -> bool:
        """Sleep ``seconds``; False (at once) if the client disconnects first."""
        with anyio.move_on_after(seconds):
            await self.disconnected.wait()
        return not self.disconnected.is_set()


class _Responder:
    """Writes one HTTP response, sized or chunked, and records what it wrote."""

    def __init__(self, stream: ByteStream, log: HttpRequestLog, *, keep_alive: bool) -> None:
        self._stream = stream
        self.log = log
        self.keep_alive = keep_alive
        self.head_sent = False
        self.complete = False

    def _headers(self, headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        common = [_SERVER_HEADER] + ([] if self.keep_alive else [("Connection", "close")])
        return [*headers, *common]

    async def full(
        self, status: int, content_type: str | None, body: bytes, headers: Sequence[tuple[str, str]] = ()
    ) -> None:
        """A whole response with a sized body."""
        fields = ([("Content-Type", content_type)] if content_type else []) + [("Content-Length", str(len(body)))]
        self.log.status, self.log.content_type, self.head_sent = status, content_type, True
        await self._stream.send(response_head(status, self._headers([*fields, *headers])) + body)
        self.complete = True

    async def json(self, status: int, message: JsonObject, headers: Sequence[tuple[str, str]] = ()) -> None:
        """A whole ``application/json`` response."""
        self.log.sent.append(message)
        await self.full(status, "application/json", _encode(message), headers)

    async def plain(self, status: int, text: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        """A whole ``text/plain`` response."""
        await self.full(status, "text/plain; charset=utf-8", text.encode(), headers)

    async def error(self, status: int, request_id: Any, code: int, message: str) -> None:
        """An HTTP error status whose body is a JSON-RPC error."""
        await self.json(status, {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    async def start_sse(self, headers: Sequence[tuple[str, str]] = ()) -> None:
        """The head of a ``text/event-stream`` response with a chunked body."""
        fields = [
            ("Content-Type", "text/event-stream"),
            ("Cache-Control", "no-cache"),
            ("X-Accel-Buffering", "no"),
            ("Transfer-Encoding", "chunked"),
        ]
        self.log.status, self.log.content_type, self.head_sent = 200, "text/event-stream", True
        await self._stream.send(response_head(200, self._headers([*fields, *headers])))

    async def sse_bytes(self, data: bytes) -> None:
        """Raw bytes of the event stream, as one chunk."""
        await self._stream.send(chunk(data))

    async def sse_message(self, message: JsonObject | None, raw: bytes) -> None:
        """One message as an SSE event."""
        if message is not None:
            self.log.sent.append(message)
        await self.sse_bytes(sse_event(raw))

    async def end_sse(self) -> None:
        """End the event stream (the connection stays usable)."""
        await self._stream.send(LAST_CHUNK)
        self.complete = True


class HttpPeer:
    """A :class:`ScriptedPeer` served over Streamable HTTP on ``127.0.0.1``; see the module docstring.

    Args:
        peer: The scripted peer to serve (a new ``ScriptedPeer()`` by default).
        json_response: Answer every request with ``application/json``; progress and other notifications are
            dropped (recorded in :attr:`HttpRequestLog.dropped`), like the reference server's JSON mode.
        cancel_on_close: Whether closing a ``tools/call``'s response stream cancels the tool at 2026-07-28
            (default: yes, except with ``json_response=True``, where the call runs to its end like the reference).
        idle_close: Close keep-alive connections idle for this many seconds (None: never).
        stream_after: Seconds to wait for a request's first output before choosing an event stream over JSON.
        faults: Misbehaviours by tool name (for ``tools/call``) or JSON-RPC method.
        path: The MCP endpoint's path.
    """

    def __init__(
        self,
        peer: ScriptedPeer | None = None,
        *,
        json_response: bool = False,
        cancel_on_close: bool | None = None,
        idle_close: float | None = None,
        stream_after: float = 0.1,
        faults: Mapping[str, HttpFault] | None = None,
        path: str = "/mcp",
    ) -> None:
        self.peer = peer if peer is not None else ScriptedPeer()
        self.json_response = json_response
        self.cancel_on_close = (not json_response) if cancel_on_close is None else cancel_on_close
        self.idle_close = idle_close
        self.stream_after = stream_after
        self.faults = dict(faults or {})
        self.path = path
        self.stats = HttpPeerStats(peer=self.peer.stats)
        self.url: str | None = None
        """The endpoint's URL while serving."""
        self._router = _Router(self.stats)
        self._fault_uses: Counter[str] = Counter()
        self._barrier_waiting = 0
        self._barrier_open = anyio.Event()
        self._sessions: dict[str, _PeerHolder] = {}
        self._modern: _PeerHolder | None = None
        self._modern_lock = anyio.Lock()
        self._task_group: TaskGroup | None = None

    # -- serving ------------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[str]:
        """Listen on a free port of ``127.0.0.1``; yield the endpoint's URL. Leaving stops everything at once."""
        if self._task_group is not None:
            raise RuntimeError("this HttpPeer is already serving")
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = listener.extra(SocketAttribute.local_port)
        try:
            async with listener, anyio.create_task_group() as task_group:
                self._task_group = task_group
                self.url = f"http://127.0.0.1:{port}{self.path}"
                task_group.start_soon(listener.serve, self._serve_connection, task_group)
                try:
                    yield self.url
                finally:
                    task_group.cancel_scope.cancel()
        finally:
            self._task_group = None
            self.url = None
            self._sessions.clear()
            self._modern = None

    async def _serve_connection(self, stream: SocketStream) -> None:
        self.stats.connections_opened += 1
        index = self.stats.connections_opened
        self.stats.open_connections += 1
        self.stats.max_open_connections = max(self.stats.max_open_connections, self.stats.open_connections)
        reader = RequestReader(stream)
        try:
            async with stream:
                while True:
                    idle = self.idle_close if self.idle_close is not None else math.inf
                    with anyio.move_on_after(idle) as idle_scope:
                        arrived = await reader.wait_for_request()
                    if idle_scope.cancelled_caught:
                        self.stats.idle_closed += 1
                        return
                    if not arrived:
                        return
                    try:
                        request = await reader.read_request()
                    except MalformedRequest as exc:
                        body = f"malformed request: {exc}".encode()
                        head = response_head(
                            400, [("Content-Length", str(len(body))), ("Connection", "close"), _SERVER_HEADER]
                        )
                        await stream.send(head + body)
                        return
                    if request is None or not await self._respond(index, request, stream, reader):
                        return
        except _STREAM_ERRORS:
            logger.debug("connection %d broke", index, exc_info=True)
        except Exception as exc:  # a bug of the server: record it, keep serving other connections
            logger.exception("connection %d failed", index)
            self.stats.errors.append(f"connection {index}: {exc!r}")
        finally:
            self.stats.open_connections -= 1

    async def _respond(self, index: int, request: RequestHead, stream: ByteStream, reader: RequestReader) -> bool:
        """Answer one request; True if the connection may carry another."""
        log = HttpRequestLog(
            connection=index,
            method=request.method,
            path=request.path,
            headers={name.lower(): value for name, value in request.headers},
            body=request.body,
            started_at=anyio.current_time(),
        )
        self.stats.requests.append(log)
        responder = _Responder(stream, log, keep_alive=request.keep_alive)
        try:
            if request.path != self.path:
                await responder.plain(404, f"no MCP endpoint at {request.path}")
            elif request.method == "POST":
                watch = _Watch(reader)
                async with anyio.create_task_group() as task_group:
                    task_group.start_soon(watch.run)
                    try:
                        await self._post(request, responder, watch)
                    finally:
                        task_group.cancel_scope.cancel()
            elif request.method == "DELETE":
                await self._delete(request, responder)
            else:
                await responder.plain(405, "only POST and DELETE", [("Allow", "POST, DELETE")])
        except _STREAM_ERRORS:
            log.closed_early = log.closed_early or not log.dropped_by_server
            responder.keep_alive = False
        finally:
            log.finished_at = anyio.current_time()
        return responder.keep_alive and responder.complete and not reader.eof

    # -- sessions ---------------------------------------------------------------------------------------------------

    async def _hold(self, holder: _PeerHolder, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        try:
            async with self.peer.open_session(self._router) as session:
                holder.session = session
                task_status.started()
                await holder.end.wait()
        finally:
            holder.dead = True
            for exchange in list(holder.exchanges):
                exchange.push(_Signal.PEER_DIED)

    async def _open_holder(self, era: EraName, session_id: str | None = None) -> _PeerHolder:
        assert self._task_group is not None
        holder = _PeerHolder(era, session_id)
        await self._task_group.start(self._hold, holder)
        return holder

    async def _modern_holder(self) -> _PeerHolder:
        async with self._modern_lock:
            if self._modern is None or self._modern.live_session is None:
                self._modern = await self._open_holder("modern")
            return self._modern

    def end_sessions(self) -> None:
        """Forget every 2025-11-25 session, as a restarted server does: each one's next request gets ``404``, and
        the client starts a new session (``initialize``; see :attr:`ScriptedPeer.method_delays` for a slow one)."""
        for holder in list(self._sessions.values()):
            holder.dead = True
            holder.end.set()
        self._sessions.clear()

    async def _delete(self, request: RequestHead, responder: _Responder) -> None:
        session_id = request.header("mcp-session-id")
        if session_id is None:
            await responder.plain(400, "DELETE needs an Mcp-Session-Id header")
            return
        holder = self._sessions.pop(session_id, None)
        if holder is None:
            await responder.plain(404, f"no session {session_id}")
            return
        holder.end.set()
        self.stats.sessions_deleted.append(session_id)
        await responder.full(200, None, b"")

    # -- POST ------------------------------------------------------------------------------------------------------

    async def _post(self, request: RequestHead, responder: _Responder, watch: _Watch) -> None:
        try:
            message = json.loads(request.body)
        except ValueError:
            await responder.error(400, None, PARSE_ERROR, "the body is not JSON")
            return
        if not isinstance(message, dict):
            await responder.error(400, None, INVALID_REQUEST, "the body is not a JSON-RPC message")
            return
        responder.log.message = message
        method = message.get("method")
        request_id = message.get("id")
        is_request = isinstance(method, str) and "id" in message
        version = _modern_version(message)
        if version is not None:
            problem = _header_problem(request, message, version)
            if problem is not None:
                await responder.error(400, request_id, HEADER_MISMATCH, problem)
                return
            holder = await self._modern_holder()
        elif is_request and method == "initialize":
            holder = await self._open_holder("legacy", uuid.uuid4().hex)
        else:
            found = await self._legacy_holder(request, responder, request_id)
            if found is None:
                return
            holder = found
        session = holder.live_session
        if session is None:
            responder.log.dropped_by_server, responder.keep_alive = True, False
            return
        if not is_request:
            await session.handle_message(request.body)
            await responder.full(202, None, b"")
            return
        if _tool_name(message) == "barrier":
            await self._barrier(message, holder.era, responder, watch)
            return
        fault = self._fault_for(message)
        if fault is not None:
            responder.log.fault = fault.kind
            if not await self._apply_fault(fault, message, holder.era, responder, watch):
                return
        if _tool_name(message) in HTTP_TOOLS:
            await responder.json(200, _http_tool_answer(message, holder.era))
            return
        await self._exchange(holder, session, message, request.body, responder, watch)

    async def _legacy_holder(self, request: RequestHead, responder: _Responder, request_id: Any) -> _PeerHolder | None:
        """The 2025-11-25 session a POST names, or None after answering 400/404."""
        session_id = request.header("mcp-session-id")
        if session_id is None:
            await responder.error(400, request_id, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            return None
        holder = self._sessions.get(session_id)
        if holder is None or holder.dead:
            await responder.error(404, request_id, INVALID_REQUEST, f"session {session_id} not found")
            return None
        version = request.header("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await responder.error(400, request_id, INVALID_REQUEST, f"unsupported MCP-Protocol-Version {version!r}")
            return None
        return holder

    def _fault_for(self, message: JsonObject) -> HttpFault | None:
        name = _tool_name(message)
        key = name if name is not None else str(message.get("method"))
        fault = self.faults.get(key)
        if fault is None and name is not None:
            params = message.get("params")
            arguments = params.get("arguments") if isinstance(params, dict) else None
            fault = fault_from_tool_call(name, arguments if isinstance(arguments, dict) else {})
        if fault is None:
            return None
        if fault.times is not None:
            if self._fault_uses[key] >= fault.times:
                return None
            self._fault_uses[key] += 1
        return fault

    async def _apply_fault(
        self, fault: HttpFault, message: JsonObject, era: EraName, responder: _Responder, watch: _Watch
    ) -> bool:
        """Misbehave; True if the request should then be answered normally."""
        log = responder.log
        if fault.kind == "http_500":
            await responder.plain(500, "Internal Server Error (scripted)")
        elif fault.kind == "http_503_retry_after":
            await responder.plain(503, "Service Unavailable (scripted)", [("Retry-After", str(fault.retry_after))])
        elif fault.kind == "garbage_body":
            await responder.full(200, "application/json", b"<html>this is not JSON</html>")
        elif fault.kind == "slow_headers":
            if await watch.sleep(fault.seconds):
                return True
            log.closed_early, responder.keep_alive = True, False
        elif fault.kind == "oversized":
            result: JsonObject = {"content": [{"type": "text", "text": "x" * fault.size}]}
            if era == "modern":
                result["resultType"] = "complete"
            response = {"jsonrpc": "2.0", "id": message.get("id"), "result": result}
            await responder.start_sse()
            await responder.sse_message(response, _encode(response))
            await responder.end_sse()
        elif fault.kind == "drop_mid_stream":
            await responder.start_sse()
            token = _progress_token(message)
            if token is not None:
                progress = {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "message": "about to drop the connection"},
                }
                await responder.sse_message(progress, _encode(progress))
            await watch.sleep(0.05)  # let the progress reach the client before the connection goes
            log.dropped_by_server, responder.keep_alive = True, False
        else:  # trickle
            await responder.start_sse()
            while await watch.sleep(fault.interval):
                await responder.sse_bytes(b": trickle\r\n\r\n")
            log.closed_early, responder.keep_alive = True, False
        return False

    async def _barrier(self, message: JsonObject, era: EraName, responder: _Responder, watch: _Watch) -> None:
        """The ``barrier`` tool: answer once ``count`` calls of it wait together, or after ``seconds``."""
        arguments = _arguments(message)
        count = arguments.get("count", 2)
        seconds = arguments.get("seconds", 5.0)
        count = count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 2
        seconds = float(seconds) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else 5.0
        opened = self._barrier_open
        self._barrier_waiting += 1
        if self._barrier_waiting >= count:
            opened.set()
        try:
            with anyio.move_on_after(seconds):
                async with anyio.create_task_group() as task_group:

                    async def released() -> None:
                        await opened.wait()
                        task_group.cancel_scope.cancel()

                    task_group.start_soon(released)
                    await watch.disconnected.wait()
                    task_group.cancel_scope.cancel()
        finally:
            self._barrier_waiting -= 1
            if self._barrier_waiting == 0 and opened.is_set():
                self._barrier_open = anyio.Event()  # the next group of callers waits anew
        if watch.disconnected.is_set():
            responder.log.closed_early, responder.keep_alive = True, False
            return
        text = "released" if opened.is_set() else "timed out"
        await responder.json(200, _http_tool_answer(message, era, text))

    async def _exchange(
        self,
        holder: _PeerHolder,
        session: PeerSession,
        message: JsonObject,
        body: bytes,
        responder: _Responder,
        watch: _Watch,
    ) -> None:
        """Hand a request to the peer and write what it produces for it as the HTTP response."""
        request_id: RequestId = message["id"]
        exchange = _Exchange(request_id, self.stats)
        holder.exchanges.add(exchange)
        watch.exchange = exchange
        if watch.disconnected.is_set():
            exchange.push(_Signal.DISCONNECTED)
        token = _CURRENT_EXCHANGE.set(exchange)
        try:
            await session.handle_message(body)
        finally:
            _CURRENT_EXCHANGE.reset(token)
        try:
            await self._write_exchange(holder, session, message, exchange, responder)
        except _STREAM_ERRORS:
            self._client_gone(holder, session, message, responder)
        finally:
            exchange.finish()
            holder.exchanges.discard(exchange)
            if message.get("method") == "initialize" and holder.session_id not in self._sessions:
                holder.end.set()  # the handshake failed or was never answered: no session

    async def _write_exchange(
        self,
        holder: _PeerHolder,
        session: PeerSession,
        message: JsonObject,
        exchange: _Exchange,
        responder: _Responder,
    ) -> None:
        log = responder.log
        method = message.get("method")
        extra: list[tuple[str, str]] = []
        while True:
            wait = math.inf if responder.head_sent or self.json_response else self.stream_after
            with anyio.move_on_after(wait) as timer:
                item = await exchange.receive()
            if timer.cancelled_caught:
                await responder.start_sse()
                continue
            if item is _Signal.DISCONNECTED:
                self._client_gone(holder, session, message, responder)
                return
            if item is _Signal.PEER_DIED:
                log.dropped_by_server, responder.keep_alive = True, False
                return
            payload, raw = item
            final = payload is not None and _answers(payload, exchange.request_id)
            if final and payload is not None:
                if method == "tools/list":
                    payload, raw = _with_http_tools(payload)
                elif method == "initialize" and "result" in payload and holder.session_id is not None:
                    self._sessions[holder.session_id] = holder
                    self.stats.sessions_created.append(holder.session_id)
                    extra.append(("Mcp-Session-Id", holder.session_id))
            if not final and self.json_response:
                if payload is not None:
                    log.dropped.append(payload)
                continue
            if not responder.head_sent:
                if final and payload is not None:
                    log.sent.append(payload)
                    await responder.full(_status_for(payload), "application/json", raw, extra)
                    return
                await responder.start_sse(extra)
            await responder.sse_message(payload, raw)
            if final:
                await responder.end_sse()
                return

    def _client_gone(
        self, holder: _PeerHolder, session: PeerSession, message: JsonObject, responder: _Responder
    ) -> None:
        """The client closed the response stream: at 2026-07-28 that cancels a running tool."""
        responder.log.closed_early, responder.keep_alive = True, False
        request_id = message.get("id")
        if (
            holder.era == "modern"
            and self.cancel_on_close
            and message.get("method") in ("tools/call", "subscriptions/listen")
            and isinstance(request_id, str | int)
            and session.cancel_call(request_id)
        ):
            responder.log.cancelled_tool = True
            self.stats.disconnect_cancels.append(request_id)


# -- helpers -------------------------------------------------------------------------------------------------------


def _encode(message: JsonObject) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def _modern_version(message: JsonObject) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def _tool_name(message: JsonObject) -> str | None:
    if message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


def _progress_token(message: JsonObject) -> str | int | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def decode_header_value(value: str) -> str | None:
    """A header value as the client meant it: ``=?base64?...?=`` decoded; None if that encoding is broken."""
    if len(value) >= 12 and value[:9].lower() == "=?base64?" and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


def _header_text(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    return None


def _header_problem(request: RequestHead, message: JsonObject, version: str) -> str | None:
    """Why a 2026-07-28 POST's headers do not match its body (None if they do)."""
    header_version = request.header("mcp-protocol-version")
    if header_version is None:
        return "missing MCP-Protocol-Version header"
    if header_version != version:
        return f"MCP-Protocol-Version header {header_version!r} does not match the body's {version!r}"
    method = message.get("method")
    if not isinstance(method, str):
        return None
    header_method = request.header("mcp-method")
    if header_method is None:
        return "missing Mcp-Method header"
    if header_method != method:
        return f"Mcp-Method header {header_method!r} does not match the body's {method!r}"
    key = _NAME_PARAM.get(method)
    params = message.get("params")
    expected = _header_text(params.get(key)) if key is not None and isinstance(params, dict) else None
    if expected is None:
        return None
    header_name = request.header("mcp-name")
    if header_name is None:
        return "missing Mcp-Name header"
    if decode_header_value(header_name) != expected:
        return f"Mcp-Name header {header_name!r} does not match the body's {expected!r}"
    return None


def _answers(message: JsonObject, request_id: RequestId) -> bool:
    """Whether ``message`` is the response to ``request_id``."""
    response = "method" not in message and ("result" in message or "error" in message)
    return response and type(message.get("id")) is type(request_id) and message.get("id") == request_id


def _status_for(response: JsonObject) -> int:
    error = response.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return 400 if code in _BAD_REQUEST_CODES else 200


def _with_http_tools(response: JsonObject) -> tuple[JsonObject, bytes]:
    """A ``tools/list`` response with the HTTP tools appended to its last page."""
    result = response.get("result")
    if not isinstance(result, dict) or "nextCursor" in result or not isinstance(result.get("tools"), list):
        return response, _encode(response)
    response = {**response, "result": {**result, "tools": [*result["tools"], *HTTP_TOOLS.values()]}}
    return response, _encode(response)


def _arguments(message: JsonObject) -> JsonObject:
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    return arguments if isinstance(arguments, dict) else {}


def _http_tool_answer(message: JsonObject, era: EraName, text: str | None = None) -> JsonObject:
    """The normal answer of an HTTP tool (after its fault, or once its fault is used up): ``text``, by default the
    ``text`` argument echoed."""
    if text is None:
        argument = _arguments(message).get("text")
        text = argument if isinstance(argument, str) else ""
    result: JsonObject = {"content": [{"type": "text", "text": text}]}
    if era == "modern":
        result["resultType"] = "complete"
    return {"jsonrpc": "2.0", "id": message.get("id"), "result": result}
