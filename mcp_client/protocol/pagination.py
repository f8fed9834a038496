"""A paginated listing (``tools/list``, ``resources/list``...): the cursor walk every list of every era takes.

Pure protocol: each page is got by a ``fetch(params)`` the caller hands in (through the result cache, or straight
to the server), and the walk follows ``nextCursor`` to the end, refusing a server that loops.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp_client.errors import ProtocolError

__all__ = ["MAX_PAGES", "Fetch", "walk"]

MAX_PAGES = 10_000
"""Pages one list may have before the walk is taken for a loop."""

Fetch = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Gets one page: called with the page's params (``{}`` or ``{"cursor": ...}``), returns its ``result``."""


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
