"""What an async backend offers the client: the :class:`Backend` value and the :class:`Waiter` protocol.

anyio hides the backend, and the client runs on both; but a few hot paths are worth taking per backend: the
loop's own clock (``anyio.current_time()`` looks the backend up on every call), the waiter of a request in flight
(a bare future and a loop timer on asyncio), how early a timer is set (asyncio's selectors round sleeps up to whole
milliseconds), running a piece of work on the loop's next turn (the deferred delivery of sync progress callbacks,
:mod:`mcp_client.session.batch`), and whether the event loop can drive a child's pipes itself
(:mod:`mcp_client.transports.stdio._loop_pipes`).

Each backend is one module of this folder (:mod:`.asyncio`, :mod:`.trio`) that builds a :class:`Backend`;
:func:`.auto.current_backend` is the one chooser (httpcore's ``_backends/auto.py``). Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Backend", "Waiter"]


class Waiter(Protocol):
    """A one-shot wake-up for one request's waiter, with a timer (what the session needs of it).

    It may be set before anyone waits, and waited on again after a wait returned or was cancelled."""

    def set(self) -> None:
        """Wake the waiter for good (the request settled): now, or as soon as it waits."""

    def poke(self) -> None:
        """Wake the wait under way, if any, once (the clocks moved); a later wait sleeps again."""

    async def wait(self, until: float = math.inf) -> None:
        """Return once :meth:`set` was called, on :meth:`poke`, or when the loop's clock reaches ``until``."""


@dataclass(frozen=True, slots=True)
class Backend:
    """What the running event loop offers. Get it with :func:`.auto.current_backend`, inside the loop."""

    name: str
    """``"asyncio"`` or ``"trio"``."""
    now: Callable[[], float]
    """The loop's clock as a plain function (the same clock as ``anyio.current_time()``, trio's MockClock too)."""
    timer_lead: float
    """Seconds a request's timer is set early (``ASYNCIO_TIMER_LEAD`` on asyncio; zero under trio, whose
    ``MockClock`` must see every task blocked before it jumps)."""
    new_waiter: Callable[[], Waiter]
    """A fresh one-shot wake-up for one request's waiter."""
    call_soon: Callable[[Callable[[], None]], object] | None
    """Run a plain function on the loop's next turn (asyncio), or ``None`` where there is no such thing (trio)."""
    drives_pipes: bool
    """True when the loop can serve a child's pipes from its own callbacks (asyncio under POSIX)."""
    running_loop: Callable[[], object | None]
    """What stands for the running event loop of this backend, or None when none runs in this thread (a client
    opened in one loop and used from another is refused before anything is written, instead of failing deep in a
    future or a lock with a RuntimeError)."""
