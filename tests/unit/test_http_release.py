"""Ending a request over HTTP shuts its socket down at once: the server sees the stream end in the same loop turn,
without waiting for the reader task to wake up and close the response through httpx."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import anyio
import httpx
import pytest

from mcp_client._httpx import line_of
from mcp_client.events import CancelMethod
from mcp_client.transports.http import _HttpConnection
from mcp_client.transports.http._engine import ClientEngine
from mcp_client.transports.http._state import ConnectionSettings

pytestmark = pytest.mark.anyio


class _NetworkStream:
    """Stands in for httpcore's network stream: the only thing asked of it is its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def get_extra_info(self, info: str) -> object:
        return self.sock if info == "socket" else None


class _Handler:
    def on_message(self, message: object, stream: object = None) -> None: ...
    def on_invalid(self, detail: str, raw: bytes, request_id: object) -> None: ...
    def on_request_failed(self, request_id: object, error: BaseException) -> None: ...
    def on_closed(self, error: BaseException | None) -> None: ...


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, server = socket.socketpair()
    server.setblocking(False)
    yield ours, server
    ours.close()
    server.close()


async def _connection(client: httpx.AsyncClient, task_group: anyio.abc.TaskGroup) -> _HttpConnection:
    url = "http://127.0.0.1:9/mcp"
    engine = ClientEngine(client, url, None, owned=False)  # type: ignore[arg-type]
    return _HttpConnection(ConnectionSettings(url, url), engine, _Handler(), task_group, line_of(client))  # type: ignore[arg-type]


async def test_a_modern_cancel_shuts_the_socket_before_returning(pair: tuple[socket.socket, socket.socket]) -> None:
    ours, server = pair
    async with httpx.AsyncClient() as client, anyio.create_task_group() as task_group:
        connection = await _connection(client, task_group)
        scope = anyio.CancelScope()
        connection._streams[7] = scope
        connection._open_responses[7] = _NetworkStream(ours)
        assert connection.try_cancel(7, "timed out") is CancelMethod.STREAM_CLOSE
        assert server.recv(100) == b""  # end of stream, already: no await happened since the call
        assert scope.cancel_called
        assert connection._open_responses == {}


async def test_an_answered_request_keeps_its_socket(pair: tuple[socket.socket, socket.socket]) -> None:
    ours, server = pair
    async with httpx.AsyncClient() as client, anyio.create_task_group() as task_group:
        connection = await _connection(client, task_group)
        connection._open_responses[8] = _NetworkStream(ours)  # no scope: the answer arrived, the stream drains
        connection.release(8)
        ours.send(b"still open")
        assert server.recv(100) == b"still open"


async def test_a_legacy_cancel_is_left_to_the_posted_notification(pair: tuple[socket.socket, socket.socket]) -> None:
    ours, server = pair
    async with httpx.AsyncClient() as client, anyio.create_task_group() as task_group:
        connection = await _connection(client, task_group)
        connection._streams[9] = anyio.CancelScope()
        connection._open_responses[9] = _NetworkStream(ours)
        connection._legacy = True  # a 2025-11-25 session: its initialize answer was adopted
        assert connection.try_cancel(9, "timed out") is None
        with pytest.raises(BlockingIOError):
            server.recv(100)  # nothing happened yet: cancel() will POST and then release


async def test_a_stream_without_a_socket_is_left_alone() -> None:
    async with httpx.AsyncClient() as client, anyio.create_task_group() as task_group:
        connection = await _connection(client, task_group)
        connection._streams[1] = anyio.CancelScope()
        connection._open_responses[1] = object()  # HTTP/2 or a mock transport: no socket to shut
        assert connection.try_cancel(1, None) is CancelMethod.STREAM_CLOSE
