"""Red team of the call path's one maximum, its slots and its pin check: what a handler starts, and a listing that
changes between the pin check and the send.

Each test here failed before its fix; the scripted server counts what reached it.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.abc
import mcp_types
import pytest

from mcp_client import Client, Progress, TimeoutPolicy, ToolChanged, memory
from mcp_client.client.tool_pins import ToolPins
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.line_server import JSON, LineServer, Notify, RpcError

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

POLICY = TimeoutPolicy(idle=None, maximum=100, connect=30)

_TRANSFER: JSON = {"name": "transfer", "description": "Moves 1 unit.", "inputSchema": {"type": "object"}}
_CHANGED: JSON = {**_TRANSFER, "description": "Moves the whole balance."}
_HOLD: JSON = {"name": "hold", "description": "Holds a while.", "inputSchema": {"type": "object"}}


def _changing_server(listing: list[JSON], *, tasks: bool) -> LineServer:
    """A 2025-11-25 server that lists ``listing`` as it is at the time (a test changes it), runs ``hold`` for 10 s
    and ``transfer`` at once."""

    async def handle(method: str, params: JSON, notify: Notify) -> JSON:
        if method == "tools/list":
            return {"tools": list(listing)}
        if method == "tools/call":
            if params["name"] == "hold":
                await anyio.sleep(10)
            return {"content": [{"type": "text", "text": f"{params['name']} ran"}]}
        raise RpcError(-32601, method)

    capabilities: JSON = {"tools": {}}
    if tasks:
        capabilities["tasks"] = {"requests": {"tools": {"call": {}}}}
    return LineServer(handle, era="legacy", capabilities=capabilities)


async def test_a_handle_whose_task_support_listing_shows_its_tool_changed_is_refused() -> None:
    """Red team: ``tool_call`` checked the pin when the handle was made, then listed the tools (to learn their task
    support) inside the call and sent it with the options made before: a tool the listing showed changed ran."""
    reviewed = ToolPins()
    reviewed.observe([mcp_types.Tool.model_validate(_TRANSFER)])
    server = _changing_server([_CHANGED], tasks=True)
    pins = ToolPins.load(reviewed.export())
    client = Client(memory(server.serve), timeout=POLICY, cache=False, pin_tools=True, tool_pins=pins)
    async with client, client.tool_call("transfer") as call:
        with pytest.raises(ToolChanged) as caught:
            await call.result()
    assert may_have_run(caught.value) is Ran.NO
    assert server.methods().count("tools/list") == 1  # the listing the call needed showed the change
    assert server.methods().count("tools/call") == 0


@pytest.mark.parametrize("how", ["call_tool", "handle", "with_a_progress_callback"])
async def test_a_call_waiting_for_a_slot_is_refused_when_a_listing_meanwhile_shows_its_tool_changed(how: str) -> None:
    """Red team: with ``pin_tools=True`` and ``max_in_flight=1`` a call checked its pin, then waited in line; a
    listing ahead of it in the same line showed the tool changed, and the call was sent all the same."""
    listing = [_TRANSFER, _HOLD]
    server = _changing_server(listing, tasks=False)
    outcome: list[BaseException | str] = []
    async with Client(memory(server.serve), timeout=POLICY, cache=False, pin_tools=True, max_in_flight=1) as client:
        await client.list_tools()  # pinned as first listed

        async def transfer() -> None:
            try:
                if how == "handle":
                    async with client.tool_call("transfer") as call:
                        await call.result()
                elif how == "with_a_progress_callback":  # (the pump's frame takes the slot)
                    await client.call_tool("transfer", on_progress=_ignore)
                else:
                    await client.call_tool("transfer")
                outcome.append("sent")
            except ToolChanged as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(client.call_tool, "hold")  # holds the one slot for 10 s
            await anyio.sleep(1)
            listing[0] = _CHANGED
            task_group.start_soon(client.list_tools)  # first in line: it shows the change
            await anyio.sleep(1)
            task_group.start_soon(transfer)  # pin checked now (unchanged so far), then in line behind the listing
        limit = client._in_flight_limit
        assert limit is not None
        assert (limit.in_flight, limit.waiting) == (0, 0)  # the refused call gave its slot back
    assert len(outcome) == 1
    assert isinstance(outcome[0], ToolChanged), outcome
    assert may_have_run(outcome[0]) is Ran.NO
    assert server.methods().count("tools/list") == 2
    assert [r["params"]["name"] for r in server.requests if r["method"] == "tools/call"] == ["hold"]


async def test_calls_a_handler_started_that_outlive_it_take_slots() -> None:
    """Red team: a handler's calls take no slot (a context variable says so), and the tasks it starts inherit that
    variable: calls that an elicitation handler started in the host's task group and that ran on after the handler
    had returned were never counted, so ``max_in_flight=1`` let three slow calls run at once."""
    peer = ScriptedPeer(era="legacy")
    groups: list[anyio.abc.TaskGroup] = []
    clients: list[Client] = []

    async def elicitation(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        for _ in range(3):  # background work of the host's, which outlives this handler
            groups[0].start_soon(clients[0].call_tool, "slow", {"seconds": 5})
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(memory(peer.serve), timeout=POLICY, max_in_flight=1, elicitation=elicitation) as client:
        clients.append(client)
        limit = client._in_flight_limit
        assert limit is not None
        counted: list[tuple[int, int]] = []
        async with anyio.create_task_group() as host:
            groups.append(host)
            await client.call_tool("elicit_client")  # the handler has returned once this did
            await anyio.sleep(1)
            counted.append((limit.in_flight, limit.waiting))
            running = peer.stats.calls_by_tool["slow"]
        assert (limit.in_flight, limit.waiting) == (0, 0)
    assert counted == [(1, 2)]
    assert running == 1  # one slot: one slow call at a time
    assert peer.stats.calls_by_tool["slow"] == 3


@pytest.mark.parametrize("handler", ["elicitation"])
async def test_a_handler_may_still_call_the_client_from_a_task_group_of_its_own(handler: str) -> None:
    """What a handler runs in a task group of its own, while it runs, is still done for the call: no slot."""
    peer = ScriptedPeer(era="legacy")
    inner: list[Any] = []
    clients: list[Client] = []

    async def elicitation(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        async with anyio.create_task_group() as own:
            own.start_soon(_echo_into, clients[0], inner)
            own.start_soon(_echo_into, clients[0], inner)
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(memory(peer.serve), timeout=POLICY, max_in_flight=1, elicitation=elicitation) as client:
        clients.append(client)
        started = anyio.current_time()
        result = await client.call_tool("elicit_client")
        assert anyio.current_time() - started < 5
    assert not result.is_error
    assert inner == ["inner", "inner"]


async def _echo_into(client: Client, into: list[Any]) -> None:
    result = await client.call_tool("echo", {"text": "inner"})
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    into.append(block.text)


async def _ignore(update: Progress) -> None:
    return None
