"""The changes a subscription holds for its consumer: deduplicated, in arrival order, never blocking the reader.

Changes are level triggers ("refetch this"), so a change equal to one still waiting adds nothing. The list changes
are three at most, but each resource's update is its own change, and a subscribed URI may have any number of
sub-resources: the backlog holds at most ``limit`` changes, and at most :data:`MAX_PENDING_URI_CHARS` of their URIs
(a server chooses a sub-resource's URI, as long as a message allows), and beyond either a resource's update that is
not waiting already is dropped (a list change never is), counted (:attr:`PendingChanges.dropped`) and logged as a
warning, the first of each run of drops. Touches nothing but anyio.
"""

from __future__ import annotations

import anyio

from mcp_client._log_guard import package_logger
from mcp_client.errors import MCPClientError
from mcp_client.subscriptions.changes import Change, ResourceUpdated, change_key

__all__ = ["MAX_PENDING_URI_CHARS", "PendingChanges"]

logger = package_logger("mcp_client.subscriptions")

MAX_PENDING_URI_CHARS = 8 * 1024 * 1024
"""Characters of resource URIs one backlog holds at most (8 Mi: bounded by count alone, 1,024 updates of URIs of
1 MiB each held 1 GiB)."""


class PendingChanges:
    """A deduplicating mailbox of changes with an end: :meth:`put` from the reader, :meth:`get` by the consumer."""

    def __init__(self, limit: int = 1024) -> None:
        self._limit = limit
        self.dropped = 0
        """Changes dropped because the backlog was full."""
        self._dropping = False
        self._items: dict[tuple[str, str], Change] = {}
        self._uri_chars = 0  # (characters of the URIs of the resource updates waiting)
        self._wake = anyio.Event()
        self._error: MCPClientError | None = None
        self.ended = False

    def put(self, change: Change) -> None:
        """Offer a change; dropped when an equal one waits already, after the end, or (a resource's update) when the
        backlog is full."""
        if self.ended:
            return
        key = change_key(change)
        if key in self._items:
            return  # (waiting already: it adds nothing)
        if isinstance(change, ResourceUpdated):
            if len(self._items) >= self._limit or self._uri_chars + len(change.uri) > MAX_PENDING_URI_CHARS:
                self.dropped += 1
                if not self._dropping:
                    self._dropping = True
                    logger.warning(
                        "a subscription's backlog is full (%d changes, or %d characters of URIs): new changes are "
                        "dropped",
                        self._limit,
                        MAX_PENDING_URI_CHARS,
                    )
                return
            self._uri_chars += len(change.uri)
        self._items[key] = change
        self._wake.set()

    @property
    def waiting(self) -> int:
        """Changes waiting for the consumer now."""
        return len(self._items)

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
                change = self._items.pop(key)
                if isinstance(change, ResourceUpdated):
                    self._uri_chars -= len(change.uri)
                return change
            if self.ended:
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            self._wake = anyio.Event()
            await self._wake.wait()
