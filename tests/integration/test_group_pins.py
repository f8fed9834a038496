"""A group's tool pins are per server. Pins are keyed by tool name, and two servers of one group may each have a
tool of the same name: one set of pins shared by every server (what a ``tool_pins=`` passed to each client made)
reported each server's tool as a change of the other's, and with ``pin_tools=True`` refused one server's calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_client import ClientGroup, ToolChanged, ToolDefinitionChanged, memory
from mcp_client.client.tool_pins import ToolNotReviewed, ToolPins
from mcp_client.events import Event
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of
from tests.integration.test_group_lazy import spec

pytestmark = pytest.mark.anyio


def _two_echoes() -> tuple[ScriptedPeer, ScriptedPeer]:
    """Two servers that each have an ``echo``, described differently."""
    first, second = ScriptedPeer(), ScriptedPeer()
    second.tool_edits["echo"] = {"description": "the second server's echo"}
    return first, second


async def test_each_server_keeps_its_own_pins_and_both_tools_of_one_name_are_called() -> None:
    first, second = _two_echoes()
    pins = {"first": ToolPins(), "second": ToolPins()}
    events: list[tuple[str, Event]] = []
    servers = {"first": memory(first.serve), "second": memory(second.serve)}
    async with ClientGroup(
        servers, tool_pins=pins, pin_tools=True, on_event=lambda name, e: events.append((name, e))
    ) as group:
        assert text_of(await group.call_tool("first/echo", {"text": "one"})) == "one"
        assert text_of(await group.call_tool("second/echo", {"text": "two"})) == "two"
    assert not [event for _, event in events if isinstance(event, ToolDefinitionChanged)]
    first_pin, second_pin = pins["first"].pinned("echo"), pins["second"].pinned("echo")
    assert first_pin is not None
    assert second_pin is not None
    assert second_pin["description"] == "the second server's echo"
    assert first_pin["description"] != second_pin["description"]


async def test_a_change_on_one_server_is_reported_for_that_server_alone() -> None:
    first, second = _two_echoes()
    pins = {"first": ToolPins(), "second": ToolPins()}
    servers = {"first": memory(first.serve), "second": memory(second.serve)}
    async with ClientGroup(servers, tool_pins=pins, pin_tools=True) as group:
        second.tool_edits["echo"] = {"description": "changed"}
        await group.list_tools()
        assert text_of(await group.call_tool("first/echo", {"text": "one"})) == "one"
        assert pins["second"].changed == ("echo",)
        assert pins["first"].changed == ()


def test_one_set_of_pins_for_several_servers_is_refused_clearly() -> None:
    first, second = _two_echoes()
    with pytest.raises(TypeError, match="per server"):
        ClientGroup({"first": memory(first.serve), "second": memory(second.serve)}, tool_pins=ToolPins())


def test_pins_for_a_server_the_group_does_not_have_are_refused() -> None:
    with pytest.raises(ValueError, match="'third'"):
        ClientGroup({"first": memory(ScriptedPeer().serve)}, tool_pins={"third": ToolPins()})
    with pytest.raises(TypeError, match="'first'"):
        ClientGroup({"first": memory(ScriptedPeer().serve)}, tool_pins={"first": {"echo": "pinned"}})


async def test_one_set_of_pins_is_taken_by_a_group_of_one_server() -> None:
    pins = ToolPins()
    async with ClientGroup({"only": memory(ScriptedPeer().serve)}, tool_pins=pins, pin_tools=True) as group:
        assert text_of(await group.call_tool("only/echo", {"text": "x"})) == "x"
    assert pins.pinned("echo") is not None


async def test_a_change_since_a_lazy_servers_snapshot_is_reported_with_the_hosts_pins_too(tmp_path: Path) -> None:
    """The snapshot's listing is what the model was shown before the server started: the host's own pins, which
    did not name the tool, took the changed definition as its pin, and the call ran unreported."""
    peer = ScriptedPeer()
    server = spec(peer.serve, "snapshotted")
    async with ClientGroup({"s": server}, start="lazy", snapshot=tmp_path) as group:
        await group.list_tools()
    peer.tool_edits["echo"] = {"description": "changed since the snapshot"}
    pins = ToolPins()
    async with ClientGroup({"s": server}, start="lazy", snapshot=tmp_path, pin_tools=True, tool_pins=pins) as group:
        with pytest.raises(ToolChanged):
            await group.call_tool("s/echo", {"text": "x"})
        assert peer.stats.calls_by_tool["echo"] == 0
        assert pins.changed == ("echo",)
        group.accept_tool_change("s/echo")
        assert text_of(await group.call_tool("s/echo", {"text": "x"})) == "x"


async def test_strict_pins_are_not_widened_by_a_lazy_servers_snapshot(tmp_path: Path) -> None:
    peer = ScriptedPeer()
    server = spec(peer.serve, "strict")
    async with ClientGroup({"s": server}, start="lazy", snapshot=tmp_path) as group:
        await group.list_tools()
    pins = ToolPins(strict=True)
    async with ClientGroup({"s": server}, start="lazy", snapshot=tmp_path, pin_tools=True, tool_pins=pins) as group:
        with pytest.raises(ToolNotReviewed):
            await group.call_tool("s/echo", {"text": "x"})
    assert peer.stats.calls_by_tool["echo"] == 0
