"""A one-shot wake-up for one request's waiter, lighter than ``anyio.Event``.

Every request in flight needs one; on asyncio, ``anyio.Event`` wraps an ``asyncio.Event`` (an object and a deque),
which is a large share of the memory a call in flight holds. A bare future is enough for one waiter. On trio,
``trio.Event`` is already small. The waiter may be woken before anyone waits, and may be waited on again after a
wait was cancelled (the session re-waits after a timer wake-up).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

__all__ = ["Waiter", "new_waiter"]


class Waiter(Protocol):
    """What the session needs of a wake-up."""

    def set(self) -> None:
        """Wake the waiter (now, or as soon as it waits)."""

    async def wait(self) -> None:
        """Return once :meth:`set` has been called."""


class _FutureWaiter:
    __slots__ = ("_future", "_loop", "_set")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._future: asyncio.Future[None] | None = None
        self._set = False

    def set(self) -> None:
        self._set = True
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)

    async def wait(self) -> None:
        if self._set:
            return
        if self._future is None or self._future.done():  # first wait, or the last one was cancelled
            self._future = self._loop.create_future()
        await self._future


def new_waiter() -> Waiter:
    """A waiter for the running event loop (asyncio or trio)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # anyio runs on trio
        import trio

        return trio.Event()
    return _FutureWaiter(loop)
