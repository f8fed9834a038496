"""``client.listen()`` at 2026-07-28 against the scripted peer, in-process with stdio's framing.

Tests where time passes (backoffs, the opening's bound, an hour of quiet) run on trio's fake clock; the others on
asyncio as well.

The peer's listens are driven from the test (:class:`~mcp_client.testing._peer_listen.ListenBoard`): changes,
the graceful completion, the server's teardown by ``notifications/cancelled``; its script acknowledges all, part
or nothing of a filter, or speaks before acknowledging. Every subscription shares the one stream, so these also
prove the demultiplexing by subscription id.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import anyio
import pytest

from mcp_client import (
    CancelMethod,
    CancelSent,
    Change,
    Client,
    Event,
    ListenPolicy,
    MethodNotFound,
    PromptsListChanged,
    ProtocolViolation,
    Relistened,
    ResourcesListChanged,
    ResourceUpdated,
    Subscription,
    SubscriptionError,
    SubscriptionFilter,
    SubscriptionLost,
    ToolsListChanged,
    memory,
)
from mcp_client.subscriptions.router import router_for
from mcp_client.testing.peer import ListenScript, ScriptedPeer

pytestmark = pytest.mark.anyio

TOOLS_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"


def modern_peer(**script: object) -> ScriptedPeer:
    return ScriptedPeer(era="modern", listen=ListenScript(**script))  # type: ignore[arg-type]


async def next_change(sub: Subscription, within: float = 5.0) -> Change:
    with anyio.fail_after(within):
        return await sub.__anext__()


async def test_changes_arrive_after_the_acknowledgement_and_the_completion_ends_the_loop(
    connect: Callable[..., Client],
) -> None:
    peer = modern_peer()
    uris = ["memo://hello"]
    async with (
        connect(peer) as client,
        client.listen(tools=True, prompts=True, resources=True, resource_uris=uris) as sub,
    ):
        assert sub.acknowledged == SubscriptionFilter(
            tools=True, prompts=True, resources=True, resource_uris=("memo://hello",)
        )
        assert peer.listens.received[0]["notifications"] == {
            "toolsListChanged": True,
            "promptsListChanged": True,
            "resourcesListChanged": True,
            "resourceSubscriptions": ["memo://hello"],
        }
        peer.listens.notify(TOOLS_CHANGED)
        peer.listens.notify("notifications/prompts/list_changed")
        peer.listens.notify("notifications/resources/list_changed")
        peer.listens.notify(UPDATED, {"uri": "memo://hello"})
        seen = [await next_change(sub) for _ in range(4)]
        assert seen == [
            ToolsListChanged(),
            PromptsListChanged(),
            ResourcesListChanged(),
            ResourceUpdated("memo://hello"),
        ]
        peer.listens.complete()
        with anyio.fail_after(5):
            rest = [change async for change in sub]
        assert rest == []
        assert sub.relistens == 0
    assert list(peer.listens.ends.values()) == ["completed"]


@pytest.mark.fake_clock
async def test_a_quiet_subscription_outlives_every_call_timeout(connect: Callable[..., Client]) -> None:
    peer = modern_peer()
    async with connect(peer) as client, client.listen(tools=True, prompts=False, resources=False) as sub:
        await anyio.sleep(3600)  # the client's policy: idle 10 s, maximum 100 s; neither applies to a listen
        assert peer.listens.open
        peer.listens.notify(TOOLS_CHANGED)
        assert await next_change(sub) == ToolsListChanged()
        assert sub.relistens == 0


async def test_leaving_the_block_cancels_the_listen_on_stdio_with_a_notification(
    connect: Callable[..., Client], events: list[Event]
) -> None:
    peer = modern_peer()
    async with connect(peer) as client:
        async with client.listen(tools=True) as sub:
            listen_id = sub.subscription_id
        with anyio.fail_after(5):
            while not peer.listens.ends:
                await anyio.sleep(0.01)
        assert peer.listens.ends == {listen_id: "cancelled"}
        assert peer.stats.cancelled_request_ids == [listen_id]
        assert [e.how for e in events if isinstance(e, CancelSent)] == [CancelMethod.NOTIFICATION]
        assert [c async for c in sub] == []


async def test_a_partial_acknowledgement_is_visible_and_filters_what_is_delivered(
    connect: Callable[..., Client], events: list[Event]
) -> None:
    peer = modern_peer(acknowledge="partial")
    asked = ["memo://hello", "memo://other"]
    async with connect(peer) as client, client.listen(tools=True, resource_uris=asked) as sub:
        assert sub.asked.resource_uris == tuple(asked)
        assert sub.acknowledged == SubscriptionFilter(tools=True, resource_uris=("memo://hello",))
        # A server that sends what it did not agree to: dropped and reported, never delivered.
        listen = peer.listens.open[0]
        listen.honoured = {**(listen.honoured or {}), "promptsListChanged": True}
        peer.listens.notify("notifications/prompts/list_changed")
        peer.listens.notify(TOOLS_CHANGED)
        assert await next_change(sub) == ToolsListChanged()
    assert any(isinstance(e, ProtocolViolation) and "did not ask for it" in e.detail for e in events)


async def test_notifications_before_the_acknowledgement_are_ignored(
    connect: Callable[..., Client], events: list[Event]
) -> None:
    peer = modern_peer(early=True)
    async with connect(peer) as client, client.listen(tools=True) as sub:
        peer.listens.notify(UPDATED, {"uri": "memo://hello"})  # not asked for: the peer does not send it
        peer.listens.complete()
        with anyio.fail_after(5):
            assert [change async for change in sub] == []
    assert peer.stats.sent[1]["method"] == TOOLS_CHANGED  # the early one went out before the acknowledgement
    assert any(isinstance(e, ProtocolViolation) and "before its acknowledgement" in e.detail for e in events)


@pytest.mark.fake_clock
async def test_a_listen_never_acknowledged_fails_its_opening_at_the_policy_bound(
    connect: Callable[..., Client],
) -> None:
    peer = modern_peer(acknowledge="never")
    async with connect(peer) as client:
        started = anyio.current_time()
        with pytest.raises(SubscriptionError, match="did not acknowledge subscriptions/listen within 7 s"):
            await client.listen(tools=True, policy=ListenPolicy(open_timeout=7)).__aenter__()
        assert anyio.current_time() - started == pytest.approx(7)
        with anyio.fail_after(5):
            while not peer.listens.ends:
                await anyio.sleep(0.01)
        # The unacknowledged listen is cancelled on the wire, not left open on the server.
        assert list(peer.listens.ends.values()) == ["cancelled"]


@pytest.mark.fake_clock
async def test_the_servers_teardown_ends_that_subscription_only_and_it_is_listened_again(
    connect: Callable[..., Client], events: list[Event]
) -> None:
    peer = modern_peer()
    policy = ListenPolicy(initial_backoff=2, max_backoff=2)
    async with (
        connect(peer) as client,
        client.listen(prompts=False, resources=False, policy=policy) as first,
        client.listen(resource_uris=["memo://hello"], tools=False, prompts=False, resources=False) as second,
    ):
        first_id, second_id = first.subscription_id, second.subscription_id
        assert first_id != second_id
        # Tear down only the first one: notifications/cancelled naming its listen id.
        target = next(listen for listen in peer.listens.open if listen.request_id == first_id)
        target.commands[0].send_nowait(("tear down",))
        started = anyio.current_time()
        # After the backoff, a new listen with a new id; the consumer is told to refetch (no replay).
        assert await next_change(first) == ToolsListChanged(after_relisten=True)
        assert anyio.current_time() - started <= 2
        assert first.relistens == 1
        assert first.subscription_id not in (first_id, second_id)
        assert peer.listens.ends == {first_id: "torn down"}
        # The other subscription was untouched and still gets its own changes, and only its own.
        peer.listens.notify(UPDATED, {"uri": "memo://hello"})
        assert await next_change(second) == ResourceUpdated("memo://hello")
        peer.listens.notify(TOOLS_CHANGED)
        assert await next_change(first) == ToolsListChanged()
        assert second.relistens == 0
    relistened = [e for e in events if isinstance(e, Relistened)]
    assert [(e.previous_id, e.streak) for e in relistened] == [(first_id, 1)]
    assert "tore the subscription down" in str(relistened[0].cause)
    # Nothing was sent back for the torn-down listen: a cancel for it would have been stray.
    assert first_id not in peer.stats.cancelled_request_ids


@pytest.mark.fake_clock
async def test_a_teardown_drops_the_tool_annotations_the_subscription_guards(connect: Callable[..., Client]) -> None:
    peer = modern_peer()
    async with connect(peer) as client:
        await client.list_tools()
        assert client._annotations
        async with client.listen(prompts=False, resources=False) as sub:
            peer.listens.tear_down()
            assert await next_change(sub) == ToolsListChanged(after_relisten=True)
            assert client._annotations == {}


@pytest.mark.fake_clock
async def test_the_subscription_gives_up_after_the_policys_relistens(
    connect: Callable[..., Client], events: list[Event]
) -> None:
    peer = modern_peer()
    policy = ListenPolicy(initial_backoff=1, max_backoff=4, max_relistens=2, healthy_after=60)
    async with connect(peer) as client, client.listen(prompts=False, resources=False, policy=policy) as sub:
        for _ in range(2):
            peer.listens.tear_down()
            assert await next_change(sub, within=10) == ToolsListChanged(after_relisten=True)
        peer.listens.tear_down()
        with pytest.raises(SubscriptionLost, match="gave up after 3 drops in a row"):
            await next_change(sub, within=10)
    assert [e.streak for e in events if isinstance(e, Relistened)] == [1, 2]


@pytest.mark.fake_clock
async def test_the_backoff_grows_with_drops_in_a_row_and_stays_under_its_cap(connect: Callable[..., Client]) -> None:
    peer = modern_peer()
    policy = ListenPolicy(initial_backoff=1, max_backoff=3, healthy_after=1000)
    waits: list[float] = []
    async with connect(peer) as client, client.listen(prompts=False, resources=False, policy=policy) as sub:
        for _ in range(6):
            peer.listens.tear_down()
            started = anyio.current_time()
            assert await next_change(sub, within=10) == ToolsListChanged(after_relisten=True)
            waits.append(anyio.current_time() - started)
    assert all(0 <= wait <= bound + 1e-9 for wait, bound in zip(waits, [1, 2, 3, 3, 3, 3], strict=True))


async def test_a_server_without_listen_raises_its_error_on_entry(connect: Callable[..., Client]) -> None:
    peer = modern_peer(supported=False)
    async with connect(peer) as client:
        with pytest.raises(MethodNotFound):
            await client.listen(tools=True).__aenter__()
        assert await client.list_prompts()  # the session is unharmed


async def test_bad_filters_are_refused_before_anything_is_sent(connect: Callable[..., Client]) -> None:
    peer = modern_peer()
    async with connect(peer) as client:
        with pytest.raises(ValueError, match="at least one"):
            client.listen(tools=False, prompts=False, resources=False)
        with pytest.raises(TypeError, match="not one string"):
            client.listen(resource_uris="memo://hello")
        with pytest.raises(TypeError, match="True or False"):
            client.listen(tools=1)  # type: ignore[arg-type]
    assert peer.listens.received == []


async def test_a_subscription_closed_without_being_entered_sends_nothing(connect: Callable[..., Client]) -> None:
    peer = modern_peer()
    async with connect(peer) as client:
        sub = client.listen()
        with anyio.fail_after(5):
            await sub.aclose()
        assert [change async for change in sub] == []
        with pytest.raises(RuntimeError, match="not open yet"):
            _ = sub.acknowledged
    assert peer.listens.received == []


def _tool_lists(peer: ScriptedPeer) -> int:
    return sum(1 for message in peer.stats.received if message.get("method") == "tools/list")


@pytest.mark.fake_clock
async def test_a_change_and_a_drop_both_drop_the_cached_tool_list(connect: Callable[..., Client]) -> None:
    peer = ScriptedPeer(era="modern", listen=ListenScript(), ttl_ms=3_600_000)
    async with connect(peer) as client, client.listen(prompts=False, resources=False) as sub:
        await client.list_tools()
        await client.list_tools()
        assert _tool_lists(peer) == 1  # fresh for an hour: served from the cache
        peer.listens.notify(TOOLS_CHANGED)
        assert await next_change(sub) == ToolsListChanged()
        await client.list_tools()
        assert _tool_lists(peer) == 2  # the change on the listen stream dropped it
        peer.listens.tear_down()
        assert await next_change(sub) == ToolsListChanged(after_relisten=True)
        await client.list_tools()
        assert _tool_lists(peer) == 3  # so did the drop: what changed meanwhile is unknown


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_session_that_listened_is_collected_once_its_client_is_gone(era: str) -> None:
    peer = ScriptedPeer(era=era, listen=ListenScript())  # type: ignore[arg-type]
    # no event hook: events a host keeps may hold frames
    async with Client(memory(peer.serve)) as client, client.listen(tools=True) as sub:
        session = weakref.ref(client._calls_runner.session)
        router = weakref.ref(router_for(client._calls_runner.session))
    del client, sub
    gc.collect()
    assert session() is None
    assert router() is None


@pytest.mark.fake_clock
async def test_answers_kept_while_the_subscription_was_down_are_dropped_when_it_is_acknowledged_again(
    connect: Callable[..., Client],
) -> None:
    peer = ScriptedPeer(era="modern", ttl_ms=600_000, listen=ListenScript())
    policy = ListenPolicy(open_timeout=5, initial_backoff=1, max_backoff=1)
    async with connect(peer) as client, client.listen(tools=True, policy=policy) as sub:
        peer.listens.script = ListenScript(acknowledge="never")
        peer.listens.tear_down()
        while len(peer.listens.received) < 2:  # the re-listen is out, not acknowledged: the gap
            await anyio.sleep(0.01)
        await client.list_tools()  # answered by the server while no change could reach us, and kept
        asked = sum(1 for message in peer.stats.received if message.get("method") == "tools/list")
        peer.listens.script = ListenScript()
        assert await next_change(sub, within=30) == ToolsListChanged(after_relisten=True)
        await client.list_tools()  # the refetch the change asks for reaches the server
        assert sum(1 for message in peer.stats.received if message.get("method") == "tools/list") == 2 * asked


async def test_naming_a_kind_listens_to_exactly_the_kinds_named_and_naming_none_to_every_list(
    connect: Callable[..., Client],
) -> None:
    peer = modern_peer()
    async with connect(peer) as client:
        async with client.listen(resource_uris=["memo://hello"]) as sub:
            assert sub.asked == SubscriptionFilter(resource_uris=("memo://hello",))
        async with client.listen(tools=True) as sub:
            assert sub.asked == SubscriptionFilter(tools=True)
        async with client.listen() as sub:
            assert sub.asked == SubscriptionFilter(tools=True, prompts=True, resources=True)
        async with client.listen(prompts=False) as sub:  # nothing named: every list but the one turned off
            assert sub.asked == SubscriptionFilter(tools=True, resources=True)
    assert [received["notifications"] for received in peer.listens.received] == [
        {"resourceSubscriptions": ["memo://hello"]},
        {"toolsListChanged": True},
        {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True},
        {"toolsListChanged": True, "resourcesListChanged": True},
    ]


async def test_an_update_of_a_sub_resource_of_a_subscribed_uri_is_delivered(
    connect: Callable[..., Client], events: list[Event]
) -> None:
    """2025-11-25 reads the same filter (``SubscriptionFilter.allows``), covered in the unit tests."""
    peer = modern_peer()
    async with connect(peer) as client, client.listen(resource_uris=["memo://dir"]) as sub:
        peer.listens.notify(UPDATED, {"uri": "memo://dir/a.txt"})
        assert await next_change(sub) == ResourceUpdated("memo://dir/a.txt")
    assert not [e for e in events if isinstance(e, ProtocolViolation)]
