"""The protocol era is remembered per HTTP endpoint: a second connection to a legacy server skips the discover
probe, and a remembered era that stops working is probed again (the spec's "re-probe if the cached assumption
later fails").
"""

from __future__ import annotations

import pytest

from mcp_client import Client, TimeoutPolicy, http
from mcp_client.protocol.negotiate import ERA_CACHE
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=5, maximum=10)


async def test_a_legacy_endpoint_is_not_probed_twice() -> None:
    """The first client probes and falls back to initialize; the second goes straight to initialize."""
    server = HttpPeer(ScriptedPeer(era="legacy"))
    async with server.serving() as url:
        # The cache is the process's: an earlier test's server on this port (the OS reuses ports) may have left
        # its era under this URL, and the first client would start from it.
        ERA_CACHE.forget(http(url).era_cache_key)
        for _ in range(2):
            async with Client(http(url), timeout=POLICY) as client:
                assert client.protocol_version == "2025-11-25"
                await client.call_tool("echo", {"text": "hi"})

    assert len(server.stats.posts("server/discover")) == 1
    assert len(server.stats.posts("initialize")) == 2


async def test_a_remembered_era_that_fails_is_probed_again() -> None:
    """A stale memory (legacy) for a modern-only endpoint: initialize is refused, the client probes and goes on."""
    server = HttpPeer(ScriptedPeer(era="modern"))
    async with server.serving() as url:
        transport = http(url)
        ERA_CACHE.remember(transport.era_cache_key, "2025-11-25")
        async with Client(transport, timeout=POLICY) as client:
            assert client.protocol_version == "2026-07-28"
            await client.call_tool("echo", {"text": "hi"})
        assert ERA_CACHE.get(transport.era_cache_key) == "2026-07-28"

    assert len(server.stats.posts("initialize")) == 1
    assert len(server.stats.posts("server/discover")) >= 1
