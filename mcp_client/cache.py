"""Results kept as long as the server says they stay fresh: the 2026-07-28 CacheableResult rules. Pure: ``now``
is passed in, nothing here does I/O or starts a timer.

``server/discover``, the four lists (``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list``) and ``resources/read`` carry ``ttlMs`` and ``cacheScope``. The rules kept here:

* an entry is fresh while ``now < received + ttlMs``; a ``ttlMs`` that is absent, negative or not an integer
  counts as 0 (not kept); one above :data:`MAX_TTL` is capped there;
* the key is the server, the method and what changes the result: the cursor of a page (each page is kept on its
  own) or the URI of a read;
* a ``private`` entry (also: no ``cacheScope``) is served only to the authorization context that received it;
  a ``public`` one to any context of the same server;
* :meth:`ResultCache.invalidate` drops what a change makes stale (a list-changed notification: that list's pages;
  ``notifications/resources/updated``: that URI's read), :meth:`ResultCache.drop_pages` every page of a list
  whose cursor the server no longer accepts;
* nothing is ever refetched because an entry expired: a ttl is not a polling interval.

2025-11-25 results carry no hints, so nothing of theirs is kept.
"""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CACHEABLE_METHODS",
    "LIST_METHODS",
    "MAX_TTL",
    "PUBLIC",
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

Listener = Callable[[Hashable, str | None, str | None], None]
"""Called as ``listener(server, method, uri)`` after an invalidation (``None``: every server, method or URI)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    result: dict[str, Any]
    expires: float


def invalidated_by(method: str, params: Mapping[str, Any]) -> list[tuple[str | None, str | None]]:
    """What a server notification makes stale, as ``(method, uri)`` pairs for :meth:`ResultCache.invalidate`."""
    if method in _LIST_CHANGED:
        return [(listed, None) for listed in _LIST_CHANGED[method]]
    if method == "notifications/resources/updated":
        uri = params.get("uri")
        return [("resources/read", uri)] if isinstance(uri, str) else [("resources/read", None)]
    return []


def authorization_context(transport: object, owner: object) -> Hashable:
    """The authorization context a transport's requests run in, as a cache partition.

    Over HTTP it is the sign-in (the ``auth`` object, the caller's own ``httpx`` client) and the credentials in
    the headers (``Authorization``, ``Cookie``, hashed); elsewhere, ``owner`` alone (the client): a process
    started by one client shares its private answers with no other.
    """
    headers = getattr(transport, "headers", None)
    auth = getattr(transport, "auth", None)
    client = getattr(transport, "client", None)
    if headers is None and auth is None:
        return ("owner", id(owner))
    credentials = sorted(
        (k.lower(), v) for k, v in dict(headers or {}).items() if k.lower() in ("authorization", "cookie")
    )
    digest = hashlib.sha256(repr(credentials).encode()).hexdigest()
    return ("http", digest, id(auth) if auth is not None else None, id(client) if client is not None else None)


def _ttl_seconds(result: Mapping[str, Any]) -> float:
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:
        return 0.0
    return min(ttl / 1000.0, MAX_TTL)


class ResultCache:
    """Cacheable results by server, authorization context, method and cursor or URI.

    One per client by default (``Client(cache=True)``); pass the same instance to several clients to share
    ``public`` entries between their authorization contexts (``private`` ones never are). ``limit`` bounds the
    number of entries (the least recently used go first).
    """

    def __init__(self, limit: int = 1024) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self._entries: OrderedDict[tuple[Hashable, Hashable, str, str | None], _Entry] = OrderedDict()
        self._limit = limit
        self._listeners: list[weakref.WeakMethod[Listener] | Callable[[], Listener | None]] = []

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self, server: Hashable, context: Hashable, method: str, target: str | None, *, now: float
    ) -> dict[str, Any] | None:
        """The fresh result for this request, if one is kept (a copy the caller may change), else ``None``."""
        for scope in (PUBLIC, context):
            key = (server, scope, method, target)
            entry = self._entries.get(key)
            if entry is None:
                continue
            if now >= entry.expires:
                del self._entries[key]
                continue
            self._entries.move_to_end(key)
            return dict(entry.result)
        return None

    def put(
        self,
        server: Hashable,
        context: Hashable,
        method: str,
        target: str | None,
        result: Mapping[str, Any],
        *,
        now: float,
    ) -> bool:
        """Keep ``result``, received at ``now``, as long as its hints allow; True if it was kept.

        An answer replaces what was kept for the same request in either scope, even when it is not kept itself.
        """
        if method not in CACHEABLE_METHODS:
            return False
        for scope in (PUBLIC, context):
            self._entries.pop((server, scope, method, target), None)
        ttl = _ttl_seconds(result)
        if ttl <= 0 or result.get("resultType", "complete") != "complete":
            return False
        scope = PUBLIC if result.get("cacheScope") == "public" else context
        self._entries[(server, scope, method, target)] = _Entry(dict(result), now + ttl)
        while len(self._entries) > self._limit:
            self._entries.popitem(last=False)
        return True

    def invalidate(self, method: str | None = None, uri: str | None = None, *, server: Hashable = None) -> int:
        """Drop what a change made stale; returns how many entries went.

        ``method`` alone: every entry of that method (all pages of a list). ``"resources/read"`` with ``uri``:
        that resource's read. Nothing: everything. ``server`` limits it to one server's entries. This is what a
        list-changed or resource-updated notification calls (see :func:`invalidated_by`).
        """
        doomed = [
            key
            for key in self._entries
            if (server is None or key[0] == server)
            and (method is None or key[2] == method)
            and (uri is None or key[3] == uri)
        ]
        for key in doomed:
            del self._entries[key]
        self._notify(server, method, uri)
        return len(doomed)

    def drop_pages(self, method: str, *, server: Hashable = None) -> int:
        """The server refused a cursor: every kept page of ``method`` goes (they may no longer fit together)."""
        return self.invalidate(method, server=server)

    def on_notification(self, method: str, params: Mapping[str, Any], *, server: Hashable = None) -> bool:
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

    def _notify(self, server: Hashable, method: str | None, uri: str | None) -> None:
        alive: list[weakref.WeakMethod[Listener] | Callable[[], Listener | None]] = []
        for ref in self._listeners:
            listener = ref()
            if listener is not None:
                alive.append(ref)
                listener(server, method, uri)
        self._listeners = alive
