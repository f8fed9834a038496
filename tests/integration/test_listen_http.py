"""``client.listen()`` over real Streamable HTTP (2026-07-28) against the scripted peer on a loopback socket.

Over HTTP a subscription is its own response stream: the server can cut it (a drop, which is re-listened with a
new id), and the client ends it by closing it (no notification). Real sockets need real time (``real_clock``);
the backoffs are set short.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from mcp_client import (
    CancelMethod,
    CancelSent,
    Client,
    Event,
    ListenPolicy,
    Relistened,
    ResourceUpdated,
    SubscriptionFilter,
    TimeoutPolicy,
    ToolsListChanged,
    TransportError,
    http,
)
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ListenScript, ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=5, maximum=10, connect=5)
FAST = ListenPolicy(open_timeout=5, initial_backoff=0.05, max_backoff=0.2)


def client_for(url: str, events: list[Event]) -> Client:
    return Client(http(url), protocol="2026-07-28", timeout=POLICY, retry=None, on_event=events.append)


async def wait_until(predicate: Callable[[], object]) -> None:
    with anyio.fail_after(5):
        while not predicate():
            await anyio.sleep(0.01)


async def test_a_dropped_stream_is_listened_again_with_a_new_id(events: list[Event]) -> None:
    peer = ScriptedPeer(era="modern", listen=ListenScript())
    http_peer = HttpPeer(peer)
    async with (
        http_peer.serving() as url,
        client_for(url, events) as client,
        client.listen(tools=True, resource_uris=["memo://hello"], policy=FAST) as sub,
    ):
        assert sub.acknowledged == SubscriptionFilter(tools=True, resource_uris=("memo://hello",))
        first_id = sub.subscription_id
        peer.listens.notify("notifications/tools/list_changed")
        with anyio.fail_after(5):
            assert await sub.__anext__() == ToolsListChanged()
        peer.listens.drop()
        with anyio.fail_after(5):
            refetch = {await sub.__anext__(), await sub.__anext__()}
        assert refetch == {ToolsListChanged(after_relisten=True), ResourceUpdated("memo://hello", after_relisten=True)}
        assert sub.relistens == 1
        assert sub.subscription_id != first_id
        peer.listens.notify("notifications/resources/updated", {"uri": "memo://hello"})
        with anyio.fail_after(5):
            assert await sub.__anext__() == ResourceUpdated("memo://hello")
    listens = http_peer.stats.posts("subscriptions/listen")
    assert [log.rpc_id for log in listens] == [first_id, sub.subscription_id]
    assert listens[0].dropped_by_server
    assert first_id is not None
    assert peer.listens.ends[first_id] == "dropped"
    relistened = [e for e in events if isinstance(e, Relistened)]
    assert len(relistened) == 1
    assert isinstance(relistened[0].cause, TransportError)


async def test_leaving_the_block_closes_the_stream_and_sends_no_notification(events: list[Event]) -> None:
    peer = ScriptedPeer(era="modern", listen=ListenScript())
    http_peer = HttpPeer(peer)
    async with http_peer.serving() as url, client_for(url, events) as client:
        async with client.listen(tools=True, policy=FAST) as sub:
            listen_id = sub.subscription_id
        await wait_until(lambda: peer.listens.ends)
        assert peer.listens.ends == {listen_id: "cancelled"}
        assert http_peer.stats.posts("subscriptions/listen")[0].closed_early
        assert http_peer.stats.posts("notifications/cancelled") == []
        assert [e.how for e in events if isinstance(e, CancelSent)] == [CancelMethod.STREAM_CLOSE]


async def test_the_completion_result_ends_the_loop_over_http(events: list[Event]) -> None:
    peer = ScriptedPeer(era="modern", listen=ListenScript())
    http_peer = HttpPeer(peer)
    async with http_peer.serving() as url, client_for(url, events) as client, client.listen(policy=FAST) as sub:
        peer.listens.complete()
        with anyio.fail_after(5):
            assert [change async for change in sub] == []
        assert sub.relistens == 0
    assert len(http_peer.stats.posts("subscriptions/listen")) == 1
