"""Which pipes a stdio server gets, and how each is read and written, per platform and backend.

* asyncio on POSIX: stdin and stdout are driven by the loop's own pipe transports
  (:class:`~mcp_client.transports.stdio._loop_pipes.ChildPipes`), stderr is a pipe of ours (:mod:`._fd_pipes`).
* trio (or another anyio backend) on POSIX: all three are pipes of ours (:mod:`._fd_pipes`).
* Windows: anyio's process streams.

Either way the process object holds no pipe on POSIX, so closing the connection closes every descriptor at once,
and asyncio's subprocess transport closes as soon as the child is reaped. This module only opens, hands over,
drives and closes the pipes; what the bytes mean is :mod:`~mcp_client.transports.stream`'s.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import anyio
import anyio.abc

from mcp_client.transports.base import MessageHandler
from mcp_client.transports.stdio._fd_pipes import FdPipe, FdWriter, read_fd
from mcp_client.transports.stdio._loop_pipes import ChildPipes
from mcp_client.transports.stream import BURST_PAUSE, LineSplitter, batch_hooks, read_lines

__all__ = ["ChildIO"]

_POSIX = sys.platform != "win32"


class ChildIO:
    """The three pipes of one server process. Create it in the event loop, pass :meth:`spawn_options` to the spawn,
    call :meth:`spawned` after it, and :meth:`close` in the end (always)."""

    def __init__(self) -> None:
        self._loop_pipes = ChildPipes.open() if _POSIX else None
        own = _POSIX and self._loop_pipes is None
        self._stdin = FdPipe.open(child_reads=True) if own else None
        self._stdout = FdPipe.open(child_reads=False) if own else None
        self._stderr = FdPipe.open(child_reads=False) if _POSIX else None

    def spawn_options(self) -> tuple[int, int, int]:
        """``stdin``, ``stdout`` and ``stderr`` for :func:`anyio.open_process`."""
        loop_pipes = self._loop_pipes
        if loop_pipes is not None:
            assert loop_pipes.stdin is not None, "spawn_options() comes before spawned()"
            assert loop_pipes.stdout is not None
            return loop_pipes.stdin, loop_pipes.stdout, _child_end(self._stderr)
        return _child_end(self._stdin), _child_end(self._stdout), _child_end(self._stderr)

    def spawned(self) -> None:
        """The child holds its ends now: close our copies of them."""
        if self._loop_pipes is not None:
            self._loop_pipes.spawned()
        for pipe in (self._stdin, self._stdout, self._stderr):
            if pipe is not None:
                pipe.spawned()

    async def writer(self, process: anyio.abc.Process) -> anyio.abc.ByteSendStream:
        """The server's stdin as a byte stream (call once)."""
        if self._loop_pipes is not None:
            return await self._loop_pipes.writer()
        if self._stdin is not None:
            return FdWriter(self._stdin)
        assert process.stdin is not None
        return process.stdin

    async def read_messages(self, process: anyio.abc.Process, handler: MessageHandler, max_message_size: int) -> None:
        """Deliver the server's messages to ``handler``; return at end of its output."""
        if self._loop_pipes is not None:
            await self._loop_pipes.read_messages(handler, max_message_size=max_message_size)
        elif self._stdout is not None:
            splitter = LineSplitter(handler, max_message_size=max_message_size)
            batch_begin, batch_end = batch_hooks(handler)

            def feed(chunk: bytes) -> float | None:
                batch_begin()
                try:
                    splitter.feed(chunk)
                finally:
                    batch_end()
                return BURST_PAUSE if splitter.streaming else None

            await read_fd(self._stdout, feed)
            splitter.finish()
        else:
            assert process.stdout is not None
            await read_lines(process.stdout, handler, max_message_size=max_message_size)

    async def read_stderr(self, process: anyio.abc.Process, on_chunk: Callable[[bytes], None]) -> None:
        """Hand each chunk of the server's stderr to ``on_chunk``; return at its end."""
        if self._stderr is not None:
            await read_fd(self._stderr, on_chunk)
            return
        assert process.stderr is not None
        try:
            async for chunk in process.stderr:
                on_chunk(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def close(self) -> None:
        """Close every descriptor still ours, the stdin pipe even if it holds bytes the server never read."""
        if self._loop_pipes is not None:
            self._loop_pipes.close()
        for pipe in (self._stdin, self._stdout, self._stderr):
            if pipe is not None:
                pipe.close()


def _child_end(pipe: FdPipe | None) -> int:
    if pipe is None:
        return subprocess.PIPE
    assert pipe.child_end is not None
    return pipe.child_end
