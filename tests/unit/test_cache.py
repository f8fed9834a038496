"""The CacheableResult rules (2026-07-28) in ResultCache: freshness, scope, pages, invalidation. Pure, fake time."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_client.cache import MAX_TTL, ResultCache, authorization_context, invalidated_by

SERVER = "https://example.com/mcp"
ALICE, BOB = ("ctx", "alice"), ("ctx", "bob")


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


def test_the_authorization_context_follows_the_credentials() -> None:
    class Http:
        def __init__(self, headers: dict[str, str], auth: object = None) -> None:
            self.headers, self.auth, self.client = headers, auth, None

    alice, alice_again = Http({"Authorization": "Bearer a", "X-Other": "1"}), Http({"authorization": "Bearer a"})
    assert authorization_context(alice, object()) == authorization_context(alice_again, object())
    assert authorization_context(alice, None) != authorization_context(Http({"Authorization": "Bearer b"}), None)
    sign_in = object()
    assert authorization_context(Http({}, sign_in), None) != authorization_context(Http({}, object()), None)
    first, second = object(), object()
    assert authorization_context(object(), first) != authorization_context(object(), second)  # stdio: per client
