"""A 2026-07-28 request cancelled before its answer began still has its socket shut at once, on the engine over
httpcore2: a server that sends no headers until its first event (the Python SDK's, while a tool runs) sees the
stream end in the same loop turn as the cancel, not after the reader task wakes up and httpcore2 closes the
connection. Checked against a real local socket that reads the request and never answers."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest

from mcp_client._httpx import HTTPX2
from mcp_client.events import CancelMethod
from mcp_client.protocol.era import PROTOCOL_VERSION_KEY
from mcp_client.transports.http import _HttpConnection
from mcp_client.transports.http._engine import CoreEngine
from mcp_client.transports.http._state import ConnectionSettings
from mcp_client.transports.http._transport import DEFAULT_LIMITS, DEFAULT_TIMEOUT

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


class _Handler:
    def on_message(self, message: object, stream: object = None) -> None: ...
    def on_invalid(self, detail: str, raw: bytes, request_id: object) -> None: ...
    def on_request_failed(self, request_id: object, error: BaseException) -> None: ...
    def on_closed(self, error: BaseException | None) -> None: ...


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.create_server(("127.0.0.1", 0))
    sock.setblocking(False)
    yield sock
    sock.close()


async def _accept_request(listener: socket.socket) -> tuple[socket.socket, bytes]:
    """Accept one connection and read one whole request from it (head and Content-Length body); answer nothing."""
    await anyio.wait_readable(listener)
    server, _ = listener.accept()
    server.setblocking(False)
    received = b""
    while True:
        head, separator, body = received.partition(b"\r\n\r\n")
        if separator:
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            if len(body) >= length:
                return server, received
        await anyio.wait_readable(server)
        chunk = server.recv(65536)
        assert chunk, "the client closed before its request was whole"
        received += chunk


def _call(request_id: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "sleep", "arguments": {}, "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}},
    }


@asynccontextmanager
async def _one_request_written(
    listener: socket.socket,
) -> AsyncIterator[tuple[_HttpConnection, socket.socket, bytes]]:
    """A connection on the core engine that has sent request 1 to ``listener``: the connection, the server's end of
    the socket and what it received (nothing is ever answered); the connection is closed after the block."""
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    engine = CoreEngine(httpx2.URL(url), DEFAULT_LIMITS, DEFAULT_TIMEOUT)
    try:
        async with anyio.create_task_group() as task_group:
            connection = _HttpConnection(ConnectionSettings(url, url), engine, _Handler(), task_group, HTTPX2)  # type: ignore[arg-type]
            await connection.send_request(_call(1))
            server, request = await _accept_request(listener)
            with server:
                yield connection, server, request
            await connection.close()
    finally:
        await engine.aclose()


async def test_a_cancel_before_the_answer_began_shuts_the_socket_at_once(listener: socket.socket) -> None:
    async with _one_request_written(listener) as (connection, server, request):
        assert request.startswith(b"POST /mcp HTTP/1.1")
        assert connection.try_cancel(1, "timed out") is CancelMethod.STREAM_CLOSE
        assert server.recv(100) == b""  # end of stream already: no await happened since the cancel
    assert connection._open_responses == {}


async def test_releasing_another_request_leaves_the_socket_alone(listener: socket.socket) -> None:
    """Only the request written to a socket may cut it: releasing another one (never sent) touches nothing."""
    async with _one_request_written(listener) as (connection, server, _):
        connection.release(2)  # never sent: nothing of request 1 is touched
        with pytest.raises(BlockingIOError):
            server.recv(100)
        connection.release(1)
        assert server.recv(100) == b""
