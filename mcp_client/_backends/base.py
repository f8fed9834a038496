"""What an async backend offers the client, and the one chooser, :func:`current_backend`.

anyio hides the backend, and the client runs on both; but a few hot paths are worth taking per backend: the
loop's own clock (``anyio.current_time()`` looks the backend up on every call), the waiter of a request in flight
(a bare future and a loop timer on asyncio), how early a timer is set (asyncio's selectors round sleeps up to whole
milliseconds), running a piece of work on the loop's next turn (the deferred delivery of sync progress callbacks,
:mod:`mcp_client.session.batch`), and whether the event loop can drive a child's pipes itself
(:mod:`mcp_client.transports.stdio._loop_pipes`).

:func:`current_backend` looks once, inside the running loop; the session and the stdio transport call it when
they start and keep what it returns, so no request asks again. Each backend is one module of this folder
(:mod:`.asyncio`, :mod:`.trio`) that imports this one; the chooser names its module by string, as anyio's
``get_async_backend`` does, so it is loaded only when its loop runs (trio is never imported under asyncio) and no
import runs back up. Standard library only.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Protocol

__all__ = ["Backend", "Waiter", "current_backend"]


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
    """What the running event loop offers. Get it with :func:`current_backend`, inside the loop."""

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


_builders: dict[str, Callable[[], Backend]] = {}
"""Each backend module's ``running_backend``, by name, once its module was loaded."""


def current_backend() -> Backend:
    """The backend of the running event loop. Call it inside the loop, once per connection, and keep it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop running: anyio runs on trio
        name = "trio"
    else:
        name = "asyncio"
    build = _builders.get(name)
    if build is None:
        build = _builders[name] = import_module(f"mcp_client._backends.{name}").running_backend
    return build()
