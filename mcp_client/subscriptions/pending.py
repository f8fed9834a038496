"""The changes a subscription holds for its consumer: deduplicated, in arrival order, never blocking the reader.

Changes are level triggers ("refetch this"), so a change equal to one still waiting adds nothing: the backlog is
bounded by the number of distinct changes the filter allows, however slow the consumer. Touches nothing but anyio.
"""

from __future__ import annotations

import anyio

from mcp_client.errors import MCPClientError
from mcp_client.subscriptions.changes import Change, change_key

__all__ = ["PendingChanges"]


class PendingChanges:
    """A deduplicating mailbox of changes with an end: :meth:`put` from the reader, :meth:`get` by the consumer."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], Change] = {}
        self._wake = anyio.Event()
        self._error: MCPClientError | None = None
        self.ended = False

    def put(self, change: Change) -> None:
        """Offer a change; dropped when an equal one waits already, or after the end."""
        if self.ended:
            return
        self._items.setdefault(change_key(change), change)
        self._wake.set()

    def finish(self, error: MCPClientError | None = None) -> None:
        """No more changes: :meth:`get` yields what waits, then stops (or raises ``error``). The first end wins."""
        if self.ended:
            return
        self.ended = True
        self._error = error
        self._wake.set()

    async def get(self) -> Change:
        """The oldest waiting change; raises ``StopAsyncIteration`` (or the error of the end) once none is left."""
        while True:
            if self._items:
                key = next(iter(self._items))
                return self._items.pop(key)
            if self.ended:
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            self._wake = anyio.Event()
            await self._wake.wait()
