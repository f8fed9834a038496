"""The pure parts of subscriptions: ListenPolicy (its checks, its jittered backoff that grows to a cap, when it gives
up), the filter and change values, the deduplicating mailbox, and the router's demultiplexing."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from mcp_client import (
    Change,
    ListenPolicy,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    SubscriptionFilter,
    ToolsListChanged,
)
from mcp_client.subscriptions.changes import change_from_notification, changes_for
from mcp_client.subscriptions.pending import MAX_PENDING_URI_CHARS, PendingChanges
from mcp_client.subscriptions.router import SubscriptionRouter, id_key


def test_backoff_is_full_jitter_under_a_bound_that_doubles_to_the_cap() -> None:
    policy = ListenPolicy(initial_backoff=0.5, max_backoff=3, multiplier=2)
    random.seed(1234)
    for streak, bound in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (10, 3.0)]:
        waits = [policy.backoff(streak) for _ in range(300)]
        assert all(0 <= wait <= bound for wait in waits), streak
        assert max(waits) > 0.9 * bound  # the whole range is used: the bound really grew to here
        assert min(waits) < 0.1 * bound  # and it is jittered all the way down


def test_gives_up_only_past_max_relistens() -> None:
    assert not ListenPolicy().gives_up(10_000)
    policy = ListenPolicy(max_relistens=2)
    assert [policy.gives_up(streak) for streak in (1, 2, 3)] == [False, False, True]
    assert ListenPolicy(max_relistens=0).gives_up(1)


@pytest.mark.parametrize(
    "changes",
    [
        {"open_timeout": 0},
        {"open_timeout": float("inf")},
        {"initial_backoff": -1},
        {"max_backoff": float("nan")},
        {"multiplier": 0.5},
        {"max_relistens": -1},
        {"max_relistens": True},
        {"healthy_after": "10"},
    ],
)
def test_bad_values_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises((TypeError, ValueError)):
        ListenPolicy().replace(**changes)


def test_acknowledged_filter_is_capped_by_what_was_asked() -> None:
    asked = SubscriptionFilter(tools=True, resource_uris=("a://1", "a://2"))
    wire = {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["a://2", "a://9"]}
    assert asked.honoured(wire) == SubscriptionFilter(tools=True, resource_uris=("a://2",))
    assert asked.honoured(None) == SubscriptionFilter()
    assert asked.to_wire() == {"toolsListChanged": True, "resourceSubscriptions": ["a://1", "a://2"]}


def test_an_update_of_a_sub_resource_is_news_for_its_subscription() -> None:
    asked = SubscriptionFilter(resource_uris=("file:///dir", "memo://root/"))
    assert asked.allows(ResourceUpdated("file:///dir"))
    assert asked.allows(ResourceUpdated("file:///dir/a.txt"))
    assert asked.allows(ResourceUpdated("file:///dir#part"))
    assert asked.allows(ResourceUpdated("memo://root/x"))
    assert not asked.allows(ResourceUpdated("file:///dir2"))
    assert not asked.allows(ResourceUpdated("file:///"))


def test_notifications_map_to_changes() -> None:
    assert change_from_notification("notifications/tools/list_changed", {}) == ToolsListChanged()
    assert change_from_notification("notifications/prompts/list_changed", {}) == PromptsListChanged()
    assert change_from_notification("notifications/resources/list_changed", {}) == ResourcesListChanged()
    assert change_from_notification("notifications/resources/updated", {"uri": "a://1"}) == ResourceUpdated("a://1")
    assert change_from_notification("notifications/resources/updated", {"uri": 3}) is None
    assert change_from_notification("notifications/message", {}) is None
    every = SubscriptionFilter(tools=True, prompts=True, resources=True, resource_uris=("a://1",))
    assert changes_for(every) == [
        ToolsListChanged(True),
        PromptsListChanged(True),
        ResourcesListChanged(True),
        ResourceUpdated("a://1", True),
    ]


@pytest.mark.anyio
async def test_pending_changes_are_deduplicated_in_arrival_order() -> None:
    pending = PendingChanges()
    changes: list[Change] = [
        ToolsListChanged(),
        ResourceUpdated("a://1"),
        ToolsListChanged(True),
        ResourceUpdated("a://2"),
    ]
    for change in changes:
        pending.put(change)
    pending.finish()
    pending.put(PromptsListChanged())  # after the end: dropped
    got = [await pending.get() for _ in range(3)]
    assert got == [ToolsListChanged(), ResourceUpdated("a://1"), ResourceUpdated("a://2")]
    with pytest.raises(StopAsyncIteration):
        await pending.get()


class _Route:
    def __init__(self, own: str | None, unnamed: bool = False) -> None:
        self.own = own
        self.unnamed = unnamed
        self.got: list[str] = []
        self.torn: list[str | None] = []

    def owns(self, subscription_id: str) -> bool:
        return subscription_id == self.own

    def on_notification(self, method: str, params: dict[str, object]) -> None:
        self.got.append(method)

    def on_torn_down(self, reason: str | None) -> None:
        self.torn.append(reason)

    def on_closed(self, error: object) -> None:
        self.got.append("closed")


class _Session:
    def add_listener(self, listener: object) -> Callable[[], None]:
        return lambda: None


def test_the_router_demultiplexes_by_subscription_id_whatever_its_json_type() -> None:
    router = SubscriptionRouter(_Session())  # type: ignore[arg-type]
    seven, eight, legacy = _Route("7"), _Route("8"), _Route(None, unnamed=True)
    for route in (seven, eight, legacy):
        router.add(route)
    meta = "io.modelcontextprotocol/subscriptionId"
    router.on_notification("notifications/tools/list_changed", {"_meta": {meta: "7"}})
    router.on_notification("notifications/prompts/list_changed", {"_meta": {meta: 8}})
    router.on_notification("notifications/resources/list_changed", {"_meta": {meta: 9}})  # nobody's: dropped
    router.on_notification("notifications/resources/list_changed", {"_meta": {meta: True}})  # not an id
    router.on_notification("notifications/tools/list_changed", {})  # names no subscription: 2025-11-25 routes
    router.on_notification("notifications/cancelled", {"requestId": 8, "reason": "bye"})
    router.on_notification("notifications/cancelled", {"requestId": 99})
    assert seven.got == ["notifications/tools/list_changed"]
    assert eight.got == ["notifications/prompts/list_changed"]
    assert legacy.got == ["notifications/tools/list_changed"]
    assert (seven.torn, eight.torn) == ([], ["bye"])
    assert id_key(7) == id_key("7") == "7"
    assert id_key(None) is None


@pytest.mark.anyio
async def test_a_backlog_of_distinct_resource_updates_is_bounded_and_its_drops_are_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pending = PendingChanges(limit=3)
    with caplog.at_level("WARNING", logger="mcp_client.subscriptions"):
        for n in range(10_000):
            pending.put(ResourceUpdated(f"file:///dir/{n}"))
        pending.put(ResourceUpdated("file:///dir/1"))  # waiting already: adds nothing, drops nothing
        pending.put(ToolsListChanged())  # a list change is never dropped
    assert pending.dropped == 10_000 - 3
    assert len([r for r in caplog.records if "backlog is full" in r.message]) == 1  # once per run of drops
    got = [await pending.get() for _ in range(4)]
    assert got == [ResourceUpdated(f"file:///dir/{n}") for n in range(3)] + [ToolsListChanged()]
    pending.put(ResourceUpdated("file:///dir/late"))
    assert await pending.get() == ResourceUpdated("file:///dir/late")


def test_the_backlog_bound_is_a_checked_part_of_the_listen_policy() -> None:
    assert ListenPolicy().max_pending == 1024
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_pending"):
            ListenPolicy(max_pending=bad)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_backlog_of_long_resource_uris_is_bounded_by_their_length_too() -> None:
    """Red team: the backlog was bounded by its count of changes alone, so 1,024 updates of sub-resources with URIs of
    1 MiB each (every message far under the size limit) held 1 GiB until the consumer read them."""
    pending = PendingChanges()  # the default count: 1,024
    long = "x" * (1024 * 1024)
    for n in range(200):
        pending.put(ResourceUpdated(f"file:///dir/{n}/{long}"))
    held = 0
    while pending.waiting:
        change = await pending.get()
        assert isinstance(change, ResourceUpdated)
        held += len(change.uri)
    assert held <= MAX_PENDING_URI_CHARS == 8 * 1024 * 1024
    assert pending.dropped == 200 - MAX_PENDING_URI_CHARS // (1024 * 1024 + 16)
    pending.put(ResourceUpdated("file:///dir/short"))  # room again once the consumer read them
    assert await pending.get() == ResourceUpdated("file:///dir/short")
