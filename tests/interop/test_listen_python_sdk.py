"""``client.listen()`` against the official Python SDK's server (mcp 2.3.0), which serves ``subscriptions/listen``.

``python_sdk_listen_server.py`` changes its tool list at run time (``add_tool``), publishes resource updates
(``touch``), and ends its subscriptions gracefully (``end_subscriptions``: the SDK's completion result) or tears
them down (``tear_down_subscriptions``: ``notifications/cancelled`` for each listen id). Over HTTP the server is
also killed and started again on the same port under an open subscription, which must heal by itself. Real
processes, real clocks, short backoffs.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Generator

import anyio
import anyio.to_thread
import pytest

from mcp_client import (
    Change,
    Client,
    Event,
    ListenPolicy,
    Relistened,
    ResourceUpdated,
    RestartPolicy,
    ServerRestarted,
    Subscription,
    SubscriptionFilter,
    TimeoutPolicy,
    ToolsListChanged,
    TransportError,
    http,
    stdio,
)
from tests.interop.conftest import INTEROP_DIR, free_port, serve_http

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

SERVER = INTEROP_DIR / "servers" / "python_sdk_listen_server.py"
POLICY = TimeoutPolicy(idle=20, maximum=60, connect=20)
FAST = ListenPolicy(open_timeout=10, initial_backoff=0.05, max_backoff=0.3)
CONFIG = "memo://config"


async def next_change(sub: Subscription) -> Change:
    with anyio.fail_after(10):
        return await sub.__anext__()


async def exercise(client: Client, events: list[Event]) -> None:
    """The same script over either transport: changes, a teardown that heals, then the graceful end."""
    assert client.protocol_version == "2026-07-28"
    async with client.listen(tools=True, prompts=True, resources=True, resource_uris=[CONFIG], policy=FAST) as sub:
        assert sub.acknowledged == SubscriptionFilter(tools=True, prompts=True, resources=True, resource_uris=(CONFIG,))
        first_id = sub.subscription_id
        await client.call_tool("add_tool", {"name": "fresh"})
        assert await next_change(sub) == ToolsListChanged()
        assert "fresh" in {tool.name for tool in await client.list_tools()}
        await client.call_tool("touch", {"uri": CONFIG})
        assert await next_change(sub) == ResourceUpdated(CONFIG)
        await client.call_tool("touch", {"uri": "memo://not-subscribed"})  # the server filters it out
        # The server tears the subscription down: it is listened again, with a new id, and we are told to refetch.
        await client.call_tool("tear_down_subscriptions")
        refetch = [await next_change(sub) for _ in range(4)]
        assert all(change.after_relisten for change in refetch)
        assert ToolsListChanged(after_relisten=True) in refetch
        assert sub.relistens == 1
        assert sub.subscription_id != first_id
        await client.call_tool("add_tool", {"name": "fresher"})
        assert await next_change(sub) == ToolsListChanged()
        # The graceful end: the loop ends, nothing is listened again.
        await client.call_tool("end_subscriptions")
        with anyio.fail_after(10):
            assert [change async for change in sub] == []
        assert sub.relistens == 1
    relistened = [e for e in events if isinstance(e, Relistened)]
    assert [e.previous_id for e in relistened] == [first_id]


async def test_listen_over_stdio() -> None:
    events: list[Event] = []
    async with Client(stdio(sys.executable, [str(SERVER)]), timeout=POLICY, on_event=events.append) as client:
        await exercise(client, events)


@pytest.fixture
def port() -> int:
    return free_port()


def _server(port: int) -> Generator[str, None, None]:
    """The HTTP server on ``port``: ``next()`` starts it and yields its URL, ``close()`` kills it."""
    command = [sys.executable, str(SERVER), "--http", "--port", str(port)]
    yield from serve_http(command, port, dict(os.environ), "the listen server")


async def test_listen_over_http(port: int) -> None:
    server = _server(port)
    url = next(server)
    try:
        events: list[Event] = []
        async with Client(http(url), timeout=POLICY, on_event=events.append) as client:
            await exercise(client, events)
    finally:
        server.close()


async def test_a_subscription_heals_across_a_server_restart(port: int) -> None:
    server = _server(port)
    url = await anyio.to_thread.run_sync(next, server)
    events: list[Event] = []
    try:
        async with (
            Client(http(url), timeout=POLICY, on_event=events.append) as client,
            client.listen(prompts=False, resources=False, policy=FAST) as sub,
        ):
            await client.call_tool("add_tool", {"name": "before"})
            assert await next_change(sub) == ToolsListChanged()
            first_id = sub.subscription_id
            await anyio.to_thread.run_sync(server.close)  # SIGKILL: the stream breaks, no completion result
            server = _server(port)
            await anyio.to_thread.run_sync(next, server)
            assert await next_change(sub) == ToolsListChanged(after_relisten=True)
            assert sub.relistens >= 1
            assert sub.subscription_id != first_id
            await client.call_tool("add_tool", {"name": "after"})  # a new process: its own fresh tool list
            assert await next_change(sub) == ToolsListChanged()
            assert "after" in {tool.name for tool in await client.list_tools()}
    finally:
        server.close()
    causes = [e.cause for e in events if isinstance(e, Relistened)]
    assert causes
    assert all(isinstance(cause, TransportError) for cause in causes)


async def test_a_subscription_follows_a_supervised_stdio_server_across_its_restart() -> None:
    """Under ``stdio(..., restart=RestartPolicy(...))`` a killed server comes back as a new process with a new
    session; the subscription listens again there by itself and says to refetch."""
    restart = RestartPolicy(max_restarts=3, window=60, initial_backoff=0.05, max_backoff=0.2)
    transport = stdio(sys.executable, [str(SERVER)], restart=restart)
    events: list[Event] = []
    async with (
        Client(transport, timeout=POLICY, on_event=events.append) as client,
        client.listen(prompts=False, resources=False, policy=FAST) as sub,
    ):
        await client.call_tool("add_tool", {"name": "before"})
        assert await next_change(sub) == ToolsListChanged()
        first_id, first_pid = sub.subscription_id, client.server_process_id
        assert first_pid is not None
        os.killpg(first_pid, signal.SIGKILL)
        assert await next_change(sub) == ToolsListChanged(after_relisten=True)
        assert client.server_process_id != first_pid
        assert sub.relistens == 1  # it waited for the new process: no re-listens spent on the dead one
        await client.call_tool("add_tool", {"name": "after"})  # the new process's own subscriber list
        assert await next_change(sub) == ToolsListChanged()
    assert [e for e in events if isinstance(e, ServerRestarted)]
    assert first_id is not None
