"""Backgrounding: a call past its soft deadline (``notify_after``) reports ``Slow``; the host may detach it from its
``async with`` block and await it later, without losing progress and without escaping its maximum.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import mcp_types
import pytest

from mcp_client import Client, Event, MaxTimeout, Progress, RequestCancelled, Slow, TimeoutPolicy
from mcp_client.client.call import Call
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]


async def test_a_slow_call_detached_from_its_block_finishes_in_the_background(
    connect: Connect, events: list[Event]
) -> None:
    """Slow at notify_after; detach; the block ends at once; the call completes later with all its progress."""
    peer = ScriptedPeer(era="modern")
    seen: list[float] = []
    policy = TimeoutPolicy(idle=5, maximum=100, notify_after=2)
    async with connect(peer, timeout=policy) as client:
        start = anyio.current_time()
        async with client.tool_call(
            "slow", {"seconds": 6, "progress_every": 1}, on_progress=lambda p: seen.append(p.progress)
        ) as call:
            with anyio.move_on_after(2.5):
                await call.result()
            assert not call.done
            background: Call[mcp_types.CallToolResult] = call.detach()
        left_block_at = anyio.current_time() - start
        result = await background.result()
        finished_at = anyio.current_time() - start

    assert left_block_at == pytest.approx(2.5)
    assert finished_at == pytest.approx(6)
    assert text_of(result) == "done"
    assert seen == [1, 2, 3, 4, 5, 6]
    slow = [e for e in events if isinstance(e, Slow)]
    assert len(slow) == 1
    assert slow[0].elapsed == pytest.approx(2)
    assert peer.stats.outcomes == {background.request_ids[0]: "completed"}


async def test_a_detached_call_still_ends_by_its_maximum(connect: Connect) -> None:
    """Detaching never extends the call: a chatty call ends with MaxTimeout at its maximum, cancelled on the wire."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=5, maximum=10)) as client:
        start = anyio.current_time()
        async with client.tool_call("chatty", {"interval": 1}) as call:
            call.detach()
        with pytest.raises(MaxTimeout):
            await call.result()
        elapsed = anyio.current_time() - start
        await anyio.sleep(0.1)

    assert elapsed == pytest.approx(10)
    assert peer.stats.outcomes == {call.request_ids[0]: "cancelled"}


async def test_the_progress_iterator_keeps_working_after_detach(connect: Connect) -> None:
    """A detached call's progress can still be read, in order, from another task."""
    peer = ScriptedPeer(era="modern")
    seen: list[Progress] = []
    async with connect(peer) as client:
        async with client.tool_call("slow", {"seconds": 3, "progress_every": 1}) as call:
            call.detach()
        async for update in call.progress():
            seen.append(update)
        await call.result()

    assert [p.progress for p in seen] == [1, 2, 3]


async def test_closing_the_client_cancels_a_detached_call(connect: Connect) -> None:
    """A detached call does not outlive its client: closing cancels it on the wire; its result is RequestCancelled."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        async with client.tool_call("silent") as call:
            call.detach()
        await anyio.sleep(1)
        assert not call.done

    assert call.done
    with pytest.raises(RequestCancelled) as caught:
        await call.result()
    assert caught.value.reason == "the client is closing"
    assert [n["requestId"] for n in peer.stats.cancel_notifications] == list(call.request_ids)


async def test_leaving_the_block_without_detach_cancels_and_waits(connect: Connect) -> None:
    """Without detach, leaving the block cancels the call and it has ended when the block is left."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        async with client.tool_call("silent") as call:
            await anyio.sleep(1)
        assert call.done
        with pytest.raises(RequestCancelled):
            await call.result()
        await anyio.sleep(0.1)

    assert peer.stats.outcomes == {call.request_ids[0]: "cancelled"}
