"""Cacheable requests and list pagination through a :class:`~mcp_client.ResultCache`, for one client.

:meth:`CachedRequests.fetch` answers a cacheable request from the cache while the kept result is fresh (unless the
caller bypasses it), else sends it and keeps the answer as its hints allow. :meth:`CachedRequests.pages` walks a
list's pages, each fetched that way (the cursor walk itself, for any paginated method, is
:func:`~mcp_client.protocol.pagination.walk`). When the server refuses a cursor (-32602) every kept page of the
list goes; if some page of this walk came from the cache, the walk starts over once from the first page, uncached.
Talks to the server only through the ``send`` function it is given (the client's ``request``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, get_args

from mcp_client.cache.result_cache import LIST_METHODS, CacheMode, ResultCache
from mcp_client.errors import InvalidParams
from mcp_client.protocol.pagination import walk

__all__ = ["CacheArg", "CachedRequests", "cache_mode"]

CacheArg = bool | CacheMode
"""What a cacheable call takes as ``cache=``: a :data:`~mcp_client.CacheMode`, ``True`` (``"use"``) or
``False`` (``"refresh"``)."""


Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def cache_mode(cache: CacheArg) -> CacheMode:
    """The mode ``cache=`` names.

    Raises:
        ValueError: it names none.
    """
    if cache is True:
        return "use"
    if cache is False:
        return "refresh"
    if cache in get_args(CacheMode):
        return cache
    raise ValueError(f"cache must be True, False, 'use', 'refresh' or 'bypass', got {cache!r}")


class CachedRequests:
    """One client's cacheable requests: its cache (or none), its server key and its authorization context."""

    def __init__(self, cache: ResultCache | None, server: str, context: str, now: Callable[[], float]) -> None:
        self.cache = cache
        self.server = server
        self.context = context
        self._now = now

    def _target(self, method: str, params: dict[str, Any]) -> str | None:
        target = params.get("cursor") if method in LIST_METHODS else params.get("uri")
        return target if isinstance(target, str) else None

    async def fetch(
        self, method: str, params: dict[str, Any], send: Send, *, mode: CacheMode, since: int | None = None
    ) -> tuple[dict[str, Any], bool]:
        """The result of ``method`` and whether it came from the cache.

        The answer is kept only if no invalidation concerning it happened after ``since`` (default: now, before
        it is sent), so an answer racing a list-changed notification is never kept.
        """
        cache = self.cache if mode != "bypass" else None
        target = self._target(method, params)
        if cache is None:
            return await send(method, params), False
        if mode == "use":
            kept = cache.get(self.server, self.context, method, target, now=self._now())
            if kept is not None:
                return kept, True
        generation = cache.generation if since is None else since
        result = await send(method, params)
        cache.put(self.server, self.context, method, target, result, now=self._now(), since=generation)
        return result, False

    async def pages(self, method: str, send: Send, *, mode: CacheMode) -> AsyncIterator[dict[str, Any]]:
        """Every page of ``method`` in order, following ``nextCursor`` to the end.

        No page is kept if the list was invalidated after the walk began (its pages may not fit together).
        """
        served_from_cache = cursor_refused = restarted = False
        since = self.cache.generation if self.cache is not None else None

        async def fetch(params: dict[str, Any]) -> dict[str, Any]:
            nonlocal served_from_cache, cursor_refused
            page_mode: CacheMode = "refresh" if restarted and mode == "use" else mode
            try:
                page, cached = await self.fetch(method, params, send, mode=page_mode, since=since)
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
                since = self.cache.generation  # the walk that starts over may keep its pages
            if not served_from_cache:
                raise
            restarted = True  # a kept page pointed at a cursor the server no longer knows: start over, uncached
            found = await walk(method, fetch)
        for page in found:
            yield page
