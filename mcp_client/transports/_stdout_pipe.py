"""The server's stdout read by the asyncio event loop itself, without a task wake-up per chunk.

Through anyio's process streams every chunk the server writes travels: the loop's pipe callback resolves a future,
the reader task is scheduled, resumes through several coroutine frames, splits the chunk, and waits on a new
future. On asyncio under POSIX the client can own the stdout pipe instead and give the loop a protocol whose
``data_received`` runs the :class:`~mcp_client.transports.stream.LineSplitter` on the spot: one callback per
chunk, nothing scheduled. That roughly halves the client's CPU per progress notification and takes one task step
off every answer. On trio and on Windows the reader task reads anyio's stream as before.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp_client.transports.base import MessageHandler
from mcp_client.transports.stream import LineSplitter, batch_hooks

__all__ = ["StdoutPipe"]


class _SplitterProtocol(asyncio.Protocol):
    def __init__(self, splitter: LineSplitter, ended: asyncio.Future[None], handler: MessageHandler) -> None:
        self._splitter = splitter
        self._ended = ended
        self._batch_begin, self._batch_end = batch_hooks(handler)

    def data_received(self, data: bytes) -> None:
        self._batch_begin()
        try:
            self._splitter.feed(data)
        finally:
            self._batch_end()

    def eof_received(self) -> bool:
        return False  # nothing more will come: let the transport close

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._ended.done():
            self._ended.set_result(None)


class StdoutPipe:
    """A pipe for the child's stdout whose read end the running asyncio loop reads. Use :meth:`open`."""

    __slots__ = ("_read_fd", "write_fd")

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd: int | None = read_fd
        self.write_fd: int | None = write_fd
        """Give this to the child as its stdout, then call :meth:`spawned`."""

    @classmethod
    def open(cls) -> StdoutPipe | None:
        """A new pipe when this runs on asyncio under POSIX, else ``None`` (read anyio's stream instead)."""
        if sys.platform == "win32":
            return None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # anyio runs on trio
            return None
        read_fd, write_fd = os.pipe()
        return cls(read_fd, write_fd)

    def spawned(self) -> None:
        """The child holds its copy of the write end now; ours must go, or end of input would never be seen."""
        if self.write_fd is not None:
            os.close(self.write_fd)
            self.write_fd = None

    def close(self) -> None:
        """Close whatever :meth:`read_messages` did not take over (spawning failed, or it never ran)."""
        self.spawned()
        if self._read_fd is not None:
            os.close(self._read_fd)
            self._read_fd = None

    async def read_messages(self, handler: MessageHandler, *, max_message_size: int) -> None:
        """Deliver the server's messages to ``handler`` from the loop's own callbacks; return at end of input."""
        assert self._read_fd is not None, "read_messages() runs once"
        loop = asyncio.get_running_loop()
        splitter = LineSplitter(handler, max_message_size=max_message_size)
        ended: asyncio.Future[None] = loop.create_future()
        pipe = os.fdopen(self._read_fd, "rb", buffering=0)
        self._read_fd = None  # the file object owns it now
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
