"""The changes a subscription holds for its consumer: deduplicated, in arrival order, never blocking the reader.

Changes are level triggers ("refetch this"), so a change equal to one still waiting adds nothing. The list changes
are three at most, but each resource's update is its own change, and a subscribed URI may have any number of
sub-resources: the backlog holds at most ``limit`` changes, and beyond it a resource's update that is not waiting
already is dropped (a list change never is), counted (:attr:`PendingChanges.dropped`) and logged as a warning, the
first of each run of drops. Touches nothing but anyio.
"""

from __future__ import annotations

import anyio

from mcp_client._log_guard import package_logger
from mcp_client.errors import MCPClientError
from mcp_client.subscriptions.changes import Change, ResourceUpdated, change_key

__all__ = ["PendingChanges"]

logger = package_logger("mcp_client.subscriptions")


class PendingChanges:
    """A deduplicating mailbox of changes with an end: :meth:`put` from the reader, :meth:`get` by the consumer."""

    def __init__(self, limit: int = 1024) -> None:
        self._limit = limit
        self.dropped = 0
        """Changes dropped because the backlog was full."""
        self._dropping = False
        self._items: dict[tuple[str, str], Change] = {}
        self._wake = anyio.Event()
        self._error: MCPClientError | None = None
        self.ended = False

    def put(self, change: Change) -> None:
        """Offer a change; dropped when an equal one waits already, after the end, or (a resource's update) when the
        backlog is full."""
        if self.ended:
            return
        key = change_key(change)
        if isinstance(change, ResourceUpdated) and key not in self._items and len(self._items) >= self._limit:
            self.dropped += 1
            if not self._dropping:
                self._dropping = True
                logger.warning("a subscription's backlog is full (%d changes): new changes are dropped", self._limit)
            return
        self._items.setdefault(key, change)
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
                self._dropping = False
                return self._items.pop(key)
            if self.ended:
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            self._wake = anyio.Event()
            await self._wake.wait()
