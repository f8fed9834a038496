"""The running event loop's clock as a plain function.

``anyio.current_time()`` looks the async backend up on every call; the session reads the clock several times per
request, so it takes the backend's own clock once instead. It is the same clock (trio's ``MockClock`` included).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["running_clock"]


def running_clock() -> Callable[[], float]:
    """The running asyncio loop's ``time()``, or ``trio.current_time`` under trio. Call it inside the loop."""
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # no asyncio loop running: anyio runs on trio
        import trio

        return trio.current_time
