"""The CacheableResult rules (2026-07-28) in ResultCache: freshness, scope, pages, invalidation. Pure, fake time."""

from __future__ import annotations

import weakref
from typing import Any

import pytest
from hypothesis import given, strategies as st

from mcp_client.cache.partition import authorization_context, identity_token, new_token, server_key
from mcp_client.cache.requests import cache_mode
from mcp_client.cache.result_cache import MAX_TTL, ResultCache, invalidated_by
from mcp_client.cache.store import CacheEntry, CacheKey, MemoryCacheStore

SERVER = "https://example.com/mcp"
ALICE, BOB = "ctx:alice", "ctx:bob"


def page(ttl: Any = 1000, scope: str | None = "public", **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "complete", "tools": [], **extra}
    if ttl is not None:
        result["ttlMs"] = ttl
    if scope is not None:
        result["cacheScope"] = scope
    return result


@given(ttl=st.integers(min_value=1, max_value=10**9), received=st.floats(min_value=0, max_value=1e6))
def test_fresh_while_now_is_before_received_plus_ttl(ttl: int, received: float) -> None:
    cache = ResultCache()
    assert cache.put(SERVER, ALICE, "tools/list", None, page(ttl), now=received)
    seconds = min(ttl / 1000, MAX_TTL)
    before = received + seconds - max(1e-6, seconds * 1e-9)
    if before > received:
        assert cache.get(SERVER, ALICE, "tools/list", None, now=before) is not None
    assert cache.get(SERVER, ALICE, "tools/list", None, now=received + seconds) is None


@pytest.mark.parametrize("ttl", [None, 0, -5, 1.5, "1000", True])
def test_absent_zero_negative_or_malformed_ttl_is_not_kept(ttl: Any) -> None:
    cache = ResultCache()
    assert not cache.put(SERVER, ALICE, "tools/list", None, page(ttl), now=0)
    assert cache.get(SERVER, ALICE, "tools/list", None, now=0) is None


def test_a_ttl_is_capped_and_only_complete_results_of_cacheable_methods_are_kept() -> None:
    cache = ResultCache()
    cache.put(SERVER, ALICE, "tools/list", None, page(10**12), now=0)
    assert cache.get(SERVER, ALICE, "tools/list", None, now=MAX_TTL - 1) is not None
    assert cache.get(SERVER, ALICE, "tools/list", None, now=MAX_TTL) is None
    assert not cache.put(SERVER, ALICE, "tools/call", None, page(), now=0)
    assert not cache.put(SERVER, ALICE, "resources/read", "a://x", page(resultType="input_required"), now=0)


def test_each_page_is_its_own_entry_and_an_answer_replaces_the_kept_one() -> None:
    cache = ResultCache()
    cache.put(SERVER, ALICE, "tools/list", None, page(tools=["a"], nextCursor="c"), now=0)
    cache.put(SERVER, ALICE, "tools/list", "c", page(tools=["b"]), now=0)
    assert cache.get(SERVER, ALICE, "tools/list", None, now=0)["tools"] == ["a"]  # type: ignore[index]
    assert cache.get(SERVER, ALICE, "tools/list", "c", now=0)["tools"] == ["b"]  # type: ignore[index]
    cache.put(SERVER, ALICE, "tools/list", "c", page(0), now=1)  # a newer answer that may not be kept
    assert cache.get(SERVER, ALICE, "tools/list", "c", now=1) is None
    copy = cache.get(SERVER, ALICE, "tools/list", None, now=0)
    assert copy is not None
    copy["tools"] = ["changed by the caller"]
    assert cache.get(SERVER, ALICE, "tools/list", None, now=0)["tools"] == ["a"]  # type: ignore[index]


def test_private_entries_are_never_shared_across_authorization_contexts() -> None:
    cache = ResultCache()
    cache.put(SERVER, ALICE, "resources/read", "a://secret", page(scope="private"), now=0)
    cache.put(SERVER, ALICE, "resources/read", "a://unscoped", page(scope=None), now=0)  # no scope: private
    cache.put(SERVER, ALICE, "tools/list", None, page(scope="public"), now=0)
    assert cache.get(SERVER, ALICE, "resources/read", "a://secret", now=0) is not None
    assert cache.get(SERVER, BOB, "resources/read", "a://secret", now=0) is None
    assert cache.get(SERVER, BOB, "resources/read", "a://unscoped", now=0) is None
    assert cache.get(SERVER, BOB, "tools/list", None, now=0) is not None  # public: any context of this server
    assert cache.get("https://other.example/mcp", ALICE, "tools/list", None, now=0) is None  # never another server


def test_invalidation_by_notification_method_uri_and_server() -> None:
    cache = ResultCache()
    for server in (SERVER, "other"):
        cache.put(server, ALICE, "tools/list", None, page(), now=0)
        cache.put(server, ALICE, "tools/list", "c", page(), now=0)
        cache.put(server, ALICE, "resources/read", "a://1", page(), now=0)
        cache.put(server, ALICE, "resources/read", "a://2", page(), now=0)
        cache.put(server, ALICE, "resources/templates/list", None, page(), now=0)
    assert cache.on_notification("notifications/tools/list_changed", {}, server=SERVER)
    assert cache.get(SERVER, ALICE, "tools/list", "c", now=0) is None
    assert cache.get("other", ALICE, "tools/list", "c", now=0) is not None
    cache.on_notification("notifications/resources/updated", {"uri": "a://1"}, server=SERVER)
    assert cache.get(SERVER, ALICE, "resources/read", "a://1", now=0) is None
    assert cache.get(SERVER, ALICE, "resources/read", "a://2", now=0) is not None
    cache.on_notification("notifications/resources/list_changed", {}, server=SERVER)
    assert cache.get(SERVER, ALICE, "resources/templates/list", None, now=0) is None
    assert not cache.on_notification("notifications/message", {"level": "info"}, server=SERVER)
    assert cache.drop_pages("tools/list") == 2  # every server's pages, when no server is named
    assert cache.invalidate() == 4
    assert len(cache) == 0
    assert invalidated_by("notifications/prompts/list_changed", {}) == [("prompts/list", None)]


def test_the_cache_is_bounded_and_tells_its_listeners() -> None:
    cache = ResultCache(limit=2)
    for n in range(3):
        cache.put(SERVER, ALICE, "resources/read", f"a://{n}", page(), now=0)
    assert cache.get(SERVER, ALICE, "resources/read", "a://0", now=0) is None
    heard: list[tuple[object, str | None, str | None]] = []

    class Owner:
        def hear(self, server: object, method: str | None, uri: str | None) -> None:
            heard.append((server, method, uri))

    owner = Owner()
    cache.add_listener(owner.hear)
    cache.add_listener(lambda *event: heard.append(("plain", *event[1:])))
    cache.invalidate("tools/list", server=SERVER)
    assert heard == [(SERVER, "tools/list", None), ("plain", "tools/list", None)]
    del owner  # a bound method is held weakly: a client that is gone hears nothing
    cache.invalidate()
    assert heard[-1] == ("plain", None, None)
    assert len(heard) == 3
    with pytest.raises(ValueError, match="limit"):
        ResultCache(limit=0)


class _Http:
    def __init__(
        self, headers: dict[str, str], auth: object = None, url: str = "https://mcp.example/mcp", client: object = None
    ) -> None:
        self.url, self.headers, self.auth, self.client = url, headers, auth, client


class _SignIn:
    """Stands for an ``httpx.Auth``: an object that can be weakly referenced."""


def test_the_authorization_context_follows_every_credential() -> None:
    owner = new_token()
    alice = _Http({"Authorization": "Bearer a", "Accept": "application/json", "User-Agent": "x"})
    alice_again = _Http({"authorization": "Bearer a"})
    assert authorization_context(alice, owner) == authorization_context(alice_again, new_token())
    assert authorization_context(alice, owner) != authorization_context(_Http({"Authorization": "Bearer b"}), owner)
    # Unknown headers count (an API key in a header of the host's choosing); only known-harmless ones are ignored.
    assert authorization_context(_Http({"X-API-Key": "k1"}), owner) != authorization_context(
        _Http({"X-API-Key": "k2"}), owner
    )
    assert authorization_context(_Http({"X-Tenant": "a"}), owner) != authorization_context(_Http({}), owner)
    # The URL's userinfo and query are credentials too.
    base = "https://mcp.example/mcp"
    assert authorization_context(_Http({}, url=f"{base}?api_key=1"), owner) != authorization_context(
        _Http({}, url=f"{base}?api_key=2"), owner
    )
    assert authorization_context(_Http({}, url="https://a:1@mcp.example/mcp"), owner) != authorization_context(
        _Http({}, url="https://a:2@mcp.example/mcp"), owner
    )
    # A sign-in object is its own identity; one that cannot be weakly referenced falls back to its client's.
    sign_in = _SignIn()
    assert authorization_context(_Http({}, sign_in), owner) == authorization_context(_Http({}, sign_in), new_token())
    assert authorization_context(_Http({}, sign_in), owner) != authorization_context(_Http({}, _SignIn()), owner)
    assert authorization_context(_Http({}, object()), owner) != authorization_context(_Http({}, object()), new_token())
    # stdio and in-memory: per client; an explicit partition replaces everything derived.
    assert authorization_context(object(), new_token()) != authorization_context(object(), new_token())
    assert authorization_context(alice, owner, "user-7") == authorization_context(object(), new_token(), "user-7")
    with pytest.raises(ValueError, match="partition"):
        authorization_context(alice, owner, "")


def test_an_identity_token_is_never_reused_after_its_object_is_collected() -> None:
    seen: set[str] = set()
    for _ in range(200):
        sign_in = _SignIn()
        token = identity_token(sign_in)
        assert token is not None
        assert identity_token(sign_in) == token  # stable while it lives
        assert token not in seen  # a new object at a recycled address gets a new token
        seen.add(token)
        collected = weakref.ref(sign_in)
        del sign_in  # freed here by its reference count: no cycle, so no gc.collect() (slow in a big test process)
        assert collected() is None
    assert identity_token(object()) is None  # cannot be weakly referenced: the caller uses its own identity


def test_the_server_key_is_the_endpoint_without_userinfo_and_a_stdio_server_is_its_clients() -> None:
    owner = new_token()
    assert server_key(_Http({}, url="https://u:p@mcp.example/mcp"), owner) == "http:https://mcp.example/mcp"
    assert server_key(_Http({}, url="https://mcp.example/mcp?t=1"), owner) == "http:https://mcp.example/mcp?t=1"
    assert server_key(object(), owner) != server_key(object(), new_token())


def test_an_answer_in_flight_across_an_invalidation_is_not_kept() -> None:
    cache = ResultCache()
    since = cache.generation
    cache.on_notification("notifications/tools/list_changed", {}, server="s")  # while tools/list was in flight
    assert not cache.put("s", "ctx", "tools/list", None, page(60_000), now=0.0, since=since)
    assert cache.get("s", "ctx", "tools/list", None, now=1.0) is None
    # Unrelated invalidations (another server, another list, another URI) do not concern it.
    since = cache.generation
    cache.invalidate("tools/list", server="other")
    cache.invalidate("prompts/list", server="s")
    cache.invalidate("resources/read", "memo://b", server="s")
    assert cache.put("s", "ctx", "tools/list", None, page(60_000), now=0.0, since=since)
    assert cache.put("s", "ctx", "resources/read", "memo://a", page(60_000), now=0.0, since=since)
    assert not cache.put("s", "ctx", "resources/read", "memo://b", page(60_000), now=0.0, since=since)
    # Once the record of invalidations overflows, an answer older than what was forgotten is refused.
    since = cache.generation
    for n in range(2000):
        cache.invalidate("resources/read", f"memo://{n}", server="s")
    assert not cache.put("s", "ctx", "prompts/list", None, page(60_000), now=0.0, since=since)
    assert cache.put("s", "ctx", "prompts/list", None, page(60_000), now=0.0, since=cache.generation)


class _ListStore:
    """A host's store: a plain dict, and a switch that makes it fail."""

    def __init__(self) -> None:
        self.entries: dict[CacheKey, CacheEntry] = {}
        self.broken = False

    def get(self, key: CacheKey) -> CacheEntry | None:
        if self.broken:
            raise OSError("store down")
        return self.entries.get(key)

    def set(self, key: CacheKey, entry: CacheEntry) -> None:
        if self.broken:
            raise OSError("store down")
        self.entries[key] = entry

    def delete(self, key: CacheKey) -> None:
        if self.broken:
            raise OSError("store down")
        self.entries.pop(key, None)

    def keys(self) -> list[CacheKey]:
        if self.broken:
            raise OSError("store down")
        return list(self.entries)


def test_a_pluggable_store_and_clock_and_a_failing_store_is_a_miss() -> None:
    store = _ListStore()
    wall = [1000.0]
    cache = ResultCache(store=store, clock=lambda: wall[0])
    assert cache.put("s", "alice", "tools/list", None, page(10_000, "private"), now=-5.0)
    assert list(store.entries) == [CacheKey("s", "alice", "tools/list", None)]
    assert store.entries[CacheKey("s", "alice", "tools/list", None)].expires == 1010.0  # on the store's clock
    assert cache.get("s", "alice", "tools/list", None, now=99_999.0) is not None  # the passed now is ignored
    assert cache.get("s", "bob", "tools/list", None, now=0.0) is None
    wall[0] = 1011.0
    assert cache.get("s", "alice", "tools/list", None, now=0.0) is None
    store.broken = True
    assert cache.get("s", "alice", "tools/list", None, now=0.0) is None
    assert not cache.put("s", "alice", "tools/list", None, page(10_000), now=0.0)
    assert cache.invalidate() == 0
    assert len(cache) == 0
    with pytest.raises(TypeError, match="CacheStore"):
        ResultCache(store=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="limit"):
        MemoryCacheStore(limit=0)


@pytest.mark.parametrize(("given", "mode"), [(True, "use"), (False, "refresh"), ("use", "use"), ("bypass", "bypass")])
def test_the_cache_argument_names_a_mode(given: Any, mode: str) -> None:
    assert cache_mode(given) == mode


def test_a_cache_argument_that_names_no_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="bypass"):
        cache_mode("sometimes")  # type: ignore[arg-type]
