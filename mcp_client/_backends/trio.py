"""The trio backend: :class:`TrioWaiter` and the :class:`~.base.Backend` of a running trio loop.

The only module of the package that imports trio; :func:`mcp_client._backends.auto.current_backend` loads it only
when trio runs. On trio, a ``trio.Event`` waited on in a ``move_on_at`` scope is already small, so the waiter is
just that.
"""

from __future__ import annotations

import math

import trio

from mcp_client._backends.base import Backend

__all__ = ["TrioWaiter", "running_backend"]


class TrioWaiter:
    """The trio waiter (a :class:`~.base.Waiter`): a ``trio.Event`` waited on in a cancel scope with a deadline."""

    __slots__ = ("_event", "_scope")

    def __init__(self) -> None:
        self._event = trio.Event()
        self._scope: trio.CancelScope | None = None

    def set(self) -> None:
        self._event.set()

    def poke(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def wait(self, until: float = math.inf) -> None:
        with trio.CancelScope(deadline=until) as scope:
            self._scope = scope
            try:
                await self._event.wait()
            finally:
                self._scope = None


def _running_token() -> trio.lowlevel.TrioToken | None:
    try:
        return trio.lowlevel.current_trio_token()
    except RuntimeError:  # no trio run in this thread
        return None


def running_backend() -> Backend:
    """The backend of the running trio loop (call it inside the loop)."""
    return Backend(
        name="trio",
        now=trio.current_time,
        timer_lead=0.0,
        new_waiter=TrioWaiter,
        call_soon=None,
        drives_pipes=False,
        running_loop=_running_token,
    )
