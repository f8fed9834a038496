"""A paginated listing (``tools/list``, ``resources/list``...): the cursor walk every list of every era takes.

Pure protocol: each page is got by a ``fetch(params)`` the caller hands in (through the result cache, or straight
to the server), and the walk follows ``nextCursor`` to the end, refusing a server that loops.

One listing is bounded as a whole, not only page by page: at most :data:`MAX_PAGES` pages, :data:`MAX_ITEMS` items
(the entries of its lists, all pages together), :data:`MAX_BYTES` of JSON and :data:`MAX_VALUES` values (what the
pages cost to hold follows their values, not their bytes: 200 pages of one tool whose schema held 65,000 empty
objects were 39 MB of JSON and grew the host by 1.8 GB). A server past any of them gets a
:class:`~mcp_client.errors.ProtocolError` naming the bound, and nothing of the walk is kept; the cursors seen are
remembered by their digests, so a server's long cursors cost nothing more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_client.errors import ProtocolError
from mcp_client.protocol.json_values import compact_json, count_values

__all__ = ["MAX_BYTES", "MAX_ITEMS", "MAX_PAGES", "MAX_VALUES", "Fetch", "walk"]

MAX_PAGES = 1_000
"""Pages one list may have before the walk is taken for a loop."""

MAX_ITEMS = 100_000
"""Items one list may have, its pages together (tools, resources, prompts or templates)."""

MAX_BYTES = 128 * 1024 * 1024
"""JSON bytes one list may hold, its pages together (128 MiB)."""

MAX_VALUES = 1024 * 1024
"""Values one list may hold, its pages together, as :func:`~.json_values.count_values` counts them in each page's
compact JSON (eight messages' worth at the default limit: some 10,000 tools of 100-value schemas)."""

Fetch = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Gets one page: called with the page's params (``{}`` or ``{"cursor": ...}``), returns its ``result``."""


async def walk(method: str, fetch: Fetch) -> list[dict[str, Any]]:
    """Every page of the listing ``method``, each got by ``fetch(params)``, following ``nextCursor`` to the end.

    Raises:
        ProtocolError: the server repeated a cursor, sent one that is not a string, or sent more pages, items,
            bytes or values than one listing may hold.
    """
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[bytes] = set()
    items = size = values = 0
    for _ in range(MAX_PAGES):
        page = await fetch({} if cursor is None else {"cursor": cursor})
        items += sum(len(value) for value in page.values() if isinstance(value, list))
        if items > MAX_ITEMS:
            raise ProtocolError(f"{method}: more than {MAX_ITEMS:,} items in one listing", method=method)
        data = compact_json(page)
        size += len(data)
        if size > MAX_BYTES:
            raise ProtocolError(f"{method}: more than {MAX_BYTES:,} bytes in one listing", method=method)
        values += count_values(data, MAX_VALUES - values)
        if values > MAX_VALUES:
            raise ProtocolError(f"{method}: more than {MAX_VALUES:,} values in one listing", method=method)
        found.append(page)
        next_cursor = page.get("nextCursor")
        if next_cursor is None:
            return found
        if not isinstance(next_cursor, str):
            raise ProtocolError(f"{method}: nextCursor is not a string: {next_cursor!r:.80}", method=method)
        digest = hashlib.sha256(next_cursor.encode(errors="surrogatepass")).digest()
        if digest in seen:
            raise ProtocolError(f"{method}: the server repeated the cursor {next_cursor!r:.80}", method=method)
        seen.add(digest)
        cursor = next_cursor
    raise ProtocolError(f"{method}: more than {MAX_PAGES:,} pages", method=method)
