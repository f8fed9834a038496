"""``client.listen()`` at 2025-11-25 against ``@modelcontextprotocol/server-everything`` (stdio and HTTP).

The same loop as at 2026-07-28, fed by the session's notifications: the server sends
``notifications/tools/list_changed`` on its own (it registers more tools once initialized), and
``resources/subscribe`` plus its ``toggle-subscriber-updates`` tool make it send ``notifications/resources/updated``
for the subscribed URI (at once, then every 5 s; over HTTP on the standalone GET stream). Leaving the block
unsubscribes, which the server acknowledges with a log message. Real processes, real clocks.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import anyio
import pytest

from mcp_client import (
    Change,
    Client,
    Event,
    ResourceUpdated,
    RestartPolicy,
    ServerNotification,
    ServerRestarted,
    Subscription,
    SubscriptionFilter,
    SubscriptionLost,
    TimeoutPolicy,
    ToolsListChanged,
    http,
    stdio,
)
from tests.interop.conftest import free_port, serve_http

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=20, maximum=60, connect=30)
DOCUMENTS = "demo://resource/static/document/"


async def next_change(sub: Subscription, within: float = 15) -> Change:
    with anyio.fail_after(within):
        return await sub.__anext__()


def _logged(events: list[Event], text: str) -> bool:
    return any(
        isinstance(e, ServerNotification) and e.method == "notifications/message" and text in str(e.params.get("data"))
        for e in events
    )


async def exercise(client: Client, events: list[Event], *, tools_on_its_own: bool) -> None:
    assert client.protocol_version == "2025-11-25"
    async with client.listen(prompts=False, resources=False) as tools:
        assert tools.acknowledged == SubscriptionFilter(tools=True)  # the server declared tools.listChanged
        listed = await client.list_resources()
        document = next(str(r.uri) for r in listed if str(r.uri).startswith(DOCUMENTS))
        async with client.listen(tools=False, prompts=False, resources=False, resource_uris=[document]) as sub:
            assert sub.acknowledged == SubscriptionFilter(resource_uris=(document,))
            await client.call_tool("toggle-subscriber-updates")
            assert await next_change(sub) == ResourceUpdated(document)
            assert not _logged(events, "Unsubscribe")
        with anyio.fail_after(10):
            while not _logged(events, "Unsubscribe"):
                await anyio.sleep(0.05)
        if tools_on_its_own:
            assert await next_change(tools) == ToolsListChanged()
        # Only what each subscription asked for reached it (no resource update on the tools-only one), and
        # closing the client ends the iteration rather than leaving it waiting.
        await client.aclose()
        rest: list[Change] = []
        with pytest.raises(SubscriptionLost, match=r"client was closed|connection is gone"), anyio.fail_after(5):
            rest.extend([change async for change in tools])
        assert set(rest) <= {ToolsListChanged()}


async def test_listen_over_stdio(server_everything_command: list[str]) -> None:
    events: list[Event] = []
    command = server_everything_command
    async with Client(stdio(command[0], command[1:]), timeout=POLICY, on_event=events.append) as client:
        # No await between the session's start and the subscription: the server's own list_changed is not missed.
        await exercise(client, events, tools_on_its_own=True)


@pytest.fixture
def everything_url(server_everything_command: list[str]) -> Iterator[str]:
    port = free_port()
    command = [*server_everything_command[:-1], "streamableHttp"]
    yield from serve_http(command, port, dict(os.environ, PORT=str(port)), "server-everything")


async def test_listen_over_http(everything_url: str) -> None:
    events: list[Event] = []
    async with Client(http(everything_url), timeout=POLICY, on_event=events.append) as client:
        await exercise(client, events, tools_on_its_own=False)


async def test_a_subscription_follows_a_supervised_stdio_server_across_its_restart(
    server_everything_command: list[str],
) -> None:
    """2025-11-25 heals as 2026-07-28 does: the killed server's subscription moves to the new process, its URI is
    ``resources/subscribe``d there again, and the consumer is told to refetch."""
    restart = RestartPolicy(max_restarts=3, window=60, initial_backoff=0.05, max_backoff=0.2)
    command = server_everything_command
    events: list[Event] = []
    async with Client(
        stdio(command[0], command[1:], restart=restart), timeout=POLICY, on_event=events.append
    ) as client:
        listed = await client.list_resources()
        document = next(str(r.uri) for r in listed if str(r.uri).startswith(DOCUMENTS))
        async with client.listen(resource_uris=[document]) as sub:
            for restart_number in (1, 2):  # the second death finds a subscription that healed once already
                killed_pid = client.server_process_id
                assert killed_pid is not None
                os.killpg(killed_pid, signal.SIGKILL)
                assert await next_change(sub) == ResourceUpdated(document, after_relisten=True)
                assert client.server_process_id != killed_pid
                assert sub.relistens == restart_number
                assert sub.acknowledged == SubscriptionFilter(resource_uris=(document,))
            await client.call_tool("toggle-subscriber-updates")  # the new process knows of the subscription
            assert await next_change(sub) == ResourceUpdated(document)
    assert [e for e in events if isinstance(e, ServerRestarted)]
