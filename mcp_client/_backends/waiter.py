"""A one-shot wake-up for one request's waiter, with a timer, lighter than an event plus a cancel scope.

Every request in flight sleeps until its answer comes, a clock of its policy may have run out, or its clocks moved
(a pause ended). On asyncio that is a bare future and a loop timer that resolves it: an ``anyio.Event`` plus an
``anyio.CancelScope`` with a deadline cost a deque, two sets and a cancellation delivered through the task, which
was the largest share of the memory a call in flight holds and of the CPU of a timer firing. On trio, a
``trio.Event`` waited on in a ``move_on_at`` scope is already small.

The waiter may be set before anyone waits, and waited on again after a wait returned or was cancelled. Which one a
request gets is chosen by :mod:`mcp_client._backends.base`.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from typing import Protocol

__all__ = ["FutureWaiter", "TrioWaiter", "Waiter"]


class Waiter(Protocol):
    """What the session needs of a wake-up."""

    def set(self) -> None:
        """Wake the waiter for good (the request settled): now, or as soon as it waits."""

    def poke(self) -> None:
        """Wake the wait under way, if any, once (the clocks moved); a later wait sleeps again."""

    async def wait(self, until: float = math.inf) -> None:
        """Return once :meth:`set` was called, on :meth:`poke`, or when the loop's clock reaches ``until``."""


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class FutureWaiter:
    """The asyncio waiter: a bare future, and a loop timer that resolves it.

    ``timer_context`` is the context the timer's callback runs in: one for all the waiters of a loop (it only
    resolves a future and reads no context variable), so a wait does not copy the caller's context for its timer,
    as ``call_at`` otherwise does: one object less made, and held, per request in flight. Never shared between
    loops (a context is entered by one thread at a time).
    """

    __slots__ = ("_future", "_loop", "_set", "_timer_context")

    def __init__(self, loop: asyncio.AbstractEventLoop, timer_context: contextvars.Context | None = None) -> None:
        self._loop = loop
        self._timer_context = timer_context
        self._future: asyncio.Future[None] | None = None
        self._set = False

    def set(self) -> None:
        self._set = True
        self.poke()

    def poke(self) -> None:
        if self._future is not None:
            _wake(self._future)

    async def wait(self, until: float = math.inf) -> None:
        if self._set:
            return
        future = self._future = self._loop.create_future()
        timer = self._loop.call_at(until, _wake, future, context=self._timer_context) if until != math.inf else None
        try:
            await future
        finally:
            self._future = None
            if timer is not None:
                timer.cancel()


class TrioWaiter:
    """The trio waiter: a ``trio.Event`` waited on in a cancel scope with a deadline."""

    __slots__ = ("_event", "_scope")

    def __init__(self) -> None:
        import trio

        self._event = trio.Event()
        self._scope: trio.CancelScope | None = None

    def set(self) -> None:
        self._event.set()

    def poke(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def wait(self, until: float = math.inf) -> None:
        import trio

        with trio.CancelScope(deadline=until) as scope:
            self._scope = scope
            try:
                await self._event.wait()
            finally:
                self._scope = None
