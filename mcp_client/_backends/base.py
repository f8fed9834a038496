"""The one place that tells asyncio from trio: the fast paths each async backend gets, chosen once.

anyio hides the backend, and the client runs on both; but a few hot paths are worth taking per backend: the
loop's own clock (``anyio.current_time()`` looks the backend up on every call), the waiter of a request in flight
(a bare future and a loop timer on asyncio, :mod:`mcp_client._backends.waiter`), how early a timer is set (asyncio's
selectors round sleeps up to whole milliseconds), running a piece of work on the loop's next turn (the deferred
delivery of sync progress callbacks, :mod:`mcp_client.session.batch`), and whether the event loop can drive a child's
pipes itself (:mod:`mcp_client.transports.stdio._loop_pipes`).

:func:`current_backend` looks once, inside the running loop; the session and the stdio transport call it when
they start and keep what it returns, so no request asks again. Nothing else in the package sniffs the backend.
May import the standard library and trio (lazily, only when trio runs); nothing of the package but the waiters.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from mcp_client._backends.waiter import FutureWaiter, TrioWaiter, Waiter

__all__ = ["ASYNCIO_TIMER_LEAD", "Backend", "current_backend"]

ASYNCIO_TIMER_LEAD = 0.001
"""How much earlier than its time a timer is set on asyncio, in seconds.

asyncio's selectors (epoll, poll) sleep in whole milliseconds, rounded up, so a timer set for ``t`` fires up to a
millisecond after ``t``, about 0.7 ms on average. The session sets its timers this much early and covers the last
stretch by yielding to the loop until ``t`` has come: a timeout then reaches the caller within a loop turn of its
deadline, for at most this long of busy waiting per deadline that actually runs out."""


@dataclass(frozen=True, slots=True)
class Backend:
    """What the running event loop offers. Get it with :func:`current_backend`, inside the loop."""

    name: str
    """``"asyncio"`` or ``"trio"``."""
    now: Callable[[], float]
    """The loop's clock as a plain function (the same clock as ``anyio.current_time()``, trio's MockClock too)."""
    timer_lead: float
    """Seconds a request's timer is set early (:data:`ASYNCIO_TIMER_LEAD` on asyncio; zero under trio, whose
    ``MockClock`` must see every task blocked before it jumps)."""
    new_waiter: Callable[[], Waiter]
    """A fresh one-shot wake-up for one request's waiter."""
    call_soon: Callable[[Callable[[], None]], object] | None
    """Run a plain function on the loop's next turn (asyncio), or ``None`` where there is no such thing (trio)."""
    drives_pipes: bool
    """True when the loop can serve a child's pipes from its own callbacks (asyncio under POSIX)."""


def current_backend() -> Backend:
    """The backend of the running event loop. Call it inside the loop, once per connection, and keep it."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop running: anyio runs on trio
        return _trio()
    return Backend(
        name="asyncio",
        now=loop.time,
        timer_lead=ASYNCIO_TIMER_LEAD,
        new_waiter=partial(FutureWaiter, loop, contextvars.Context()),  # (one timer context per connection)
        call_soon=loop.call_soon,
        drives_pipes=sys.platform != "win32",
    )


def _trio() -> Backend:
    import trio

    return Backend(
        name="trio",
        now=trio.current_time,
        timer_lead=0.0,
        new_waiter=TrioWaiter,
        call_soon=None,
        drives_pipes=False,
    )
