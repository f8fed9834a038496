"""The server's stdin and stdout as pipes the asyncio event loop drives directly.

Through anyio's process streams every chunk the server writes travels: the loop's pipe callback resolves a future,
the reader task is scheduled, resumes through several coroutine frames, splits the chunk, and waits on a new
future. Every write, for its part, ends with a shielded checkpoint: a cancel scope and a whole loop turn. On
asyncio under POSIX the client owns both pipes instead: the loop calls a protocol's ``data_received`` that runs the
:class:`~mcp_client.transports.stream.LineSplitter` on the spot (one callback per chunk, nothing scheduled), and a
write hands the bytes to the pipe transport and waits only when its buffer is full. On trio the transport uses
pipes of its own (:mod:`~mcp_client.transports.stdio._fd_pipes`), on Windows anyio's process streams.

A request written while the server is still busy with earlier ones is corked until the end of the loop turn and
leaves in one write with the others of the turn (see :class:`PipeWriter`); a lone request is never delayed.
"""

from __future__ import annotations

import asyncio
import os

import anyio
import anyio.abc

from mcp_client._backends.auto import current_backend
from mcp_client.transports.base import MessageHandler
from mcp_client.transports.stream import BURST_PAUSE, LineSplitter, batch_hooks

__all__ = ["CORK_LIMIT", "ChildPipes", "PipeWriter"]

CORK_LIMIT = 65536
"""Bytes of corked writes that go out at once, without waiting for the end of the turn (a pipe's capacity)."""


class _SplitterProtocol(asyncio.Protocol):
    def __init__(self, splitter: LineSplitter, ended: asyncio.Future[None], handler: MessageHandler) -> None:
        self._splitter = splitter
        self._ended = ended
        self._batch_begin, self._batch_end = batch_hooks(handler)
        self._transport: asyncio.ReadTransport | None = None
        self._resuming: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._batch_begin()
        try:
            self._splitter.feed(data)
        finally:
            self._batch_end()
        if self._splitter.streaming and self._resuming is None and self._transport is not None:
            # Notifications alone: the server is streaming; take what it writes next in one piece (BURST_PAUSE).
            self._transport.pause_reading()
            self._resuming = asyncio.get_running_loop().call_later(BURST_PAUSE, self._resume)

    def _resume(self) -> None:
        self._resuming = None
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    def eof_received(self) -> bool:
        return False  # nothing more will come: let the transport close

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if self._resuming is not None:
            self._resuming.cancel()
            self._resuming = None
        if not self._ended.done():
            self._ended.set_result(None)


class _WriterProtocol(asyncio.BaseProtocol):
    """Flow control of the write pipe: the transport pauses us when its buffer is above its high-water mark."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.paused = False
        self.lost = False
        self._drained: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._wake()

    def _wake(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    async def drained(self) -> None:
        while self.paused and not self.lost:
            self._drained = self.loop.create_future()
            await self._drained


class PipeWriter(anyio.abc.ByteSendStream):
    """anyio's byte-stream interface over an asyncio write-pipe transport, waiting only while its buffer is full.

    A write the caller marks ``corked`` (the server is still busy with earlier requests) waits, like a corked
    socket's, until the end of the loop turn (or until :data:`CORK_LIMIT` bytes are corked), and everything corked
    in the turn leaves in one write: a server that is the bottleneck then finds several requests per wake-up. A
    write that is not corked (a lone request, a cancellation, a notification) leaves at once, after whatever was
    corked before it.
    """

    def __init__(self, transport: asyncio.WriteTransport, protocol: _WriterProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._loop = protocol.loop
        self._closed = False
        self._corked: list[bytes] = []
        self._corked_size = 0

    def try_send(self, item: bytes, *, corked: bool = False) -> bool:
        """Hand ``item`` to the pipe now if its buffer is not full; ``False`` (nothing written) otherwise.

        ``corked``: the server is busy with earlier requests, so ``item`` may wait until the end of this loop turn
        and leave in one write with everything else written in the turn (see :class:`PipeWriter`)."""
        if self._protocol.paused and not self._closed and not self._transport.is_closing():
            return False
        if corked and not self._closed and not self._transport.is_closing():
            if not self._corked:
                self._loop.call_soon(self._flush)
            self._corked.append(item)
            self._corked_size += len(item)
            if self._corked_size >= CORK_LIMIT:
                self._flush()
            return True
        self._write(item)
        return True

    def _flush(self) -> None:
        """The end of the loop turn: what was corked leaves in one write (unless the pipe went in between)."""
        if self._corked and not self._closed and not self._transport.is_closing():
            self._transport.write(b"".join(self._corked))
        self._corked.clear()
        self._corked_size = 0

    async def send(self, item: bytes) -> None:
        self._write(item)
        if self._protocol.paused:
            await self._protocol.drained()
            if self._protocol.lost:
                raise anyio.BrokenResourceError

    def _write(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._transport.is_closing():
            raise anyio.BrokenResourceError
        if self._corked:  # what was corked goes first: lines leave in the order they were written
            self._corked.append(item)
            item = b"".join(self._corked)
            self._corked.clear()
            self._corked_size = 0
        self._transport.write(item)
        if self._transport.is_closing():  # the write failed at once (the server's end of the pipe is gone)
            raise anyio.BrokenResourceError

    def abort(self) -> None:
        """Close the pipe now, dropping what is still buffered (unless it is closed already)."""
        self._closed = True
        self._corked.clear()
        transport = self._transport
        # Closing already, with nothing left to flush (closed after a failed write, or flushed): it goes by itself.
        if not self._protocol.lost and (not transport.is_closing() or transport.get_write_buffer_size()):
            transport.abort()

    async def aclose(self) -> None:
        """Close the pipe once what is buffered has been written (the server then sees end of input)."""
        self._flush()
        self._closed = True
        self._transport.close()
        await anyio.lowlevel.checkpoint()


class ChildPipes:
    """The child's stdin and stdout, as pipes of our own that the running asyncio loop serves. Use :meth:`open`."""

    __slots__ = ("_stdin_write", "_stdin_writer", "_stdout_read", "stdin", "stdout")

    def __init__(self) -> None:
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        self._stdin_write: int | None = stdin_write
        self._stdout_read: int | None = stdout_read
        self._stdin_writer: PipeWriter | None = None
        self.stdin: int | None = stdin_read
        """Give this to the child as its stdin, then call :meth:`spawned`."""
        self.stdout: int | None = stdout_write
        """Give this to the child as its stdout, then call :meth:`spawned`."""

    @classmethod
    def open(cls) -> ChildPipes | None:
        """New pipes when this runs on asyncio under POSIX, else ``None`` (use anyio's process streams)."""
        return cls() if current_backend().drives_pipes else None

    def spawned(self) -> None:
        """The child holds its copies of its ends now; ours must go, or end of input would never be seen."""
        for fd in (self.stdin, self.stdout):
            if fd is not None:
                os.close(fd)
        self.stdin = self.stdout = None

    def close(self) -> None:
        """Close everything: what :meth:`writer` and :meth:`read_messages` did not take over, and the write pipe
        even if it still holds bytes a server that stopped reading never took."""
        if self._stdin_writer is not None:
            self._stdin_writer.abort()
            self._stdin_writer = None
        self.spawned()
        for fd in (self._stdin_write, self._stdout_read):
            if fd is not None:
                os.close(fd)
        self._stdin_write = self._stdout_read = None

    async def writer(self) -> PipeWriter:
        """The server's stdin as a byte stream (call once)."""
        assert self._stdin_write is not None, "writer() runs once"
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(self._stdin_write, "wb", buffering=0)
        self._stdin_write = None  # the file object owns it now
        try:
            transport, protocol = await loop.connect_write_pipe(lambda: _WriterProtocol(loop), pipe)
        except BaseException:
            pipe.close()
            raise
        self._stdin_writer = PipeWriter(transport, protocol)
        return self._stdin_writer

    async def read_messages(self, handler: MessageHandler, *, max_message_size: int) -> None:
        """Deliver the server's messages to ``handler`` from the loop's own callbacks; return at end of input."""
        assert self._stdout_read is not None, "read_messages() runs once"
        loop = asyncio.get_running_loop()
        splitter = LineSplitter(handler, max_message_size=max_message_size)
        ended: asyncio.Future[None] = loop.create_future()
        pipe = os.fdopen(self._stdout_read, "rb", buffering=0)
        self._stdout_read = None  # the file object owns it now
        try:
            transport, _ = await loop.connect_read_pipe(lambda: _SplitterProtocol(splitter, ended, handler), pipe)
        except BaseException:
            pipe.close()
            raise
        try:
            await ended
        finally:
            transport.close()
        splitter.finish()
