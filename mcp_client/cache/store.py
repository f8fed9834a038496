"""Where a :class:`~mcp_client.ResultCache` keeps its entries: the :class:`CacheStore` protocol a host may
implement (to bound memory its own way, to count, to share between processes) and :class:`MemoryCacheStore`, the
default. Pure data structures: no I/O, no clock; the cache decides what is fresh and what may be served.

The default store is bounded by entries and by bytes: a server's answers are as large as it likes (a
``resources/read`` of a 30 MiB file), so a count of entries alone bounds nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = ["DEFAULT_MAX_BYTES", "CacheEntry", "CacheKey", "CacheStore", "MemoryCacheStore"]


class CacheKey(NamedTuple):
    """What one kept answer answers: compared field by field, never as one flattened string."""

    server: str
    """The server (an HTTP endpoint; a stdio or in-memory server: its client's token)."""
    partition: str
    """``"public"`` for entries any authorization context may read, else the context that received it."""
    method: str
    target: str | None
    """The cursor of a page or the URI of a read; ``None`` for the first page or a method without one."""


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One kept answer and when it stops being fresh (on the cache's clock)."""

    result: dict[str, Any]
    """The result as received; the cache copies it (all the way down) on the way in and out, so a store may hold
    it as it is."""
    expires: float
    size: int = 0
    """What the result costs to hold, in bytes, measured by the cache on the way in (what a store bounds): its
    compact JSON and :data:`~mcp_client.cache.result_cache.HELD_PER_VALUE` bytes per value it holds."""


@runtime_checkable
class CacheStore(Protocol):
    """The storage a :class:`~mcp_client.ResultCache` uses; called from the event loop, never concurrently
    by one cache. A store may forget any entry at any time (that is a miss). An exception from a store is logged
    and taken for a miss or a no-op: the request is answered by the server instead."""

    def get(self, key: CacheKey) -> CacheEntry | None:
        """The entry kept under ``key``, or ``None``."""
        ...

    def set(self, key: CacheKey, entry: CacheEntry) -> None:
        """Keep ``entry`` under ``key``, replacing what was there."""
        ...

    def delete(self, key: CacheKey) -> None:
        """Forget ``key`` (nothing happens when it is not kept)."""
        ...

    def keys(self) -> Iterable[CacheKey]:
        """Every key kept, as a snapshot the cache may delete from while it iterates."""
        ...


DEFAULT_MAX_BYTES = 64 * 1024 * 1024
"""The most bytes (of the results' JSON) the default store keeps: 64 MiB."""


class MemoryCacheStore:
    """An in-process store of at most ``limit`` entries and ``max_bytes`` bytes of results (as JSON, see
    :attr:`CacheEntry.size`); the least recently used go first, and an entry larger than ``max_bytes`` is not kept.
    """

    def __init__(self, limit: int = 1024, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an integer of at least 1, got {limit!r}")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be an integer of at least 1, got {max_bytes!r}")
        self.limit = limit
        self.max_bytes = max_bytes
        self._entries: OrderedDict[CacheKey, CacheEntry] = OrderedDict()
        self._bytes = 0

    @property
    def bytes(self) -> int:
        """The bytes kept now (the sum of the entries' sizes)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: CacheKey) -> CacheEntry | None:
        """The entry under ``key`` (it becomes the most recently used), or ``None``."""
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def set(self, key: CacheKey, entry: CacheEntry) -> None:
        """Keep ``entry``; beyond either limit the least recently used entries go. One larger than ``max_bytes``
        is not kept (what was kept under ``key`` goes all the same)."""
        self.delete(key)
        if entry.size > self.max_bytes:
            return
        self._entries[key] = entry
        self._bytes += entry.size
        while len(self._entries) > self.limit or self._bytes > self.max_bytes:
            _, gone = self._entries.popitem(last=False)
            self._bytes -= gone.size

    def delete(self, key: CacheKey) -> None:
        """Forget ``key``."""
        gone = self._entries.pop(key, None)
        if gone is not None:
            self._bytes -= gone.size

    def keys(self) -> list[CacheKey]:
        """A snapshot of the keys, least recently used first."""
        return list(self._entries)
