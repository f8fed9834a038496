"""A scripted MCP server ("peer") for testing MCP clients.

It speaks only the wire protocol: JSON-RPC 2.0, one compact JSON object per
line, in either protocol era:

* ``"modern"`` - 2026-07-28, stateless: every request carries
  ``params._meta["io.modelcontextprotocol/protocolVersion"]`` and
  ``server/discover`` describes the server;
* ``"legacy"`` - the ``initialize`` handshake (2024-11-05 .. 2025-11-25);
* ``"auto"`` - both: the first request that commits to an era decides the
  connection's era (``initialize`` -> legacy, a valid modern envelope -> modern).

Its tools (see :mod:`mcp_client.testing._peer_tools`) script the behaviours a
client must survive: slow and silent calls, progress that goes backwards or
arrives late, duplicate or stray responses, garbage on the wire, sudden death.
With ``tasks=True`` it also serves a tool that always runs as a task, in either
era (see :mod:`mcp_client.testing._peer_tasks`): expiry, a status that goes
backwards, a huge ``pollIntervalMs``, input keys repeated across polls, a
``tasks/cancel`` that is ignored.
Everything it sees is recorded in :class:`PeerStats`.

It depends on nothing but the standard library and anyio - it is a peer of the
client, not part of it - and it spends time only in ``anyio.sleep``, so it runs
in-process on asyncio or trio (including trio's ``MockClock``)::

    peer = ScriptedPeer(era="modern")
    async with peer.connect() as stream:  # a StapledByteStream to the peer
        ...

or as a subprocess over stdio (``--help`` lists the options)::

    python -m mcp_client.testing.peer --era legacy --page-size 5
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import logging
import math
import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO, TypeAlias, TypeGuard

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup
from anyio.streams.stapled import StapledByteStream

from mcp_client.testing._peer_hostile import HOSTILE_TOOLS
from mcp_client.testing._peer_listen import ListenBoard, ListenScript
from mcp_client.testing._peer_streams import FileByteReceiveStream, FileByteSendStream, byte_pipe
from mcp_client.testing._peer_tasks import TASK_TOOLS, PeerTasks, TaskRequestError
from mcp_client.testing._peer_tools import (
    INVALID_PARAMS,
    TOOLS,
    Era,
    JsonObject,
    ProgressToken,
    RequestId,
    ToolArgumentError,
    ToolCall,
    ToolSpec,
)

__all__ = [
    "CATALOGUE",
    "EXIT_CODE_DIED",
    "ListenBoard",
    "ListenScript",
    "PeerSession",
    "PeerStats",
    "ScriptedPeer",
    "byte_pipe",
    "arrival_key",
    "main",
    "read_arrivals",
]

logger = logging.getLogger("mcp_client.testing.peer")

CATALOGUE: tuple[ToolSpec, ...] = TOOLS + HOSTILE_TOOLS
"""Every tool the peer lists: the scripted behaviours, then the hostile ones."""
_TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in CATALOGUE}

PeerEra: TypeAlias = Literal["auto", "modern", "legacy"]
DiscoverBehaviour: TypeAlias = Literal["answer", "error", "silent"]
Outcome: TypeAlias = Literal["completed", "cancelled", "aborted"]

MODERN_PROTOCOL_VERSION = "2026-07-28"
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO: JsonObject = {"name": "mcp-client-scripted-peer", "version": "1"}
EXIT_CODE_DIED = 3
"""Exit status of the subprocess when a tool (``die``, ``half_line``) kills it."""

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
UNSUPPORTED_PROTOCOL_VERSION = -32022

_CACHEABLE_METHODS = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
_CURSOR_PREFIX = "scripted-peer-offset:"

_PROMPTS: tuple[JsonObject, ...] = (
    {
        "name": "greet",
        "description": "Greet someone by name.",
        "arguments": [{"name": "name", "description": "Who to greet (default 'world').", "required": False}],
    },
)
_RESOURCES: tuple[JsonObject, ...] = (
    {"uri": "memo://hello", "name": "hello", "description": "A short memo.", "mimeType": "text/plain"},
)
_RESOURCE_TEXTS = {"memo://hello": "hello"}


@dataclass
class PeerStats:
    """What the peer saw and did, for tests to inspect (accumulated over all connections)."""

    received: list[JsonObject] = field(default_factory=list)
    """Every JSON object received, in order (requests, notifications and responses)."""
    malformed: list[bytes] = field(default_factory=list)
    """Received lines that were not a JSON-RPC 2.0 object (ignored), including a truncated last line."""
    sent: list[JsonObject] = field(default_factory=list)
    """Every JSON-RPC message written, in order (the raw bytes of the misbehaving tools are not included)."""
    cancel_notifications: list[JsonObject] = field(default_factory=list)
    """The params of every ``notifications/cancelled`` received, in order."""
    outcomes: dict[RequestId, Outcome] = field(default_factory=dict)
    """How each ``tools/call`` that ran ended: ``"completed"`` (a response was written), ``"cancelled"``
    (stopped by ``notifications/cancelled`` before answering) or ``"aborted"`` (the connection ended first)."""
    calls_by_tool: Counter[str] = field(default_factory=Counter)
    """How many times each tool was called."""
    client_responses: list[JsonObject] = field(default_factory=list)
    """Every response the client sent (to ``ping_client``'s request or to nothing at all)."""
    ignored_requests: list[JsonObject] = field(default_factory=list)
    """Requests deliberately left unanswered (``server/discover`` with ``discover="silent"``)."""
    stderr_lines: list[str] = field(default_factory=list)
    """Text written by the ``stderr`` tool."""
    initialized_notifications: int = 0
    """How many ``notifications/initialized`` were received."""
    connections: int = 0
    """How many times :meth:`ScriptedPeer.serve` was entered."""
    died: bool = False
    """Whether a tool (``die``, ``half_line``) killed a connection."""
    arrivals: Counter[str] = field(default_factory=Counter)
    """How many requests arrived, by :func:`arrival_key` (``"tools/call echo"``, ``"tasks/get"``...): the peer's own
    count, counted as each request is read, before it is answered (or not)."""

    @property
    def cancelled_request_ids(self) -> list[Any]:
        """The ``requestId`` of every ``notifications/cancelled`` received, in order."""
        return [params.get("requestId") for params in self.cancel_notifications]


class _RequestError(Exception):
    """Raised by a request handler to answer with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ScriptedPeer:
    """A scripted MCP server; :meth:`serve` runs one connection of it."""

    def __init__(
        self,
        *,
        era: PeerEra = "auto",
        page_size: int = 50,
        discover: DiscoverBehaviour | None = None,
        stderr: TextIO | None = None,
        tasks: bool = False,
        listen: ListenScript | None = None,
        ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "public",
        arrivals_file: TextIO | None = None,
    ) -> None:
        """Configure the peer.

        ``discover`` decides what ``server/discover`` gets: ``"answer"`` (the default, except for
        ``era="legacy"``), ``"error"`` (-32601, the legacy default) or ``"silent"`` (never answered).
        ``stderr``, when given, is where the ``stderr`` tool also writes (it always records in
        :attr:`PeerStats.stderr_lines`). ``tasks`` lists and serves the task tools (their tasks are in
        :attr:`tasks`). ``listen`` scripts how ``subscriptions/listen`` is answered (2026-07-28);
        the open listens are driven through :attr:`listens`. ``ttl_ms`` and ``cache_scope`` are the caching hints of
        its modern cacheable results (``server/discover``, the lists, ``resources/read``). ``arrivals_file``: see
        :attr:`arrivals_file`.
        """
        if era not in ("auto", "modern", "legacy"):
            raise ValueError(f"era must be 'auto', 'modern' or 'legacy', got {era!r}")
        if discover is not None and discover not in ("answer", "error", "silent"):
            raise ValueError(f"discover must be 'answer', 'error' or 'silent', got {discover!r}")
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, got {page_size}")
        self.era: PeerEra = era
        self.tool_edits: dict[str, JsonObject] = {}
        """Fields laid over a tool's ``tools/list`` entry, by tool name, from the next listing on: a server that
        changes a tool's description or schema between listings (tests of tool pinning)."""
        self.tool_twins: dict[str, JsonObject] = {}
        """Tools ``tools/list`` names twice, by tool name: a second entry, with these fields laid over, just before
        the tool's own (a server that shows one form of a tool and runs another)."""
        self.page_size = page_size
        self.discover: DiscoverBehaviour = discover or ("error" if era == "legacy" else "answer")
        self.stderr = stderr
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        self.stats = PeerStats()
        self.serves_tasks = tasks
        self.tasks = PeerTasks()
        """The tasks the task tools created (they outlive the connection that made them)."""
        self.counter = 0
        """The value of the counter the ``increment`` tool adds to."""
        self.listens = ListenBoard(listen or ListenScript())
        """The open ``subscriptions/listen`` requests, and how each one ended (see :mod:`._peer_listen`)."""
        self.method_delays: dict[str, float] = {}
        """Seconds to wait before answering each request of a method, by method (``{"tools/list": 60}``, from the
        next request on): a slow listing, a slow ``initialize`` behind a session renewal. The wait holds that
        connection's reading as a busy server's would."""
        self.arrivals_file = arrivals_file
        """Where each arriving request's :func:`arrival_key` is also written, one JSON string a line, flushed at
        once: the count of a peer in another process (``--arrivals``), which outlives its death."""

    def note_arrival(self, key: str) -> None:
        """Count one arriving request (:attr:`PeerStats.arrivals`, and :attr:`arrivals_file`)."""
        self.stats.arrivals[key] += 1
        if self.arrivals_file is not None:
            self.arrivals_file.write(json.dumps(key) + "\n")
            self.arrivals_file.flush()

    async def serve(self, receive: ByteReceiveStream, send: ByteSendStream) -> None:
        """Serve one connection until ``receive`` reaches EOF or a tool kills the peer.

        Calls still running at EOF are cancelled (outcome ``"aborted"``). On return, ``send`` and
        ``receive`` are both closed, as a process that exits closes both ends of its pipes.
        """
        self.stats.connections += 1
        connection = _PeerConnection(self, send)
        try:
            await connection.run(receive)
        finally:
            with anyio.CancelScope(shield=True):
                for stream in (send, receive):
                    try:
                        await stream.aclose()
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        logger.debug("closing %r failed", stream, exc_info=True)

    @asynccontextmanager
    async def connect(self, max_buffer_size: float = math.inf) -> AsyncIterator[StapledByteStream]:
        """Serve one in-memory connection; yield the client's end of it.

        ``await stream.send_eof()`` gives the peer EOF; leaving the block closes the stream and
        waits for :meth:`serve` to return.
        """
        to_peer, peer_input = byte_pipe(max_buffer_size)
        peer_output, from_peer = byte_pipe(max_buffer_size)
        client_end = StapledByteStream(to_peer, from_peer)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(self.serve, peer_input, peer_output)
            try:
                yield client_end
            finally:
                await client_end.aclose()

    @asynccontextmanager
    async def open_session(self, send: ByteSendStream) -> AsyncIterator[PeerSession]:
        """Run one connection fed one message at a time, for transports that frame messages themselves (HTTP).

        Everything the connection writes goes to ``send``, one JSON line per message (or the raw bytes of the
        misbehaving tools), from the task that produced it: the caller of :meth:`PeerSession.handle_message`, or a
        tool task it started (which inherits the caller's context variables, so a transport can route by them).
        Leaving the block aborts the calls still running (outcome ``"aborted"``); a tool that kills the peer
        (``die``) ends the session early, which cancels the body of this block. ``send`` is not closed here.
        """
        self.stats.connections += 1
        connection = _PeerConnection(self, send)
        async with anyio.create_task_group() as task_group:
            connection._task_group = task_group
            try:
                yield PeerSession(connection)
            finally:
                connection._stop()


class PeerSession:
    """One connection of a :class:`ScriptedPeer` driven message by message; see :meth:`ScriptedPeer.open_session`."""

    def __init__(self, connection: _PeerConnection) -> None:
        self._connection = connection

    async def handle_message(self, data: bytes) -> None:
        """Handle one message, given as its JSON bytes, exactly as if it had arrived as a line.

        Returns once the message is handled: a request's answer is written (tools keep running in the session's
        task group, and write from there).
        """
        await self._connection._handle_line(data)

    def cancel_call(self, request_id: RequestId) -> bool:
        """Cancel a running ``tools/call`` as ``notifications/cancelled`` would (outcome ``"cancelled"``).

        A tool that ignores cancellation is only flagged and runs on. False when no such call is running.
        """
        return self._connection.cancel_call(request_id)

    def is_running(self, request_id: RequestId) -> bool:
        """Whether a ``tools/call`` with this id is still running."""
        return request_id in self._connection._running_calls

    @property
    def stopped(self) -> bool:
        """Whether the session has ended (left, or killed by a tool)."""
        return self._connection._stopped

    def stop(self) -> None:
        """End the session now: running calls are aborted, later output is dropped."""
        self._connection._stop()


class _PeerConnection:
    """The state of one connection: its era, running calls and the single writer."""

    def __init__(self, peer: ScriptedPeer, send: ByteSendStream) -> None:
        self._peer = peer
        self._stats = peer.stats
        self._send = send
        self._write_lock = anyio.Lock()
        self._era: Era | None = None if peer.era == "auto" else peer.era
        self._initialized = False
        self._stopped = False
        self._task_group: TaskGroup | None = None
        self._running_calls: dict[RequestId, tuple[ToolCall, ToolSpec, anyio.CancelScope]] = {}
        self._client_requests_sent = 0
        self._awaited_client_responses: dict[RequestId, tuple[anyio.Event, list[JsonObject]]] = {}

    # -- PeerLink (what tools may do) ------------------------------------------------------------------

    @property
    def era(self) -> Era:
        if self._era is None:
            raise RuntimeError("the connection's era is not decided yet")
        return self._era

    async def send_message(self, message: JsonObject) -> None:
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"
        await self._write(line.encode(), message)

    async def send_raw(self, data: bytes) -> None:
        await self._write(data)

    async def send_response(self, request_id: RequestId, result: JsonObject) -> None:
        if self._era == "modern" and "resultType" not in result:
            result = {**result, "resultType": "complete"}
        await self.send_message({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def send_error(self, request_id: RequestId | None, code: int, message: str, data: Any = None) -> None:
        error: JsonObject = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        await self.send_message({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def request_client(self, method: str, params: JsonObject | None = None) -> JsonObject:
        self._client_requests_sent += 1
        request_id = f"srv-{self._client_requests_sent}"
        arrived = anyio.Event()
        response_holder: list[JsonObject] = []
        self._awaited_client_responses[request_id] = (arrived, response_holder)
        request: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            request["params"] = params
        try:
            await self.send_message(request)
            await arrived.wait()
        finally:
            del self._awaited_client_responses[request_id]
        return response_holder[0]

    def write_stderr(self, text: str) -> None:
        self._stats.stderr_lines.append(text)
        if self._peer.stderr is not None:
            self._peer.stderr.write(text + "\n")
            self._peer.stderr.flush()

    def die(self) -> None:
        logger.info("a tool killed the peer")
        self._stats.died = True
        self._stop()

    def _drop_stream(self) -> None:
        """End the current request's stream with nothing: over HTTP its response is cut; over stdio the peer dies."""
        drop = getattr(self._send, "drop_current", None)
        if callable(drop):
            drop()
        else:
            self.die()

    def next_counter_value(self, increment: int) -> int:
        self._peer.counter += increment
        return self._peer.counter

    def stats_snapshot(self) -> JsonObject:
        return {
            "outcomes": {str(request_id): outcome for request_id, outcome in self._stats.outcomes.items()},
            "cancelled": self._stats.cancelled_request_ids,
            "calls_by_tool": dict(self._stats.calls_by_tool),
        }

    # -- the connection's life -------------------------------------------------------------------------

    async def run(self, receive: ByteReceiveStream) -> None:
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            await self._read_lines(receive)
            logger.debug("EOF from the client; aborting %d running call(s)", len(self._running_calls))
            self._stop()

    def _stop(self) -> None:
        self._stopped = True
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()

    async def _write(self, data: bytes, message: JsonObject | None = None) -> None:
        """Write ``data`` whole, one writer at a time; dropped once the connection is gone.

        ``message``, when given, is what ``data`` encodes; it is recorded in :attr:`PeerStats.sent`.
        """
        async with self._write_lock:
            if self._stopped:
                return
            try:
                await self._send.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                logger.debug("the client stopped reading; dropping output", exc_info=True)
                return
            if message is not None:
                self._stats.sent.append(message)

    async def _read_lines(self, receive: ByteReceiveStream) -> None:
        buffer = bytearray()
        while True:
            try:
                chunk = await receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            searched = len(buffer)
            buffer += chunk
            while (newline := buffer.find(b"\n", searched)) >= 0:
                line = bytes(buffer[:newline])
                del buffer[: newline + 1]
                searched = 0
                await self._handle_line(line)
        if buffer.strip():
            self._stats.malformed.append(bytes(buffer))

    async def _handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line, parse_constant=_reject_constant)
        except ValueError:
            self._stats.malformed.append(line)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._stats.malformed.append(line)
            return
        self._stats.received.append(message)
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            self._peer.note_arrival(arrival_key(method, message.get("params")))
        if isinstance(method, str):
            if "id" not in message:
                self._handle_notification(method, message.get("params"))
            elif _is_request_id(message["id"]):
                await self._handle_request(message["id"], method, message.get("params"))
            else:
                await self.send_error(None, INVALID_REQUEST, "request id must be a string or an integer")
        elif "id" in message and ("result" in message or "error" in message):
            self._handle_client_response(message)
        else:
            self._stats.malformed.append(line)

    # -- notifications and responses from the client ---------------------------------------------------

    def _handle_notification(self, method: str, params: object) -> None:
        if method == "notifications/initialized":
            self._stats.initialized_notifications += 1
        elif method == "notifications/cancelled" and isinstance(params, dict):
            self._stats.cancel_notifications.append(params)
            request_id = params.get("requestId")
            if _is_request_id(request_id):
                self.cancel_call(request_id)
        else:
            logger.debug("ignoring notification %s", method)

    def cancel_call(self, request_id: RequestId) -> bool:
        """Cancel a running call (a tool that ignores cancellation is only flagged) or an open listen; False if
        neither is running."""
        running = self._running_calls.get(request_id)
        if running is None:
            return self._peer.listens.cancel(request_id)
        call, tool, scope = running
        call.cancel_requested = True
        if not tool.ignores_cancellation:
            scope.cancel()
        return True

    def _handle_client_response(self, message: JsonObject) -> None:
        self._stats.client_responses.append(message)
        awaited = self._awaited_client_responses.get(message["id"])
        if awaited is not None and not awaited[0].is_set():
            arrived, response_holder = awaited
            response_holder.append(message)
            arrived.set()

    # -- requests --------------------------------------------------------------------------------------

    async def _handle_request(self, request_id: RequestId, method: str, raw_params: object) -> None:
        delay = self._peer.method_delays.get(method)
        if delay:
            await anyio.sleep(delay)
        try:
            if raw_params is not None and not isinstance(raw_params, dict):
                raise _RequestError(INVALID_PARAMS, "params must be an object")
            result = await self._route(request_id, method, raw_params or {})
        except _RequestError as error:
            await self.send_error(request_id, error.code, error.message, error.data)
        else:
            if result is not None:
                await self.send_response(request_id, result)

    async def _route(self, request_id: RequestId, method: str, params: JsonObject) -> JsonObject | None:
        """Answer a request: its result, or None when the answer is sent later (or never)."""
        if method == "server/discover":
            return self._discover(request_id, params)
        if method == "initialize":
            return self._initialize(params)
        if self._era is None and not _has_modern_envelope(params):
            if method == "ping":
                return {}
            raise _RequestError(
                INVALID_PARAMS,
                f"missing params._meta[{PROTOCOL_VERSION_META_KEY!r}]; "
                "send it on every request, or send initialize first for the 2025-11-25 handshake",
            )
        if self._era == "legacy":
            if method == "ping":
                return {}
            if _has_modern_envelope(params):
                raise _RequestError(
                    INVALID_REQUEST,
                    f"this connection uses the initialize handshake; {MODERN_PROTOCOL_VERSION} requests are refused",
                )
            if not self._initialized:
                raise _RequestError(INVALID_REQUEST, "server not initialized: send initialize first")
        else:
            _check_modern_envelope(params)
            self._era = "modern"
        result = await self._dispatch(request_id, method, params)
        if result is not None and self._era == "modern" and method in _CACHEABLE_METHODS:
            result = {**result, "ttlMs": self._peer.ttl_ms, "cacheScope": self._peer.cache_scope}
        return result

    def _discover(self, request_id: RequestId, params: JsonObject) -> JsonObject | None:
        if self._peer.discover == "error":
            raise _RequestError(METHOD_NOT_FOUND, "method not found: server/discover")
        if self._peer.discover == "silent":
            self._stats.ignored_requests.append({"id": request_id, "method": "server/discover", "params": params})
            return None
        _check_modern_envelope(params)
        if self._era is None:
            self._era = "modern"
        return {
            "resultType": "complete",
            "supportedVersions": [MODERN_PROTOCOL_VERSION],
            "capabilities": {"tools": {"listChanged": False}, "prompts": {}, "resources": {}},
            "ttlMs": self._peer.ttl_ms,
            "cacheScope": self._peer.cache_scope,
            "_meta": {SERVER_INFO_META_KEY: SERVER_INFO},
        }

    def _initialize(self, params: JsonObject) -> JsonObject:
        requested = params.get("protocolVersion")
        if self._era == "modern":
            raise _RequestError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"this connection serves {MODERN_PROTOCOL_VERSION}; the initialize handshake is not accepted",
                {"supported": [MODERN_PROTOCOL_VERSION], "requested": requested},
            )
        self._era = "legacy"
        self._initialized = True
        capabilities: JsonObject = {
            "tools": {"listChanged": False},
            "prompts": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
        }
        if self._peer.serves_tasks:
            capabilities["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
        return {
            "protocolVersion": requested
            if requested in HANDSHAKE_PROTOCOL_VERSIONS
            else HANDSHAKE_PROTOCOL_VERSIONS[-1],
            "capabilities": capabilities,
            "serverInfo": SERVER_INFO,
        }

    async def _dispatch(self, request_id: RequestId, method: str, params: JsonObject) -> JsonObject | None:
        if self._peer.serves_tasks and (
            method.startswith("tasks/") or (method == "tools/call" and PeerTasks.is_task_tool(params.get("name")))
        ):
            try:
                if method == "tools/call":
                    self._stats.calls_by_tool[str(params.get("name"))] += 1
                    created = self._peer.tasks.create(params, self.era)
                    arguments = params.get("arguments")
                    if isinstance(arguments, dict) and arguments.get("notify_status"):
                        assert self._task_group is not None
                        task_id = str(created.get("taskId", (created.get("task") or {}).get("taskId")))
                        self._task_group.start_soon(self._notify_status_at_end, task_id, arguments)
                    return created
                if method == "tasks/result":  # waits for the task's end: answered from a task of its own
                    assert self._task_group is not None
                    self._task_group.start_soon(self._answer_later, request_id, method, params)
                    return None
                return await self._peer.tasks.handle(method, params)
            except TaskRequestError as error:
                raise _RequestError(error.code, error.message, error.data) from None
        if method == "tools/call":
            self._start_tool_call(request_id, params)
            return None
        if method == "subscriptions/listen" and self._era == "modern" and self._peer.listens.script.supported:
            assert self._task_group is not None
            self._task_group.start_soon(
                self._peer.listens.serve, request_id, params, self.send_message, self._drop_stream, name=method
            )
            return None
        if method == "tools/list":
            listed: list[JsonObject] = []
            for tool in CATALOGUE:
                entry = {**tool.describe(), **self._peer.tool_edits.get(tool.name, {})}
                twin = self._peer.tool_twins.get(tool.name)
                listed.extend([{**entry, **twin}, entry] if twin is not None else [entry])
            if self._peer.serves_tasks:
                listed.extend(TASK_TOOLS)
            return self._page(listed, params, "tools")
        if method == "prompts/list":
            return self._page(_PROMPTS, params, "prompts")
        if method == "prompts/get":
            return _get_prompt(params)
        if method == "resources/list":
            return self._page(_RESOURCES, params, "resources")
        if method == "resources/templates/list":
            return self._page((), params, "resourceTemplates")
        if method == "resources/read":
            return _read_resource(params)
        raise _RequestError(METHOD_NOT_FOUND, f"method not found: {method}")

    async def _notify_status_at_end(self, task_id: str, arguments: JsonObject) -> None:
        """``notify_status``: once the task's ``seconds`` are up, say so with ``notifications/tasks/status``."""
        await anyio.sleep(float(arguments.get("seconds", 1.0)))
        status = {"taskId": task_id, "status": "completed"}
        await self.send_message({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": status})

    async def _answer_later(self, request_id: RequestId, method: str, params: JsonObject) -> None:
        try:
            result = await self._peer.tasks.handle(method, params)
        except TaskRequestError as error:
            await self.send_error(request_id, error.code, error.message, error.data)
        else:
            if result is not None:
                await self.send_response(request_id, result)

    def _page(self, items: Sequence[JsonObject], params: JsonObject, key: str) -> JsonObject:
        offset = _decode_cursor(params.get("cursor"), len(items))
        end = offset + self._peer.page_size
        result: JsonObject = {key: list(items[offset:end])}
        if end < len(items):
            result["nextCursor"] = base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{end}".encode()).decode()
        return result

    def _start_tool_call(self, request_id: RequestId, params: JsonObject) -> None:
        name = params.get("name")
        tool = _TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
        if tool is None:
            raise _RequestError(INVALID_PARAMS, f"unknown tool: {name!r}")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise _RequestError(INVALID_PARAMS, "tools/call arguments must be an object")
        if request_id in self._running_calls:
            raise _RequestError(INVALID_REQUEST, f"request id {request_id!r} is already in use")
        call = ToolCall(self, request_id, arguments or {}, _progress_token(params))
        call.params = params
        scope = anyio.CancelScope()
        self._running_calls[request_id] = (call, tool, scope)
        self._stats.calls_by_tool[tool.name] += 1
        assert self._task_group is not None
        self._task_group.start_soon(self._run_tool_call, call, tool, scope, name=f"tools/call {tool.name}")

    async def _run_tool_call(self, call: ToolCall, tool: ToolSpec, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                try:
                    await tool.run(call)
                except ToolArgumentError as error:
                    await call.respond_error(INVALID_PARAMS, str(error))
        finally:
            self._running_calls.pop(call.request_id, None)
            outcome: Outcome = "completed" if call.responded else "cancelled" if call.cancel_requested else "aborted"
            self._stats.outcomes[call.request_id] = outcome
            logger.debug("tools/call %r (%s) %s", call.request_id, tool.name, outcome)


# -- request helpers -----------------------------------------------------------------------------------


def arrival_key(method: str, params: object) -> str:
    """How :attr:`PeerStats.arrivals` counts a request: its method, and for ``tools/call`` the tool's name."""
    if method == "tools/call" and isinstance(params, dict):
        return f"tools/call {params.get('name')}"
    return method


def read_arrivals(path: str | os.PathLike[str]) -> Counter[str]:
    """The arrivals a peer in another process wrote to ``path`` (``--arrivals``); none while it is missing."""
    try:
        with open(path, encoding="utf-8") as lines:
            return Counter(json.loads(line) for line in lines if line.endswith("\n"))
    except FileNotFoundError:
        return Counter()


def _reject_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not valid JSON")


def _is_request_id(value: object) -> TypeGuard[RequestId]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _has_modern_envelope(params: JsonObject) -> bool:
    meta = params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta


def _check_modern_envelope(params: JsonObject) -> None:
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if version is None:
        raise _RequestError(INVALID_PARAMS, f"missing params._meta[{PROTOCOL_VERSION_META_KEY!r}]")
    if not isinstance(version, str):
        raise _RequestError(INVALID_PARAMS, f"params._meta[{PROTOCOL_VERSION_META_KEY!r}] must be a string")
    if version != MODERN_PROTOCOL_VERSION:
        raise _RequestError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"unsupported protocol version: {version}",
            {"supported": [MODERN_PROTOCOL_VERSION], "requested": version},
        )


def _progress_token(params: JsonObject) -> ProgressToken | None:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if _is_request_id(token) else None


def _decode_cursor(cursor: object, item_count: int) -> int:
    if cursor is None:
        return 0
    try:
        decoded = base64.urlsafe_b64decode(str(cursor).encode()).decode()
        offset = int(decoded.removeprefix(_CURSOR_PREFIX)) if decoded.startswith(_CURSOR_PREFIX) else -1
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset = -1
    if not isinstance(cursor, str) or not 0 <= offset <= item_count:
        raise _RequestError(INVALID_PARAMS, f"invalid cursor: {cursor!r}")
    return offset


def _get_prompt(params: JsonObject) -> JsonObject:
    if params.get("name") != "greet":
        raise _RequestError(INVALID_PARAMS, f"unknown prompt: {params.get('name')!r}")
    arguments = params.get("arguments")
    name = arguments.get("name") if isinstance(arguments, dict) else None
    return {
        "description": "Greet someone by name.",
        "messages": [{"role": "user", "content": {"type": "text", "text": f"Hello, {name or 'world'}!"}}],
    }


def _read_resource(params: JsonObject) -> JsonObject:
    uri = params.get("uri")
    if not isinstance(uri, str) or uri not in _RESOURCE_TEXTS:
        raise _RequestError(INVALID_PARAMS, f"unknown resource: {uri!r}")
    return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": _RESOURCE_TEXTS[uri]}]}


# -- subprocess entry point ----------------------------------------------------------------------------


def _parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_client.testing.peer",
        description="A scripted MCP server over stdio, for testing MCP clients.",
    )
    parser.add_argument("--era", choices=("auto", "modern", "legacy"), default="auto")
    parser.add_argument("--page-size", type=int, default=50, help="tools per tools/list page (default 50)")
    parser.add_argument(
        "--discover",
        choices=("answer", "error", "silent"),
        default=None,
        help="how to treat server/discover (default: error for --era legacy, answer otherwise)",
    )
    parser.add_argument("--tasks", action="store_true", help="serve the task tools (task_work)")
    parser.add_argument("--log-level", default="WARNING", help="logging level for stderr (default WARNING)")
    parser.add_argument("--arrivals", default=None, help="append each arriving request's key to this file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one connection over stdin/stdout; return the exit status (3 when a tool killed the peer)."""
    arguments = _parse_arguments(argv)
    logging.basicConfig(
        stream=sys.stderr, level=arguments.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    peer = ScriptedPeer(
        era=arguments.era,
        page_size=arguments.page_size,
        discover=arguments.discover,
        stderr=sys.stderr,
        tasks=arguments.tasks,
        arrivals_file=open(arguments.arrivals, "a", encoding="utf-8") if arguments.arrivals else None,  # noqa: SIM115
    )
    sys.stdout.flush()
    protocol_in = open(sys.stdin.fileno(), "rb", buffering=0, closefd=False)  # noqa: SIM115
    protocol_out = open(sys.stdout.fileno(), "wb", buffering=0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.stderr  # a stray print() must not corrupt the protocol stream
    anyio.run(peer.serve, FileByteReceiveStream(protocol_in), FileByteSendStream(protocol_out), backend="asyncio")
    if peer.stats.died:
        sys.stderr.flush()
        # os._exit: a worker thread may still be blocked reading stdin, which would stall a normal exit.
        os._exit(EXIT_CODE_DIED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
