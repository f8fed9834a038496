"""``policy.max_in_flight`` per server: read from ``mcp.json`` (checked, with the key's path in the error), and
held by each server of a ``ClientGroup`` on its own, over the group's ``max_in_flight`` option."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_client import ClientGroup, ConfigError, ServerSpec, TimeoutPolicy, Transport, load_config, memory
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

LONG = TimeoutPolicy(idle=30, maximum=100)


def test_policy_max_in_flight_is_read_from_mcp_json() -> None:
    config = load_config(
        {"mcpServers": {"slow": {"command": "x", "policy": {"max_in_flight": 4}}, "other": {"command": "y"}}}
    )
    specs = config.specs()
    assert specs["slow"].max_in_flight == 4
    assert specs["other"].max_in_flight is None


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "4"])
def test_a_bad_max_in_flight_names_the_key_and_the_reason(value: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"mcpServers": {"slow": {"command": "x", "policy": {"max_in_flight": value}}}})
    assert "mcpServers.slow.policy.max_in_flight: must be an integer >= 1 or null" in str(caught.value)


def test_a_bad_limit_of_a_group_server_is_refused_when_the_group_is_made() -> None:
    peer = ScriptedPeer()
    with pytest.raises(ValueError, match="server 'a'"):
        ClientGroup({"a": ServerSpec(memory(peer.serve), max_in_flight=0)})


async def test_each_server_holds_its_own_limit_and_a_servers_own_replaces_the_groups() -> None:
    """Group option 1, server ``wide`` 3 of its own: four 10 s calls take 40 s on ``narrow``, 20 s on ``wide``."""
    narrow, wide = ScriptedPeer(era="modern"), ScriptedPeer(era="modern")
    servers: dict[str, ServerSpec | Transport] = {
        "narrow": memory(narrow.serve),
        "wide": ServerSpec(memory(wide.serve), max_in_flight=3),
    }
    ended: dict[str, float] = {}
    async with ClientGroup(servers, timeout=LONG, max_in_flight=1) as group:
        start = anyio.current_time()

        async def four(server: str) -> None:
            async with anyio.create_task_group() as calls:
                for _ in range(4):
                    calls.start_soon(group.call_tool, f"{server}/slow", {"seconds": 10})
            ended[server] = anyio.current_time() - start

        async with anyio.create_task_group() as both:
            both.start_soon(four, "narrow")
            both.start_soon(four, "wide")
    assert ended == {"narrow": pytest.approx(40), "wide": pytest.approx(20)}
