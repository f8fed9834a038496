"""``max_in_flight`` on both event loops (asyncio, and trio on a fake clock), with nothing that needs time to
pass: a holder that never answers until the host cancels it, a line that then goes through in order, a handle
cancelled in line, and the caller's own deadline ending a wait."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from mcp_client import Client, RequestCancelled
from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]
Eventually = Callable[[Callable[[], object]], Awaitable[None]]


async def test_the_line_goes_through_in_order_once_the_holder_leaves(connect: Connect, eventually: Eventually) -> None:
    peer = ScriptedPeer(era="modern")
    async with connect(peer, max_in_flight=1) as client:
        limit = client._in_flight_limit
        assert limit is not None
        holder = client.tool_call("silent").detach()
        holder.start()
        await eventually(lambda: limit.in_flight == 1)
        cancelled = client.tool_call("echo", {"text": "cancelled"}).detach()
        async with anyio.create_task_group() as group:
            for n in range(5):
                group.start_soon(client.call_tool, "echo", {"text": str(n)})
                await eventually(lambda n=n: limit.waiting == n + 1)  # type: ignore[misc]
            cancelled.start()
            await eventually(lambda: limit.waiting == 6)
            cancelled.cancel("not needed after all")
            await eventually(lambda: limit.waiting == 5)
            holder.cancel("the host stops the holder")
        with pytest.raises(RequestCancelled):
            await cancelled.result()
        assert (limit.in_flight, limit.waiting) == (0, 0)
    sent = [
        m["params"]["arguments"]["text"]
        for m in peer.stats.received
        if m.get("method") == "tools/call" and m["params"]["name"] == "echo"
    ]
    assert sent == ["0", "1", "2", "3", "4"]


@pytest.mark.fake_clock
async def test_the_callers_own_deadline_ends_a_wait_the_anyio_way(connect: Connect, eventually: Eventually) -> None:
    peer = ScriptedPeer(era="modern")
    async with connect(peer, max_in_flight=1) as client:
        limit = client._in_flight_limit
        assert limit is not None
        holder = client.tool_call("silent").detach()
        holder.start()
        await eventually(lambda: limit.in_flight == 1)
        start = anyio.current_time()
        with anyio.move_on_after(3) as scope:
            await client.call_tool("echo", {"text": "late"}, timeout=None)
        assert scope.cancelled_caught
        assert anyio.current_time() - start == pytest.approx(3)
        assert limit.waiting == 0
        holder.cancel()
    assert peer.stats.calls_by_tool["echo"] == 0
