"""The server's pipes as non-blocking file descriptors of our own, read and written with ``os.read``/``os.write``.

Used on POSIX for what asyncio's own pipe transports do not drive (:mod:`~mcp_client.transports.stdio._loop_pipes`):
stdin and stdout on trio, stderr on every backend. Owning the descriptors gives two guarantees anyio's process
streams do not:

* **Nothing outlives the connection.** The descriptors are closed when it ends, not when a garbage collection
  finds the stream objects, and the process object holds no pipe (on asyncio its transport then closes as soon
  as the child is reaped, before the loop can end).
* **A cancelled write never glues two messages.** :class:`FdWriter` knows how many bytes of a line went out.
  When a write is cancelled half way (the maximum, with a server that stopped reading and a full pipe), the rest
  of that line is kept and written before anything else: the next message starts on a line of its own. A write
  cancelled before its first byte left is dropped whole.

This module touches file descriptors and anyio's ``wait_readable``/``wait_writable`` only; framing is the
caller's (:class:`~mcp_client.transports.stream.LineSplitter`).
"""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Callable

import anyio
import anyio.abc
import anyio.lowlevel

__all__ = ["FdPipe", "FdWriter", "read_fd"]

_CHUNK = 65536
_ATOMIC = getattr(select, "PIPE_BUF", 512)
"""A write to a pipe of at most this many bytes is all or nothing (POSIX)."""


class FdPipe:
    """One pipe: the end the child gets (:attr:`child_end`) and ours, non-blocking. Use :meth:`open`."""

    __slots__ = ("child_end", "our_end")

    def __init__(self, child_end: int, our_end: int) -> None:
        self.child_end: int | None = child_end
        """Give this to the child, then call :meth:`spawned`."""
        self.our_end: int | None = our_end

    @classmethod
    def open(cls, *, child_reads: bool) -> FdPipe:
        """A new pipe; ``child_reads``: the child reads it (its stdin), else it writes it (stdout, stderr)."""
        read_end, write_end = os.pipe()
        child_end, our_end = (read_end, write_end) if child_reads else (write_end, read_end)
        os.set_blocking(our_end, False)  # ours only: the two ends are separate open files
        return cls(child_end, our_end)

    def spawned(self) -> None:
        """The child holds its copy now; ours must go, or the other side's end of input would never be seen."""
        if self.child_end is not None:
            os.close(self.child_end)
            self.child_end = None

    def close(self) -> None:
        """Close both ends that are still ours, waking any task that waits on them."""
        self.spawned()
        if self.our_end is not None:
            fd, self.our_end = self.our_end, None
            with contextlib.suppress(RuntimeError):  # no event loop (closed from a finaliser): nothing waits
                anyio.notify_closing(fd)
            os.close(fd)


async def read_fd(pipe: FdPipe, on_chunk: Callable[[bytes], float | None]) -> None:
    """Hand every chunk read from ``pipe`` to ``on_chunk``; return at end of input or once the pipe is closed.

    ``on_chunk`` may return a number of seconds to wait before the next read (a server streaming notifications:
    what it writes meanwhile is then taken in one piece); ``None`` reads on at once."""
    while True:
        fd = pipe.our_end
        if fd is None:
            return
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            try:
                await anyio.wait_readable(fd)
            except (anyio.ClosedResourceError, OSError):
                return
            continue
        except OSError:
            return
        if not chunk:
            return
        pause = on_chunk(chunk)
        if pause:
            await anyio.sleep(pause)
        else:
            await anyio.lowlevel.checkpoint()  # a server that never pauses must not starve the other tasks


class FdWriter(anyio.abc.ByteSendStream):
    """The server's stdin: writes whole lines, and finishes a line whose write was cancelled before the next."""

    def __init__(self, pipe: FdPipe) -> None:
        self._pipe = pipe
        self._unsent: memoryview | None = None  # the rest of a line a cancelled write began

    @property
    def mid_line(self) -> bool:
        """A cancelled write left part of a line unwritten (it goes out before anything else)."""
        return bool(self._unsent)

    def try_send(self, item: bytes, *, corked: bool = False) -> bool:
        """Write ``item`` now if that is certain to write all of it; ``False`` (nothing written) otherwise.
        (``corked``, the hint that the server is busy, is not acted on here: each line is written at once.)"""
        fd = self._fd()
        if self._unsent or len(item) > _ATOMIC:
            return False
        try:
            os.write(fd, item)  # a pipe writes up to PIPE_BUF bytes whole or not at all
        except BlockingIOError:
            return False
        except OSError as exc:
            raise anyio.BrokenResourceError from exc
        return True

    async def send(self, item: bytes) -> None:
        if self._unsent:
            await self._drain()  # the end of an earlier line first
        else:
            await anyio.lowlevel.checkpoint_if_cancelled()
        self._unsent = memoryview(item)
        first = len(item)
        try:
            await self._drain()
        except anyio.get_cancelled_exc_class():
            if self._unsent is not None and len(self._unsent) == first:
                self._unsent = None  # not a byte of it left: drop it whole
            raise

    async def _drain(self) -> None:
        while self._unsent:
            fd = self._fd()
            try:
                written = os.write(fd, self._unsent)
            except BlockingIOError:
                try:
                    await anyio.wait_writable(fd)
                except OSError as exc:
                    raise anyio.BrokenResourceError from exc
                continue
            except OSError as exc:  # EPIPE: the server's end is closed
                self._unsent = None
                raise anyio.BrokenResourceError from exc
            self._unsent = self._unsent[written:]
        self._unsent = None

    def _fd(self) -> int:
        fd = self._pipe.our_end
        if fd is None:
            raise anyio.ClosedResourceError
        return fd

    async def aclose(self) -> None:
        """Close the pipe (the server then sees end of input), dropping the rest of a cut line, if any."""
        self._unsent = None
        self._pipe.close()
        await anyio.lowlevel.checkpoint()
