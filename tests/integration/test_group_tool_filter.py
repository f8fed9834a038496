"""A server's tool filter (``include_tools``/``exclude_tools``, Gemini CLI's ``includeTools``/``excludeTools``, Codex's
``enabled_tools``/``disabled_tools``) in a ClientGroup: a tool it leaves out is never listed and never called."""

from __future__ import annotations

import pytest

from mcp_client import memory
from mcp_client.config import ToolFilter, ToolNotAllowed
from mcp_client.config.load import ServerSpec, load_config
from mcp_client.group import ClientGroup
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio


async def test_an_excluded_tool_is_not_listed_and_its_call_is_refused_before_anything_is_sent() -> None:
    peer = ScriptedPeer()
    spec = ServerSpec(memory(peer.serve, name="filtered"), tool_filter=ToolFilter(exclude=("silent",)))
    async with ClientGroup({"s": spec}) as group:
        assert "s/echo" in group.tools
        assert "s/silent" not in group.tools  # the listing at start
        listed = await group.list_tools()
        assert "silent" not in {tool.name for tool in listed["s"]}
        assert "echo" in {tool.name for tool in listed["s"]}
        with pytest.raises(ToolNotAllowed) as error:
            await group.call_tool("s/silent")
        with pytest.raises(ToolNotAllowed):
            group.tool_call("s/silent")
        assert error.value.tool == "silent"
        assert may_have_run(error.value) is Ran.NO
        assert "leaves it out" in error.value.for_model
        result = await group.call_tool("s/echo", {"text": "hi"})
        assert not result.is_error
    assert dict(peer.stats.calls_by_tool) == {"echo": 1}  # the refused call never reached the server


async def test_an_include_list_from_a_gemini_file_offers_only_its_tools() -> None:
    config = load_config({"mcpServers": {"s": {"command": "unused", "includeTools": ["echo"]}}}, dialect="gemini")
    spec = config.specs()["s"]
    peer = ScriptedPeer()
    async with ClientGroup({"s": ServerSpec(memory(peer.serve), spec.policies, tool_filter=spec.tool_filter)}) as group:
        assert [name for name in group.tools] == ["s/echo"]
        with pytest.raises(ToolNotAllowed):
            await group.call_tool("s/silent")


async def test_the_servers_own_client_refuses_and_hides_a_filtered_tool_too() -> None:
    """``group["s"]`` (and ``group.clients``) is the server's client: the filter holds there as well, so no path
    around the group's own methods reaches a tool the host's file left out."""
    peer = ScriptedPeer()
    spec = ServerSpec(memory(peer.serve, name="filtered"), tool_filter=ToolFilter(exclude=("silent",)))
    async with ClientGroup({"s": spec}) as group:
        client = group["s"]
        with pytest.raises(ToolNotAllowed) as error:
            await client.call_tool("silent")
        assert may_have_run(error.value) is Ran.NO
        with pytest.raises(ToolNotAllowed):
            group.clients["s"].tool_call("silent")
        assert "silent" not in {tool.name for tool in await client.list_tools()}
        assert not (await client.call_tool("echo", {"text": "hi"})).is_error
    assert dict(peer.stats.calls_by_tool) == {"echo": 1}


def test_the_blocking_groups_server_client_refuses_a_filtered_tool() -> None:
    from mcp_client.sync import ClientGroup as BlockingGroup

    peer = ScriptedPeer()
    spec = ServerSpec(memory(peer.serve, name="filtered"), tool_filter=ToolFilter(exclude=("silent",)))
    with BlockingGroup({"s": spec}) as group:
        with pytest.raises(ToolNotAllowed):
            group["s"].call_tool("silent")
        with pytest.raises(ToolNotAllowed):
            group.call_tool("s/silent")
    assert dict(peer.stats.calls_by_tool) == {}


def test_a_hosts_tool_list_names_tools_exactly_as_the_host_does() -> None:
    """Gemini CLI, Codex and Goose compare tool names as written: ``read_*`` there names no tool but ``read_*``."""
    entry = {"command": "x", "includeTools": ["read_*", "get[1]"]}
    config = load_config({"mcpServers": {"s": entry}}, dialect="gemini")
    tool_filter = config.specs()["s"].tool_filter
    assert tool_filter.allows("read_*")
    assert tool_filter.allows("get[1]")
    assert not tool_filter.allows("read_secret")
    assert not tool_filter.allows("get1")
    codex = load_config({"mcp_servers": {"s": {"command": "x", "disabled_tools": ["delete?"]}}}).specs()["s"]
    assert codex.tool_filter.allows("deleteX")
    assert not codex.tool_filter.allows("delete?")
