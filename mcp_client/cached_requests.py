"""Cacheable requests and list pagination through a :class:`~mcp_client.cache.ResultCache`, for one client.

:meth:`CachedRequests.fetch` answers a cacheable request from the cache while the kept result is fresh (unless the
caller bypasses it), else sends it and keeps the answer as its hints allow. :meth:`CachedRequests.pages` walks a
list's pages, each fetched that way (:func:`walk` is the cursor walk itself, for any paginated method). When the
server refuses a cursor (-32602) every kept page of the list goes; if some page of this walk came from the cache,
the walk starts over once from the first page, uncached.
Talks to the server only through the ``send`` function it is given (the client's ``request``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any

from mcp_client.cache import LIST_METHODS, ResultCache
from mcp_client.errors import InvalidParams, ProtocolError

__all__ = ["MAX_PAGES", "CachedRequests", "walk"]

MAX_PAGES = 10_000
"""Pages one list may have before the walk is taken for a loop."""

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
Fetch = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class CachedRequests:
    """One client's cacheable requests: its cache (or none), its server key and its authorization context."""

    def __init__(
        self, cache: ResultCache | None, server: Hashable, context: Hashable, now: Callable[[], float]
    ) -> None:
        self.cache = cache
        self.server = server
        self.context = context
        self._now = now

    def _target(self, method: str, params: dict[str, Any]) -> str | None:
        target = params.get("cursor") if method in LIST_METHODS else params.get("uri")
        return target if isinstance(target, str) else None

    async def fetch(
        self, method: str, params: dict[str, Any], send: Send, *, use_cache: bool
    ) -> tuple[dict[str, Any], bool]:
        """The result of ``method`` and whether it came from the cache."""
        cache = self.cache
        target = self._target(method, params)
        if cache is not None and use_cache:
            kept = cache.get(self.server, self.context, method, target, now=self._now())
            if kept is not None:
                return kept, True
        result = await send(method, params)
        if cache is not None:
            cache.put(self.server, self.context, method, target, result, now=self._now())
        return result, False

    async def pages(self, method: str, send: Send, *, use_cache: bool) -> AsyncIterator[dict[str, Any]]:
        """Every page of ``method`` in order, following ``nextCursor`` to the end."""
        served_from_cache = cursor_refused = restarted = False

        async def fetch(params: dict[str, Any]) -> dict[str, Any]:
            nonlocal served_from_cache, cursor_refused
            try:
                page, cached = await self.fetch(method, params, send, use_cache=use_cache and not restarted)
            except InvalidParams:
                cursor_refused = "cursor" in params
                raise
            served_from_cache = served_from_cache or cached
            return page

        try:
            found = await walk(method, fetch)
        except InvalidParams:
            if not cursor_refused:
                raise  # the first page has no cursor: not a cursor problem
            if self.cache is not None:
                self.cache.drop_pages(method, server=self.server)
            if not served_from_cache:
                raise
            restarted = True  # a kept page pointed at a cursor the server no longer knows: start over, uncached
            found = await walk(method, fetch)
        for page in found:
            yield page


async def walk(method: str, fetch: Fetch) -> list[dict[str, Any]]:
    """Every page of the listing ``method``, each got by ``fetch(params)``, following ``nextCursor`` to the end.

    Raises:
        ProtocolError: the server repeated a cursor, sent one that is not a string, or sent too many pages.
    """
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await fetch({} if cursor is None else {"cursor": cursor})
        found.append(page)
        next_cursor = page.get("nextCursor")
        if next_cursor is None:
            return found
        if not isinstance(next_cursor, str):
            raise ProtocolError(f"{method}: nextCursor is not a string: {next_cursor!r}", method=method)
        if next_cursor in seen:
            raise ProtocolError(f"{method}: the server repeated the cursor {next_cursor!r}", method=method)
        seen.add(next_cursor)
        cursor = next_cursor
    raise ProtocolError(f"{method}: more than {MAX_PAGES} pages", method=method)
