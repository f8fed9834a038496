"""One interface over the clients under test: mcp_client, the reference ``mcp.Client``, and the raw wire floors.

A :class:`Driver` calls a tool and returns when the answer is in (parsed the way that client parses it). Every
measurement in :mod:`benchmarks.measure` is written against it, so both SDKs run exactly the same loop:

* ``ours`` - ``mcp_client.Client`` on :func:`mcp_client.stdio` or ``mcp_client.transports.http.http``, with the
  default policy (60 s idle, 600 s maximum: every call carries both timers). Over HTTP on the client ``http()``
  makes (httpx2).
* ``ours_httpx`` - HTTP only: the same, on a caller's httpx 0.28 ``httpx.AsyncClient`` with the limits and
  timeouts ``http()`` would use (httpcore 1.0's own pool, as a host would hand it to us).
* ``reference`` - ``mcp.Client`` (mcp 2.3.0) on ``StdioServerParameters`` or ``streamable_http_client``, with its
  defaults except the HTTP connection pool, uncapped like mcp_client's (see :func:`_reference`).
* ``raw`` - the wire floor: the same ``tools/call`` request, bytes built with ``json.dumps`` and answers parsed with
  ``json.loads``, over the child's pipes (anyio process streams, one newline per message, one call at a time) or as
  one bare httpx streaming POST with the same headers (on an uncapped pool with no read timeout, so any number of
  calls can be in flight). It runs on the same event loop and does nothing else: no ids table, no timers, no models;
  progress notifications are parsed and a callback is called for each (the floor of the progress figure). Over
  HTTP on httpx2, the library ``http()`` builds on.
* ``raw_httpx`` - HTTP only: the same floor on httpx 0.28.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

import anyio
import anyio.abc

__all__ = [
    "CLIENTS",
    "PROTOCOL_VERSION",
    "SERVER_SCRIPT",
    "ClientName",
    "Driver",
    "Progressed",
    "TransportName",
    "http_available",
    "open_driver",
]

ClientName = Literal["ours", "ours_httpx", "reference", "raw", "raw_httpx"]
TransportName = Literal["stdio", "http"]
Progressed = Callable[[], None]
"""What a driver calls once per progress notification its client hands to the caller."""

CLIENTS: tuple[ClientName, ...] = ("ours", "ours_httpx", "reference", "raw", "raw_httpx")
HTTPX_LINE: dict[ClientName, str] = {"ours": "httpx2", "ours_httpx": "httpx", "raw": "httpx2", "raw_httpx": "httpx"}
"""Which library each HTTP client other than the reference runs on."""
SERVER_SCRIPT = Path(__file__).resolve().parent / "bench_server.py"
PROTOCOL_VERSION = "2026-07-28"
_ACCEPT = "application/json, text/event-stream"


class Driver(Protocol):
    """A connected client that can call a tool of the benchmark server."""

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        on_progress: Progressed | None = None,
    ) -> str:
        """Call ``tool``; return the text of its first content block. ``timeout``: this call's hard limit."""
        ...


def http_available() -> bool:
    """True when ``mcp_client.transports.http`` can be imported (the HTTP transport of mcp_client)."""
    try:
        import mcp_client.transports.http  # noqa: F401
    except ImportError:
        return False
    return True


def server_command(*extra: str) -> list[str]:
    """The command line of the benchmark server with this interpreter."""
    return [sys.executable, str(SERVER_SCRIPT), *extra]


@asynccontextmanager
async def open_driver(
    client: ClientName,
    transport: TransportName,
    url: str | None = None,
    *,
    watch_cancels: bool = False,
    server_args: tuple[str, ...] = (),
) -> AsyncIterator[Driver]:
    """Connect ``client`` to the benchmark server (spawned here for stdio, with ``server_args``; at ``url`` for
    HTTP).

    ``watch_cancels``: mcp_client only, for the timeout job: note when each cancellation was written (from its
    ``CancelSent`` event, as ``driver.cancel_written_at``), so the server's own reaction time can be told apart.
    Off for every other job: an event hook costs a little on every call.
    """
    if transport == "http" and url is None:
        raise ValueError("HTTP needs the server's URL")
    if client in ("ours_httpx", "raw_httpx") and transport != "http":
        raise ValueError(f"{client} is an HTTP client")
    if client in ("ours", "ours_httpx"):
        async with _ours(transport, url, watch_cancels, HTTPX_LINE[client], server_args) as driver:
            yield driver
    elif client == "reference":
        async with _reference(transport, url, server_args) as driver:
            yield driver
    elif transport == "stdio":
        async with _raw_stdio(server_args) as driver:
            yield driver
    else:
        assert url is not None
        async with _raw_http(url, HTTPX_LINE[client]) as driver:
            yield driver


# -- mcp_client ---------------------------------------------------------------------------------------------------


class _CancelClock:
    """``time.time()`` of the last cancellation mcp_client wrote (its ``CancelSent`` event follows the write)."""

    def __init__(self) -> None:
        self.written_at: float | None = None

    def saw(self, event: object) -> None:
        from mcp_client import CancelSent

        if isinstance(event, CancelSent):
            self.written_at = time.time()


class _Ours:
    def __init__(self, client: Any, policy_type: Callable[..., Any], cancels: _CancelClock) -> None:
        self._client = client
        self._policy_type = policy_type
        self._cancels = cancels

    @property
    def cancel_written_at(self) -> float | None:
        """When the last cancellation was written (None unless the driver watches cancellations)."""
        return self._cancels.written_at

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        on_progress: Progressed | None = None,
    ) -> str:
        if timeout is None and on_progress is None:
            result = await self._client.call_tool(tool, arguments)
            return _first_text(result.content)
        options: dict[str, Any] = {}
        if timeout is not None:
            options["timeout"] = self._policy_type(idle=None, maximum=timeout)
        if on_progress is not None:
            tick = on_progress

            def callback(_progress: object) -> None:
                tick()

            options["on_progress"] = callback
        result = await self._client.call_tool(tool, arguments, **options)
        return _first_text(result.content)


@asynccontextmanager
async def _ours(
    transport: TransportName, url: str | None, watch_cancels: bool, line: str, server_args: tuple[str, ...]
) -> AsyncIterator[Driver]:
    from mcp_client import Client, TimeoutPolicy, Transport, stdio

    async with AsyncExitStack() as stack:
        connection: Transport
        if transport == "stdio":
            command = server_command(*server_args)
            connection = stdio(command[0], command[1:])
        else:
            from mcp_client.transports.http import http

            assert url is not None
            if line == "httpx2":
                connection = http(url)
            else:
                import httpx

                from mcp_client.transports.http import DEFAULT_LIMITS, DEFAULT_TIMEOUT

                caller = httpx.AsyncClient(
                    limits=httpx.Limits(
                        max_connections=DEFAULT_LIMITS.max_connections,
                        max_keepalive_connections=DEFAULT_LIMITS.max_keepalive_connections,
                        keepalive_expiry=DEFAULT_LIMITS.keepalive_expiry,
                    ),
                    timeout=httpx.Timeout(
                        connect=DEFAULT_TIMEOUT.connect,
                        read=DEFAULT_TIMEOUT.read,
                        write=DEFAULT_TIMEOUT.write,
                        pool=DEFAULT_TIMEOUT.pool,
                    ),
                )
                await stack.enter_async_context(caller)
                connection = http(url, client=caller)
        # A loaded machine can take seconds to start the server: wait for the probe as long as for connecting.
        policy = TimeoutPolicy(idle=60, maximum=600, connect=60)
        cancels = _CancelClock()
        on_event = cancels.saw if watch_cancels else None
        async with Client(connection, timeout=policy, probe_timeout=60, on_event=on_event) as client:
            yield _Ours(client, TimeoutPolicy, cancels)


# -- the reference client (mcp 2.3.0) ------------------------------------------------------------------------------


class _Reference:
    def __init__(self, client: Any) -> None:
        self._client = client

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        on_progress: Progressed | None = None,
    ) -> str:
        callback = None
        if on_progress is not None:
            tick = on_progress

            async def callback(progress: float, total: float | None, message: str | None) -> None:
                tick()

        result = await self._client.call_tool(tool, arguments, read_timeout_seconds=timeout, progress_callback=callback)
        return _first_text(result.content)


@asynccontextmanager
async def _reference(transport: TransportName, url: str | None, server_args: tuple[str, ...]) -> AsyncIterator[Driver]:
    import mcp
    from mcp.client.stdio import StdioServerParameters

    if transport == "stdio":
        command = server_command(*server_args)
        async with mcp.Client(StdioServerParameters(command=command[0], args=command[1:])) as client:
            yield _Reference(client)
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    assert url is not None
    # Its own defaults, except the pool: no cap on connections and 20 kept alive, as mcp_client's http() has
    # (the default cap of 100 would queue calls 101+ in the pool and fail them after 30 s).
    async with (
        httpx2.AsyncClient(
            timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=20),
        ) as http_client,
        mcp.Client(streamable_http_client(url, http_client=http_client)) as client,
    ):
        yield _Reference(client)


def _first_text(content: list[Any]) -> str:
    text = getattr(content[0], "text", None) if content else None
    return text if isinstance(text, str) else ""


# -- the wire floors -----------------------------------------------------------------------------------------------


_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-floor", "version": "0"},
}


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = dict(_META, progressToken=f"p{request_id}") if method == "tools/call" else _META
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params, _meta=meta)}


def _tool_text(response: Any) -> str:
    if not isinstance(response, dict) or "result" not in response:
        raise RuntimeError(f"not a result: {response!r}")
    content = response["result"].get("content") or [{}]
    text = content[0].get("text", "")
    return text if isinstance(text, str) else ""


class _RawStdio:
    """Newline JSON over the child's pipes; one call at a time (no id table: the next line is the answer)."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._buffer = b""
        self._next_id = 0

    async def roundtrip(self, method: str, params: dict[str, Any], on_progress: Progressed | None = None) -> Any:
        self._next_id += 1
        await self._stdin.send(json.dumps(_request(self._next_id, method, params)).encode() + b"\n")
        while True:
            newline = self._buffer.find(b"\n")
            while newline < 0:
                self._buffer += await self._stdout.receive(65536)
                newline = self._buffer.find(b"\n")
            line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
            message = json.loads(line)
            if message.get("id") == self._next_id:
                return message
            if on_progress is not None and message.get("method") == "notifications/progress":
                on_progress()

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        on_progress: Progressed | None = None,
    ) -> str:
        if timeout is not None:
            raise NotImplementedError("the raw floor has no timeouts")
        return _tool_text(await self.roundtrip("tools/call", {"name": tool, "arguments": arguments}, on_progress))


@asynccontextmanager
async def _raw_stdio(server_args: tuple[str, ...]) -> AsyncIterator[Driver]:
    async with await anyio.open_process(server_command(*server_args), stderr=subprocess.DEVNULL) as process:
        raw = _RawStdio(process)
        await raw.roundtrip("server/discover", {})
        try:
            yield raw
        finally:
            process.kill()


class _RawHttp:
    """One bare streaming POST per call with the 2026-07-28 headers; the answer read from the JSON or SSE body.

    Any number of calls can be in flight (each has its own id and its own connection from an uncapped pool). The
    SSE body is split into lines as its chunks arrive and parsed up to the ``data:`` line that carries this call's
    id; the rest of the body (the end of the chunked stream) is then drained unparsed so the connection goes back
    to the pool, as ``client.post`` leaves it.
    """

    def __init__(self, client: Any, url: str) -> None:
        self._client = client
        self._url = url
        self._next_id = 0

    async def roundtrip(
        self, method: str, params: dict[str, Any], name: str | None = None, on_progress: Progressed | None = None
    ) -> Any:
        self._next_id += 1
        request_id = self._next_id
        headers = {
            "Content-Type": "application/json",
            "Accept": _ACCEPT,
            "MCP-Protocol-Version": PROTOCOL_VERSION,
            "Mcp-Method": method,
        }
        if name is not None:
            headers["Mcp-Name"] = name
        body = json.dumps(_request(request_id, method, params)).encode()
        async with self._client.stream("POST", self._url, content=body, headers=headers) as response:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                return json.loads(await response.aread())
            chunks = response.aiter_bytes()
            buffer = b""
            async for chunk in chunks:
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    if line.startswith(b"data:"):
                        message = json.loads(line[5:])
                        if message.get("id") == request_id:
                            async for _ in chunks:
                                pass
                            return message
                        if on_progress is not None and message.get("method") == "notifications/progress":
                            on_progress()
            raise RuntimeError("the SSE stream ended without the answer")

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        on_progress: Progressed | None = None,
    ) -> str:
        if timeout is not None:
            raise NotImplementedError("the raw floor has no timeouts")
        return _tool_text(await self.roundtrip("tools/call", {"name": tool, "arguments": arguments}, tool, on_progress))


@asynccontextmanager
async def _raw_http(url: str, line: str) -> AsyncIterator[Driver]:
    # No cap on connections (each call in flight holds one) and no read timeout (a call may be held for minutes),
    # as the memory job needs; 20 kept alive, httpx's default and what the other two clients keep.
    library: Any = importlib.import_module(line)
    timeout = library.Timeout(60.0, read=None)
    async with library.AsyncClient(timeout=timeout, limits=library.Limits(max_connections=None)) as client:
        raw = _RawHttp(client, url)
        await raw.roundtrip("server/discover", {})
        yield raw
