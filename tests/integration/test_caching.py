"""Cacheable results through the client: list_tools twice within the server's ttl makes one request; pages,
invalid cursors, notifications, bypass and the policy's hints. On a fake clock."""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator
from typing import Any, Literal

import anyio
import httpx2
import pytest

from mcp_client import Client, InvalidParams, TimeoutPolicy, memory
from mcp_client.cache.result_cache import ResultCache
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.http import HttpTransport, http
from tests.integration.line_server import JSON, LineServer, Notify, RpcError

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)


def requests(peer: ScriptedPeer, method: str) -> int:
    return sum(1 for message in peer.stats.received if message.get("method") == method)


async def test_list_tools_twice_within_the_ttl_makes_one_request(connect: Callable[..., Client]) -> None:
    peer = ScriptedPeer(era="modern", ttl_ms=30_000, page_size=5)
    async with connect(peer) as client:
        first = await client.list_tools()
        pages = requests(peer, "tools/list")
        assert pages > 1  # several pages, each kept on its own
        await anyio.sleep(29)
        assert await client.list_tools() == first
        assert requests(peer, "tools/list") == pages
        await client.list_tools(cache=False)  # the caller bypasses the cache
        assert requests(peer, "tools/list") == 2 * pages
        await anyio.sleep(30.5)  # stale now: asked again, never before someone asks (a ttl is no polling interval)
        assert requests(peer, "tools/list") == 2 * pages
        await client.list_tools()
        assert requests(peer, "tools/list") == 3 * pages


async def test_nothing_is_kept_without_a_ttl_and_reads_are_kept_per_uri(connect: Callable[..., Client]) -> None:
    async with connect(ScriptedPeer(era="modern")) as client:  # ttlMs 0: immediately stale
        await client.list_prompts()
        await client.list_prompts()
    peer = ScriptedPeer(era="modern", ttl_ms=5_000, cache_scope="private")
    async with connect(peer) as client:
        await client.read_resource("memo://hello")
        await client.read_resource("memo://hello")
        await client.discover()
        await client.discover()
        await client.list_resource_templates()
        await client.list_resource_templates()
        assert client.cache is not None
        assert len(client.cache) == 3
    assert (requests(peer, "resources/read"), requests(peer, "resources/templates/list")) == (1, 1)
    assert requests(peer, "server/discover") == 1  # the start-up probe's answer is kept: discover() sends nothing


async def test_no_cache_for_a_client_with_cache_false(connect: Callable[..., Client]) -> None:
    peer = ScriptedPeer(era="modern", ttl_ms=30_000)
    async with connect(peer, cache=False) as client:
        assert client.cache is None
        await client.list_tools()
        await client.list_tools()
    assert requests(peer, "tools/list") == 2


class ChangingServer:
    """Two pages of tools at 60 s each; ``generation`` changes the cursor, so an old cursor becomes invalid."""

    def __init__(self) -> None:
        self.generation = 1
        self.server = LineServer(self.handle)

    async def handle(self, method: str, params: JSON, notify: Notify) -> JSON:
        cursor = f"gen{self.generation}"
        if method == "tools/list":
            tool = {"inputSchema": {"type": "object"}, "annotations": {"idempotentHint": True}}
            if params.get("cursor") is None:
                return {"tools": [{"name": f"a{self.generation}", **tool}], "nextCursor": cursor, "ttlMs": 60_000}
            if params["cursor"] != cursor:
                raise RpcError(-32602, "invalid cursor")
            return {"tools": [{"name": f"b{self.generation}", **tool}], "ttlMs": 0}
        if method == "tools/call":
            await notify("notifications/tools/list_changed", {})
            return {"content": []}
        raise RpcError(-32601, method)

    def client(self, **options: Any) -> Client:
        return Client(memory(self.server.serve), timeout=POLICY, **options)

    def cursors(self) -> list[str | None]:
        return [r["params"].get("cursor") for r in self.server.requests if r["method"] == "tools/list"]


async def test_an_invalid_cursor_drops_every_page_and_the_listing_starts_over() -> None:
    changing = ChangingServer()
    async with changing.client() as client:
        assert [t.name for t in await client.list_tools()] == ["a1", "b1"]
        changing.generation = 2  # the kept first page now points at a cursor the server refuses
        assert [t.name for t in await client.list_tools()] == ["a2", "b2"]
        assert client.cache is not None
        assert len(client.cache) == 1  # the new first page only
    assert changing.cursors() == [None, "gen1", "gen1", None, "gen2"]


async def test_an_invalid_cursor_on_a_walk_without_kept_pages_is_the_callers_error() -> None:
    changing = ChangingServer()

    async def refuse_every_cursor(method: str, params: JSON, notify: Notify) -> JSON:
        if params.get("cursor") is not None:
            raise RpcError(-32602, "invalid cursor")
        return {"tools": [], "nextCursor": "x", "ttlMs": 60_000}

    changing.server.handler = refuse_every_cursor
    async with changing.client() as client:
        with pytest.raises(InvalidParams):
            await client.list_tools()
        assert client.cache is not None
        assert len(client.cache) == 0


async def test_a_listing_answered_across_a_list_changed_notification_is_not_kept() -> None:
    changing = ChangingServer()

    async def answer_then_change(method: str, params: JSON, notify: Notify) -> JSON:
        if method != "tools/list":
            raise RpcError(-32601, method)
        listing = {"tools": [{"name": f"a{changing.generation}", "inputSchema": {"type": "object"}}], "ttlMs": 60_000}
        changing.generation += 1  # the list changes while the answer is on its way: the notification comes first
        await notify("notifications/tools/list_changed", {})
        return listing

    changing.server.handler = answer_then_change
    async with changing.client() as client:
        assert [t.name for t in await client.list_tools()] == ["a1"]
        assert [t.name for t in await client.list_tools()] == ["a2"]  # asked again: the stale answer was not kept
        assert client.cache is not None
        assert len(client.cache) == 0


async def test_a_list_changed_notification_drops_the_list_and_the_hints_the_policy_reads() -> None:
    changing = ChangingServer()
    async with changing.client() as client:
        await client.list_tools()
        assert client.is_idempotent("a1")
        await client.call_tool("a1", {})  # the server says its tools changed while answering
        assert not client.is_idempotent("a1")  # the hints went with the cached listing
        await client.list_tools()
        assert client.is_idempotent("a1")
        assert client.cache is not None
        client.cache.invalidate("tools/list")  # what a subscription's change event calls
        assert not client.is_idempotent("a1")
    assert changing.cursors().count(None) == 2


@pytest.mark.parametrize("scope", ["public", "private"])
async def test_a_shared_cache_shares_public_entries_across_sign_ins_and_private_ones_only_within_one(
    scope: Literal["public", "private"],
) -> None:
    peer = ScriptedPeer(era="modern", ttl_ms=60_000, cache_scope=scope)
    shared = ResultCache()
    async with HttpPeer(peer).serving() as url:
        for token in ("alice", "bob", "alice"):
            transport = http(url, headers={"Authorization": f"Bearer {token}"})
            async with Client(transport, timeout=POLICY, cache=shared) as client:
                await client.list_tools()
    # public: one request serves every sign-in; private: alice's answer serves alice again, never bob
    assert requests(peer, "tools/list") == (1 if scope == "public" else 2)


async def test_without_a_cache_a_list_changed_notification_still_drops_the_hints() -> None:
    changing = ChangingServer()
    async with changing.client(cache=False) as client:
        await client.list_tools()
        assert client.is_idempotent("a1")
        await client.call_tool("a1", {})  # the server says its tools changed while answering
        assert not client.is_idempotent("a1")


class _KeyAuth(httpx2.Auth):
    """A sign-in that adds its own key to each request, as an OAuth or API-key auth object would."""

    def __init__(self, key: str) -> None:
        self.key = key

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        request.headers["X-Signed-In-As"] = self.key
        yield request


def _signed_in(url: str, kind: str, user: str, auth: httpx2.Auth | None = None) -> HttpTransport:
    scheme, _, rest = url.partition("://")
    if kind == "auth":
        return http(url, auth=auth if auth is not None else _KeyAuth(user))
    if kind == "x-api-key":
        return http(url, headers={"X-API-Key": user})
    if kind == "query":
        return http(f"{url}?api_key={user}")
    return http(f"{scheme}://{user}:secret@{rest}")  # userinfo


@pytest.mark.parametrize("kind", ["auth", "x-api-key", "query", "userinfo"])
async def test_a_shared_cache_never_serves_one_sign_in_private_entries_to_another_as_clients_churn(kind: str) -> None:
    """Fresh clients, each signed in as someone else, come and go (collected between them) over one shared cache:
    each asks the server itself; the same credential again is served from the cache."""
    peer = ScriptedPeer(era="modern", ttl_ms=600_000, cache_scope="private")
    shared = ResultCache()
    users = [f"user{n}" for n in range(12)]
    async with HttpPeer(peer).serving() as url:
        for user in users:
            async with Client(_signed_in(url, kind, user), timeout=POLICY, cache=shared) as client:
                await client.list_tools()
            del client
            gc.collect()
        assert requests(peer, "tools/list") == len(users)
        kept = _KeyAuth("user0")
        for _ in range(2):  # one sign-in (the same credential, the same auth object) shares its own entries
            async with Client(_signed_in(url, kind, "user0", kept), timeout=POLICY, cache=shared) as client:
                await client.list_tools()
        assert requests(peer, "tools/list") == len(users) + (1 if kind == "auth" else 0)


async def test_the_per_call_mode_uses_refreshes_or_bypasses_the_cache(connect: Callable[..., Client]) -> None:
    peer = ScriptedPeer(era="modern", ttl_ms=30_000, cache_scope="private")
    async with connect(peer) as client:
        assert client.cache is not None
        kept = len(client.cache)  # the start-up probe's server/discover
        await client.read_resource("memo://hello", cache="bypass")  # asked, not kept
        assert len(client.cache) == kept
        await client.read_resource("memo://hello", cache="refresh")  # asked, kept
        await client.read_resource("memo://hello", cache="use")  # served
        await client.read_resource("memo://hello", cache="bypass")  # asked; the kept entry stays
        assert len(client.cache) == kept + 1
        await client.read_resource("memo://hello")
        with pytest.raises(ValueError, match="bypass"):
            await client.read_resource("memo://hello", cache="always")  # type: ignore[arg-type]
    assert requests(peer, "resources/read") == 3


async def test_clients_of_one_named_partition_share_private_entries_and_no_one_else() -> None:
    peer = ScriptedPeer(era="modern", ttl_ms=60_000, cache_scope="private")
    shared = ResultCache()
    async with HttpPeer(peer).serving() as url:
        for user, auth in (("u1", _KeyAuth("a")), ("u1", _KeyAuth("b")), ("u2", _KeyAuth("a"))):
            async with Client(http(url, auth=auth), timeout=POLICY, cache=shared, cache_partition=user) as client:
                await client.list_tools()
    assert requests(peer, "tools/list") == 2  # u1's second sign-in was served u1's entries; u2 asked
