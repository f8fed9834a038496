"""An in-process transport: the server is a coroutine in the same event loop, joined by memory byte streams.

It speaks exactly the stdio framing (newline-delimited JSON, ``notifications/cancelled`` to cancel), so every
stdio behaviour can be tested without a process, and, above all, on the same clock as the client: tests run on
trio's ``MockClock`` and never sleep for real.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_client.errors import TransportError
from mcp_client.transports.base import Connection, MessageHandler, Transport
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE, LineConnection, read_lines

__all__ = ["MemoryTransport", "ServeFunction", "memory"]

ServeFunction = Callable[[anyio.abc.ByteReceiveStream, anyio.abc.ByteSendStream], Awaitable[None]]
"""A server: reads the client's bytes from the first stream and writes its own to the second."""


class _ByteReceive(anyio.abc.ByteReceiveStream):
    def __init__(self, stream: MemoryObjectReceiveStream[bytes]) -> None:
        self._stream = stream

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._stream.receive()

    async def aclose(self) -> None:
        await self._stream.aclose()


class _ByteSend(anyio.abc.ByteSendStream):
    def __init__(self, stream: MemoryObjectSendStream[bytes]) -> None:
        self._stream = stream

    async def send(self, item: bytes) -> None:
        await self._stream.send(item)

    async def aclose(self) -> None:
        await self._stream.aclose()


def byte_stream_pair(buffer: int = 256) -> tuple[anyio.abc.ByteSendStream, anyio.abc.ByteReceiveStream]:
    """A one-way in-memory byte pipe: what is sent on the first end is received on the second."""
    send, receive = anyio.create_memory_object_stream[bytes](buffer)
    return _ByteSend(send), _ByteReceive(receive)


@dataclass(frozen=True, slots=True)
class MemoryTransport(Transport):
    """Run ``serve`` in-process as the server. Build it with :func:`memory`."""

    serve: ServeFunction
    name: str = "in-memory server"
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE

    @property
    def description(self) -> str:
        return self.name

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        to_server, server_input = byte_stream_pair()
        server_output, from_server = byte_stream_pair()
        connection = LineConnection(to_server, describe_failure=lambda: f"{self.name} stopped reading")
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._run_server, server_input, server_output)
            tg.start_soon(self._read, from_server, handler)
            try:
                yield connection
            finally:
                await connection.close_input()
                tg.cancel_scope.cancel()

    async def _run_server(self, receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        async with receive, send:
            await self.serve(receive, send)

    async def _read(self, stream: anyio.abc.ByteReceiveStream, handler: MessageHandler) -> None:
        async with stream:  # (closed however the reader ends: cancelled with the connection, most often)
            await read_lines(stream, handler, max_message_size=self.max_message_size)
        handler.on_closed(TransportError(f"{self.name} closed the connection", written=True))


def memory(
    serve: ServeFunction, *, name: str = "in-memory server", max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> MemoryTransport:
    """A transport to a server running as a coroutine in this process (for tests and embedding)."""
    return MemoryTransport(serve=serve, name=name, max_message_size=max_message_size)
