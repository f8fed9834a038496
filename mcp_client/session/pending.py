"""The one drain loop: a count of background work and a bounded wait until none is left.

The session counts the cancellations it is writing in the background, the task driver the ``tasks/cancel``
requests it sent and the task phases under way; each closes by waiting, at most a given time, for its count to
reach zero. Touches anyio only.
"""

from __future__ import annotations

import anyio

__all__ = ["Pending"]


class Pending:
    """How many pieces of background work are under way, and a wait until there are none."""

    __slots__ = ("_count", "_drained")

    def __init__(self) -> None:
        self._count = 0
        self._drained: anyio.Event | None = None  # made by a waiter: most counts are never waited on

    def __len__(self) -> int:
        return self._count

    def add(self) -> None:
        """One more is under way."""
        self._count += 1

    def done(self) -> None:
        """One has ended."""
        self._count -= 1
        if not self._count and self._drained is not None:
            self._drained.set()

    async def drained(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, until none is under way."""
        with anyio.move_on_after(timeout):
            while self._count:
                self._drained = anyio.Event()
                await self._drained.wait()
