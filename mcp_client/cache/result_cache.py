"""Results kept as long as the server says they stay fresh: the 2026-07-28 CacheableResult rules. Pure: ``now``
is passed in, nothing here does I/O or starts a timer.

``server/discover``, the four lists (``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list``) and ``resources/read`` carry ``ttlMs`` and ``cacheScope``. The rules kept here:

* an entry is fresh while ``now < received + ttlMs``; a ``ttlMs`` that is absent, negative or not an integer
  counts as 0 (not kept); one above :data:`MAX_TTL` is capped there;
* the key is the server, the method and what changes the result: the cursor of a page (each page is kept on its
  own) or the URI of a read;
* a ``private`` entry (also: no ``cacheScope``) is served only to the authorization context that received it;
  a ``public`` one to any context of the same server (contexts: :mod:`mcp_client.cache.partition`);
* an answer that was in flight when an invalidation concerning it happened is not kept (the generation taken
  before sending is passed to :meth:`ResultCache.put`): a list-changed notification racing a ``tools/list``
  cannot leave the old listing in the cache;
* :meth:`ResultCache.invalidate` drops what a change makes stale (a list-changed notification: that list's pages;
  ``notifications/resources/updated``: that URI's read), :meth:`ResultCache.drop_pages` every page of a list
  whose cursor the server no longer accepts;
* nothing is ever refetched because an entry expired: a ttl is not a polling interval.

Entries live in a :class:`~mcp_client.cache.store.CacheStore` (by default an in-memory LRU). 2025-11-25 results
carry no hints, so nothing of theirs is kept.
"""

from __future__ import annotations

import json
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from pydantic_core import from_json

from mcp_client._log_guard import package_logger
from mcp_client.cache.partition import authorization_context
from mcp_client.cache.store import DEFAULT_MAX_BYTES, CacheEntry, CacheKey, CacheStore, MemoryCacheStore
from mcp_client.protocol.json_values import compact_json, values_in

__all__ = [
    "CACHEABLE_METHODS",
    "LIST_METHODS",
    "MAX_TTL",
    "PUBLIC",
    "CacheEntry",
    "CacheKey",
    "CacheMode",
    "CacheStore",
    "MemoryCacheStore",
    "ResultCache",
    "authorization_context",
    "invalidated_by",
]

CACHEABLE_METHODS: Final = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
LIST_METHODS: Final = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
MAX_TTL: Final = 24 * 3600.0
"""The longest a result is kept, in seconds, whatever ``ttlMs`` says."""
PUBLIC: Final = "public"
"""The authorization context of entries any context may read."""

_LIST_CHANGED: Final[Mapping[str, tuple[str, ...]]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}

Listener = Callable[[str | None, str | None, str | None], None]
"""Called as ``listener(server, method, uri)`` after an invalidation (``None``: every server, method or URI)."""

CacheMode = Literal["use", "refresh", "bypass"]
"""Per call: ``"use"`` serves a fresh entry and keeps the answer, ``"refresh"`` asks the server and keeps the
answer, ``"bypass"`` asks the server and leaves the cache alone. ``True`` means ``"use"``, ``False``
``"refresh"``."""

logger = package_logger("mcp_client.cache")
_MAX_STAMPS: Final = 1024
HELD_PER_VALUE: Final = 64
"""Bytes an entry's size counts per value it holds, beside its JSON: what a decoded value costs to hold (an empty
object, 64 bytes; measured: 200 kept reads of 60,000 empty objects each were 34 MB of JSON and 830 MB held)."""

_FAILED: Final = object()


def invalidated_by(method: str, params: Mapping[str, Any]) -> list[tuple[str | None, str | None]]:
    """What a server notification makes stale, as ``(method, uri)`` pairs for :meth:`ResultCache.invalidate`."""
    if method in _LIST_CHANGED:
        return [(listed, None) for listed in _LIST_CHANGED[method]]
    if method == "notifications/resources/updated":
        uri = params.get("uri")
        return [("resources/read", uri)] if isinstance(uri, str) else [("resources/read", None)]
    return []


def _ttl_seconds(result: Mapping[str, Any]) -> float:
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:
        return 0.0
    return min(ttl / 1000.0, MAX_TTL)


class ResultCache:
    """Cacheable results by server, authorization context, method and cursor or URI.

    One per client by default (``Client(cache=True)``); pass the same instance to several clients to share
    ``public`` entries between their authorization contexts (``private`` ones never are: each client's context is
    an identity that is never reused, or the ``cache_partition`` its host names).

    Args:
        limit: The most entries the default store keeps (the least recently used go first).
        max_bytes: The most bytes of results the default store keeps (64 MiB), each measured as its compact JSON
            and :data:`HELD_PER_VALUE` bytes per value it holds (what it costs to hold); a result larger
            than that is not kept.
        store: Where entries are kept instead (see :class:`~mcp_client.cache.store.CacheStore`); ``limit`` and
            ``max_bytes`` are then the store's business (each entry carries its ``size``).
        clock: The clock freshness is measured on, instead of the ``now`` each call passes (the client's event
            loop clock). A store shared between processes needs a shared one, such as ``time.time``.

    Raises:
        ValueError: ``limit`` or ``max_bytes`` is not an integer of at least 1.
        TypeError: ``store`` is not a ``CacheStore``.
    """

    def __init__(
        self,
        limit: int = 1024,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        store: CacheStore | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if store is not None and not isinstance(store, CacheStore):
            raise TypeError(f"store must implement CacheStore (get, set, delete, keys), got {type(store).__name__}")
        self._store: CacheStore = store if store is not None else MemoryCacheStore(limit, max_bytes=max_bytes)
        self.clock = clock
        """The clock entries are timed on, when it is not the caller's ``now``."""
        self._listeners: list[weakref.WeakMethod[Listener] | Callable[[], Listener | None]] = []
        self._generation = 0
        self._stamps: OrderedDict[tuple[str | None, str | None, str | None], int] = OrderedDict()
        self._forgotten = 0  # the newest generation whose stamp went (the table is bounded): older fetches fail
        self._broken: set[str] = set()

    def __len__(self) -> int:
        return len(list(self._keys()))

    @property
    def store(self) -> CacheStore:
        """Where the entries are kept."""
        return self._store

    @property
    def generation(self) -> int:
        """How many invalidations there have been; take it before sending a request and pass it to :meth:`put`
        as ``since``: an answer older than an invalidation that concerns it is not kept."""
        return self._generation

    def get(self, server: str, context: str, method: str, target: str | None, *, now: float) -> dict[str, Any] | None:
        """The fresh result for this request, if one is kept (a copy the caller may change, all the way down), else
        ``None``."""
        now = self.clock() if self.clock is not None else now
        for scope in (context, PUBLIC):
            key = CacheKey(server, scope, method, target)
            entry = self._call("get", self._store.get, key)
            if entry is None:
                continue
            if now >= entry.expires:
                self._call("delete", self._store.delete, key)
                continue
            copy: dict[str, Any] | None = self._call("copy", _copied, entry.result)  # (an odd entry: a miss)
            if copy is not None:
                return copy
        return None

    def put(
        self,
        server: str,
        context: str,
        method: str,
        target: str | None,
        result: Mapping[str, Any],
        *,
        now: float,
        since: int | None = None,
    ) -> bool:
        """Keep ``result``, received at ``now``, as long as its hints allow; True if it was kept.

        An answer replaces what was kept for the same request in either scope, even when it is not kept itself.
        With ``since`` (the :attr:`generation` taken before the request went out), an answer that an invalidation
        made stale while it was in flight is neither kept nor allowed to replace anything.
        """
        if method not in CACHEABLE_METHODS:
            return False
        if since is not None and self._stale(server, method, target, since):
            return False
        for scope in (PUBLIC, context):
            self._call("delete", self._store.delete, CacheKey(server, scope, method, target))
        ttl = _ttl_seconds(result)
        if ttl <= 0 or result.get("resultType", "complete") != "complete":
            return False
        now = self.clock() if self.clock is not None else now
        scope = PUBLIC if result.get("cacheScope") == "public" else context
        # Kept as a copy made from its JSON, which measures it too: nothing the caller holds is part of it.
        data = compact_json(result)
        entry = CacheEntry(_parsed(data), now + ttl, len(data) + HELD_PER_VALUE * values_in(data))
        if isinstance(self._store, MemoryCacheStore) and entry.size > self._store.max_bytes:
            return False  # larger than the whole store
        return self._call("set", self._store.set, CacheKey(server, scope, method, target), entry) is not _FAILED

    def invalidate(self, method: str | None = None, uri: str | None = None, *, server: str | None = None) -> int:
        """Drop what a change made stale; returns how many entries went.

        ``method`` alone: every entry of that method (all pages of a list). ``"resources/read"`` with ``uri``:
        that resource's read. Nothing: everything. ``server`` limits it to one server's entries. This is what a
        list-changed or resource-updated notification calls (see :func:`invalidated_by`). An answer in flight
        while it happens is not kept when it arrives (see :attr:`generation`).
        """
        self._generation += 1
        pattern = (server, method, uri)
        self._stamps[pattern] = self._generation
        self._stamps.move_to_end(pattern)
        while len(self._stamps) > _MAX_STAMPS:
            _, forgotten = self._stamps.popitem(last=False)
            self._forgotten = max(self._forgotten, forgotten)
        doomed = [key for key in self._keys() if _matches(pattern, key.server, key.method, key.target)]
        for key in doomed:
            self._call("delete", self._store.delete, key)
        self._notify(server, method, uri)
        return len(doomed)

    def drop_pages(self, method: str, *, server: str | None = None) -> int:
        """The server refused a cursor: every kept page of ``method`` goes (they may no longer fit together)."""
        return self.invalidate(method, server=server)

    def on_notification(self, method: str, params: Mapping[str, Any], *, server: str | None = None) -> bool:
        """Apply a server notification (list changed, resource updated); True if it invalidated anything."""
        targets = invalidated_by(method, params)
        for stale_method, uri in targets:
            self.invalidate(stale_method, uri, server=server)
        return bool(targets)

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(server, method, uri)`` after each invalidation. A bound method is held weakly."""
        if hasattr(listener, "__self__"):
            self._listeners.append(weakref.WeakMethod(listener))
        else:
            self._listeners.append(lambda: listener)

    def _stale(self, server: str, method: str, target: str | None, since: int) -> bool:
        if since >= self._generation:
            return False
        if since < self._forgotten:
            return True  # an invalidation it may have missed is no longer on record: assume it concerned it
        for pattern, generation in reversed(self._stamps.items()):
            if generation <= since:
                return False
            if _matches(pattern, server, method, target):
                return True
        return False

    def _keys(self) -> list[CacheKey]:
        keys = self._call("keys", self._store.keys)
        return [] if keys is None or keys is _FAILED else list(keys)

    def _call(self, operation: str, function: Callable[..., Any], *args: Any) -> Any:
        try:
            outcome = function(*args)
        except Exception:  # a host's store: its failure is a miss, never a failed request
            if operation not in self._broken:
                self._broken.add(operation)
                logger.warning("the result cache's store failed (%s); going on without it", operation, exc_info=True)
            return _FAILED if operation == "set" else None
        self._broken.discard(operation)
        return outcome

    def _notify(self, server: str | None, method: str | None, uri: str | None) -> None:
        alive: list[weakref.WeakMethod[Listener] | Callable[[], Listener | None]] = []
        for ref in self._listeners:
            listener = ref()
            if listener is not None:
                alive.append(ref)
                listener(server, method, uri)
        self._listeners = alive


def _matches(pattern: tuple[str | None, str | None, str | None], server: str, method: str, target: str | None) -> bool:
    stale_server, stale_method, stale_uri = pattern
    return (
        (stale_server is None or stale_server == server)
        and (stale_method is None or stale_method == method)
        and (stale_uri is None or stale_uri == target)
    )


def _parsed(data: bytes) -> dict[str, Any]:
    """The result written as ``data`` by :func:`~mcp_client.protocol.json_values.compact_json`, decoded afresh."""
    try:
        value = from_json(data)
    except ValueError:  # (a lone surrogate's escape, which pydantic-core refuses to read)
        value = json.loads(data)
    assert isinstance(value, dict)
    return value


def _copied(result: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a kept result, all the way down, for a caller that may change any part of it."""
    return _parsed(compact_json(result))
