"""Issue 29, item 2 on a real socket, on asyncio and trio: a server that answers the HTTP+SSE GET with headers
and no ``endpoint`` event, or with no headers at all, fails ``async with Client(sse(url))`` with a
``ConnectError`` once the client's connect budget is spent (it never ended before). The budget's exact time is
checked in fake time in ``test_sse_opening.py``; here only that it ends, typed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
import pytest

from mcp_client import Client, ConnectError, TimeoutPolicy, http, sse
from mcp_client.transports.base import Transport
from tests.integration.hostile_http import HostileHttp, Reply, Seen

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


async def _nothing() -> AsyncIterator[bytes]:
    await anyio.sleep_forever()
    yield b""  # pragma: no cover


def _route(kind: str) -> HostileHttp:
    async def route(seen: Seen) -> Reply:
        if kind == "no headers":
            await anyio.sleep_forever()
        return Reply(200, {"content-type": "text/event-stream"}, _nothing())

    return HostileHttp(route)


@pytest.mark.parametrize("kind", ["headers and no endpoint event", "no headers"])
async def test_opening_the_stream_of_a_silent_server_ends_typed(kind: str) -> None:
    server = _route(kind)
    async with server.serving() as base:
        with anyio.fail_after(30), pytest.raises(ConnectError):
            async with Client(sse(f"{base}/sse"), timeout=TimeoutPolicy(connect=0.5)):
                pass  # pragma: no cover
    assert [seen.method for seen in server.requests] == ["GET"]


@pytest.mark.parametrize("make", [sse, http], ids=["sse", "http"])
async def test_a_failure_outside_the_http_librarys_errors_ends_typed(make: Callable[[str], Transport]) -> None:
    """A port past 65535 makes the socket layer raise ``OverflowError`` (inside anyio's task group on asyncio),
    which no HTTP library maps: ``async with Client(sse(url))`` raised a bare ``ExceptionGroup``. Opening the
    stream fails typed whatever the library raises."""
    with anyio.fail_after(30), pytest.raises(ConnectError):
        async with Client(make("http://127.0.0.1:99999/sse"), timeout=TimeoutPolicy(connect=5)):
            pass  # pragma: no cover


@pytest.mark.parametrize("make", [sse, http], ids=["sse", "http"])
async def test_a_url_nothing_can_read_ends_typed(make: Callable[[str], Transport]) -> None:
    """``Client(http("http://[::1/mcp"))`` raised Python's ``ValueError('Invalid IPv6 URL')`` from the cache
    partition's reading of the URL, in ``Client()`` itself. The client is made; starting it fails typed."""
    client = Client(make("http://[::1/mcp"), timeout=TimeoutPolicy(connect=5))
    with anyio.fail_after(30), pytest.raises(ConnectError):
        async with client:
            pass  # pragma: no cover
