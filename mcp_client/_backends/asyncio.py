"""The asyncio backend: :class:`FutureWaiter` (a bare future and a loop timer) and the :class:`~.base.Backend` of
a running asyncio loop. Chosen by :func:`mcp_client._backends.auto.current_backend`.

Every request in flight sleeps until its answer comes, a clock of its policy may have run out, or its clocks moved
(a pause ended). On asyncio that is a bare future and a loop timer that resolves it: an ``anyio.Event`` plus an
``anyio.CancelScope`` with a deadline cost a deque, two sets and a cancellation delivered through the task, which
was the largest share of the memory a call in flight holds and of the CPU of a timer firing.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import sys
from functools import partial

from mcp_client._backends.base import Backend

__all__ = ["ASYNCIO_TIMER_LEAD", "FutureWaiter", "running_backend"]

ASYNCIO_TIMER_LEAD = 0.001
"""How much earlier than its time a timer is set on asyncio, in seconds.

asyncio's selectors (epoll, poll) sleep in whole milliseconds, rounded up, so a timer set for ``t`` fires up to a
millisecond after ``t``, about 0.7 ms on average. The session sets its timers this much early and covers the last
stretch by yielding to the loop until ``t`` has come: a timeout then reaches the caller within a loop turn of its
deadline, for at most this long of busy waiting per deadline that actually runs out."""


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class FutureWaiter:
    """The asyncio waiter (a :class:`~.base.Waiter`): a bare future, and a loop timer that resolves it.

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


def running_backend() -> Backend:
    """The backend of the running asyncio loop (call it inside the loop)."""
    loop = asyncio.get_running_loop()
    return Backend(
        name="asyncio",
        now=loop.time,
        timer_lead=ASYNCIO_TIMER_LEAD,
        new_waiter=partial(FutureWaiter, loop, contextvars.Context()),  # (one timer context per connection)
        call_soon=loop.call_soon,
        drives_pipes=sys.platform != "win32",
        running_loop=asyncio._get_running_loop,  # (C, no error when none runs: one cheap call per request)
    )
