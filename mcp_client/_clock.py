"""The running event loop's clock as a plain function.

``anyio.current_time()`` looks the async backend up on every call; the session reads the clock several times per
request, so it takes the backend's own clock once instead. It is the same clock (trio's ``MockClock`` included).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["running_clock", "timer_lead"]


def running_clock() -> Callable[[], float]:
    """The running asyncio loop's ``time()``, or ``trio.current_time`` under trio. Call it inside the loop."""
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # no asyncio loop running: anyio runs on trio
        import trio

        return trio.current_time


def timer_lead() -> float:
    """How much earlier than its time a timer should be set so that the error is not late. Call it inside the loop.

    asyncio's selectors (epoll, poll) sleep in whole milliseconds, rounded up, so a timer set for ``t`` fires up to
    a millisecond after ``t``, about 0.7 ms on average. The session sets its timers this much early and covers the
    last stretch by yielding to the loop until ``t`` has come: a timeout then reaches the caller within a loop turn
    of its deadline, for at most this long of busy waiting per deadline that actually runs out. Zero under trio,
    whose ``MockClock`` must see every task blocked before it jumps.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return 0.0
    return 0.001
