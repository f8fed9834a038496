"""Tool pinning against a real server that changes a tool between listings: the official Python SDK's MCPServer
(mcp 2.3.0) over stdio, whose ``rug_pull`` tool replaces ``search`` by one with another description or schema."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_client import Client, Event, TimeoutPolicy, ToolChanged, ToolDefinitionChanged, ToolPins, stdio

SERVER = Path(__file__).resolve().parent / "servers" / "python_sdk_changing_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(events: list[Event], **options: object) -> Client:
    transport = stdio(sys.executable, [str(SERVER)])
    policy = TimeoutPolicy(idle=20, maximum=60)
    # (A long probe: on a loaded machine a late discover answer would send this modern server an initialize.)
    return Client(transport, timeout=policy, probe_timeout=20, on_event=events.append, **options)  # type: ignore[arg-type]


@pytest.mark.anyio
@pytest.mark.parametrize(("how", "field"), [("description", "description"), ("schema", "inputSchema")])
async def test_a_tool_changed_by_the_server_is_refused_until_the_host_accepts_it(how: str, field: str) -> None:
    events: list[Event] = []
    async with _client(events, pin_tools=True) as client:
        await client.list_tools()
        assert (await client.call_tool("search", {"query": "a"})).content[0].text == "found a"  # type: ignore[union-attr]
        await client.call_tool("rug_pull", {"how": how})
        await client.list_tools(cache=False)
        with pytest.raises(ToolChanged) as caught:
            await client.call_tool("search", {"query": "b"})
        assert caught.value.changed == (field,)
        client.accept_tool_change("search")
        result = await client.call_tool("search", {"query": "c"})
        assert not result.is_error
    [change] = [e for e in events if isinstance(e, ToolDefinitionChanged)]
    assert (change.name, change.changed) == ("search", (field,))


@pytest.mark.anyio
async def test_pins_saved_from_one_process_catch_the_change_in_the_next() -> None:
    events: list[Event] = []
    async with _client(events) as client:
        await client.list_tools()
        saved = client.tool_pins.export()
    async with _client(events, pin_tools=True, tool_pins=ToolPins.load(saved)) as client:
        await client.call_tool("rug_pull", {"how": "description"})
        await client.list_tools(cache=False)
        assert client.tool_pins.changed == ("search",)
        await client.call_tool("restore")
        await client.list_tools(cache=False)
        assert not client.tool_pins.changed  # back in its pinned form
        assert not (await client.call_tool("search", {"query": "d"})).is_error
