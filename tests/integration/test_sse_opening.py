"""Opening an HTTP+SSE stream, and finding an HTTP+SSE server behind ``http()``, in fake time (httpx2's
``MockTransport`` in the test's loop, trio's ``MockClock``).

* Issue 29, item 2: ``async with Client(sse(url))`` never ended when the server answered the GET with headers and
  no ``endpoint`` event, or with no headers at all; the stream is now opened by ``initialize``, inside the
  client's connect budget.
* Item 20: ``http()``'s fallback took a refusal only on the connection's first request, so a slow server whose 405
  came after the probe's timeout was never found; any request refused before a POST was accepted is the cue now.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx2
import pytest

from mcp_client import Client, ConnectError, TimeoutPolicy, http, sse
from mcp_client.protocol.negotiate import ERA_CACHE
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.sse._endpoint import KNOWN_SSE_ENDPOINTS
from tests.integration.sse_peer import SsePeer

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

SSE_URL = "http://sse.test/sse"
CONNECT = 5.0


class _Silent(httpx2.AsyncByteStream):
    """An event stream that never sends a byte."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        await anyio.sleep_forever()
        yield b""  # pragma: no cover


def _quiet_server(kind: str) -> httpx2.MockTransport:
    async def handler(request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and kind == "no headers":
            await anyio.sleep_forever()
        if request.method == "GET":
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_Silent())
        return httpx2.Response(404)

    return httpx2.MockTransport(handler)


@pytest.mark.parametrize("kind", ["headers and no endpoint event", "no headers"])
async def test_opening_the_stream_ends_by_the_connect_budget(kind: str) -> None:
    async with httpx2.AsyncClient(transport=_quiet_server(kind)) as client_http:
        started = anyio.current_time()
        with anyio.fail_after(600), pytest.raises(ConnectError):
            async with Client(sse(SSE_URL, client=client_http), timeout=TimeoutPolicy(connect=CONNECT)):
                pass  # pragma: no cover
        assert anyio.current_time() - started <= CONNECT + 1.0


async def test_a_late_refusal_still_finds_the_http_sse_server() -> None:
    """The 405 to the probe comes after the probe's timeout (the probe is given up); the one to ``initialize`` is
    the cue: the GET finds the stream and ``initialize`` goes over it."""
    peer = SsePeer(ScriptedPeer(era="legacy"))
    ERA_CACHE.forget(SSE_URL)
    KNOWN_SSE_ENDPOINTS.forget(SSE_URL)

    async def slow(request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and request.url.path == "/sse":
            await anyio.sleep(3)  # a slow server: each refusal takes longer than the probe may
        return await peer._handle(request)

    try:
        async with peer.serving(), httpx2.AsyncClient(transport=httpx2.MockTransport(slow)) as client_http:
            transport = http(SSE_URL, client=client_http)
            async with Client(transport, probe_timeout=1, timeout=TimeoutPolicy(connect=60)) as client:
                assert client.protocol_version == "2025-11-25"
                result = await client.call_tool("echo", {"text": "found it"})
        assert result.content[0].text == "found it"  # type: ignore[union-attr]
        assert SSE_URL in KNOWN_SSE_ENDPOINTS
    finally:
        ERA_CACHE.forget(SSE_URL)
        KNOWN_SSE_ENDPOINTS.forget(SSE_URL)
