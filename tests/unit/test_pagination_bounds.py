"""One listing is bounded as a whole: a server that pages forever with fresh cursors, or whose pages are each
small but many, is refused at a total of items, bytes and pages, not after ten thousand pages."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_client.errors import ProtocolError
from mcp_client.protocol.pagination import MAX_BYTES, MAX_ITEMS, MAX_PAGES, MAX_VALUES, walk

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]


class _EndlessServer:
    """Answers every page with ``per_page`` items, ``padding`` characters of text and a cursor never seen."""

    def __init__(self, *, per_page: int = 0, padding: int = 0) -> None:
        self.per_page = per_page
        self.padding = padding
        self.pages = 0

    async def fetch(self, params: dict[str, Any]) -> dict[str, Any]:
        self.pages += 1
        tools = [{"name": "t"}] * self.per_page
        return {"tools": tools, "nextCursor": f"c{self.pages}", "_meta": {"pad": "x" * self.padding}}


async def test_a_listing_of_more_items_than_the_bound_is_refused_when_it_passes_it() -> None:
    server = _EndlessServer(per_page=1_000)
    with pytest.raises(ProtocolError, match="100,000 items"):
        await walk("tools/list", server.fetch)
    assert server.pages == MAX_ITEMS // 1_000 + 1


async def test_a_listing_of_more_bytes_than_the_bound_is_refused_when_it_passes_it() -> None:
    server = _EndlessServer(padding=1024 * 1024)
    with pytest.raises(ProtocolError, match="bytes in one listing"):
        await walk("tools/list", server.fetch)
    assert server.pages == MAX_BYTES // (1024 * 1024)  # (each page is a little more than its padding)


async def test_a_listing_of_empty_pages_ends_at_the_page_bound() -> None:
    server = _EndlessServer()
    with pytest.raises(ProtocolError, match="pages"):
        await walk("tools/list", server.fetch)
    assert server.pages == MAX_PAGES == 1_000


async def test_a_repeated_cursor_is_still_a_loop_and_its_text_is_cut_in_the_error() -> None:
    long_cursor = "k" * 100_000

    async def fetch(params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [], "nextCursor": long_cursor}

    with pytest.raises(ProtocolError, match="repeated the cursor") as caught:
        await walk("tools/list", fetch)
    assert len(str(caught.value)) < 200


async def test_a_listing_within_the_bounds_is_every_page_in_order() -> None:
    async def fetch(params: dict[str, Any]) -> dict[str, Any]:
        at = int(params.get("cursor", "0"))
        page: dict[str, Any] = {"tools": [{"name": f"t{at}"}]}
        if at < 4:
            page["nextCursor"] = str(at + 1)
        return page

    pages = await walk("tools/list", fetch)
    assert [p["tools"][0]["name"] for p in pages] == ["t0", "t1", "t2", "t3", "t4"]


async def test_a_listing_of_more_values_than_the_bound_is_refused_when_it_passes_it() -> None:
    """Red team: each page one tool whose schema holds 65,000 empty objects (under every bound of a message): 200
    such pages were 39 MB of JSON, under the bytes bound, and grew the host by 1.8 GB; 680 pass no other bound."""
    blob: list[Any] = [{}] * 65_000
    pages = 0

    async def fetch(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal pages
        pages += 1
        tool = {"name": f"t{pages}", "inputSchema": {"type": "object", "x": blob}}
        return {"tools": [tool], "nextCursor": f"c{pages}"}

    with pytest.raises(ProtocolError, match="1,048,576 values in one listing"):
        await walk("tools/list", fetch)
    assert MAX_VALUES == 1024 * 1024
    assert pages == MAX_VALUES // 130_000 + 1  # (each page: 130,000 values and a few)


async def test_commas_and_brackets_in_a_listings_texts_are_no_values() -> None:
    """A listing's texts are one value each, whatever they hold: 5,000 tools whose descriptions hold 500 commas."""
    description = "a, b, [c], {d}, " * 125
    tools = [{"name": f"t{i}", "description": description, "inputSchema": {"type": "object"}} for i in range(5_000)]

    async def fetch(params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": tools}

    (page,) = await walk("tools/list", fetch)
    assert len(page["tools"]) == 5_000
