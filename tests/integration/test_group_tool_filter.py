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
