"""Byte streams for the scripted MCP peer (see :mod:`mcp_client.testing.peer`).

:func:`byte_pipe` connects a peer and a client in memory; the ``File*`` streams
adapt the subprocess's stdin and stdout. All are plain anyio byte streams, so
:meth:`ScriptedPeer.serve <mcp_client.testing.peer.ScriptedPeer.serve>` does not
care which it gets.
"""

from __future__ import annotations

import math
from typing import IO

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["FileByteReceiveStream", "FileByteSendStream", "byte_pipe"]


class _MemoryByteSendStream(ByteSendStream):
    """The writing end of :func:`byte_pipe`."""

    def __init__(self, chunks: MemoryObjectSendStream[bytes]) -> None:
        self._chunks = chunks

    async def send(self, item: bytes) -> None:
        if item:
            await self._chunks.send(bytes(item))

    async def aclose(self) -> None:
        await self._chunks.aclose()


class _MemoryByteReceiveStream(ByteReceiveStream):
    """The reading end of :func:`byte_pipe`; hands out each written chunk in pieces of at most ``max_bytes``."""

    def __init__(self, chunks: MemoryObjectReceiveStream[bytes]) -> None:
        self._chunks = chunks
        self._pending = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._pending:
            self._pending = await self._chunks.receive()
        data, self._pending = self._pending[:max_bytes], self._pending[max_bytes:]
        return data

    async def aclose(self) -> None:
        self._pending = b""
        await self._chunks.aclose()


def byte_pipe(max_buffer_size: float = math.inf) -> tuple[ByteSendStream, ByteReceiveStream]:
    """A one-way in-memory byte pipe: closing the send end gives the receive end EOF."""
    send_chunks, receive_chunks = anyio.create_memory_object_stream[bytes](max_buffer_size)
    return _MemoryByteSendStream(send_chunks), _MemoryByteReceiveStream(receive_chunks)


class FileByteReceiveStream(ByteReceiveStream):
    """Reads an unbuffered binary file (stdin) in a worker thread, returning whatever is available."""

    def __init__(self, source: IO[bytes]) -> None:
        self._source = source

    async def receive(self, max_bytes: int = 65536) -> bytes:
        # Abandoned on cancellation: a blocked read of stdin must not keep a dying peer alive.
        data = await anyio.to_thread.run_sync(self._source.read, max_bytes, abandon_on_cancel=True)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        """Nothing to do: a worker thread may still be blocked reading the file."""


class FileByteSendStream(ByteSendStream):
    """Writes an unbuffered binary file (stdout) in a worker thread."""

    def __init__(self, target: IO[bytes]) -> None:
        self._target = target

    async def send(self, item: bytes) -> None:
        if self._target.closed:
            raise anyio.ClosedResourceError
        await anyio.to_thread.run_sync(self._write_all, bytes(item))

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = self._target.write(view)
            view = view[written or 0 :]
        self._target.flush()

    async def aclose(self) -> None:
        self._target.close()
