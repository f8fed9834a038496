"""The Call handle (``client.tool_call``): iterate its progress, cancel it from elsewhere, await its result;
leaving the ``async with`` block before the call ended cancels it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from mcp_client import (
    Client,
    Event,
    MaxTimeout,
    Progress,
    RequestCancelled,
    TimeoutPolicy,
    ToolError,
)
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import sent_calls, text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]
Eventually = Callable[[Callable[[], object]], Awaitable[None]]


@pytest.mark.fake_clock
async def test_progress_iterator_yields_every_update_and_ends_with_the_call(connect: Connect) -> None:
    """async for p in call.progress(): the updates in order, and the loop ends when the call ends."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client, client.tool_call("slow", {"seconds": 5, "progress_every": 1}) as call:
        seen = [p.progress async for p in call.progress()]
        assert call.done
        result = await call.result()

    assert seen == [1, 2, 3, 4, 5]
    assert text_of(result) == "done"


@pytest.mark.fake_clock
async def test_progress_iterator_ends_when_the_call_times_out(connect: Connect) -> None:
    """The iterator ends when the call ends by a timeout too; result() then raises that timeout."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=5, maximum=6)) as client:
        start = anyio.current_time()
        async with client.tool_call("chatty", {"interval": 1}) as call:
            seen = [p.progress async for p in call.progress()]
            ended = anyio.current_time() - start
            with pytest.raises(MaxTimeout):
                await call.result()

    assert ended == pytest.approx(6)
    assert seen == sorted(set(seen))
    assert 1 <= len(seen) <= 6


@pytest.mark.fake_clock
async def test_callback_and_iterator_both_see_the_updates(connect: Connect) -> None:
    """A callback and the iterator on one call each get the updates, in order."""
    peer = ScriptedPeer(era="modern")
    from_callback: list[float] = []
    async with (
        connect(peer) as client,
        client.tool_call(
            "slow", {"seconds": 3, "progress_every": 1}, on_progress=lambda p: from_callback.append(p.progress)
        ) as call,
    ):
        from_iterator = [p.progress async for p in call.progress()]
        await call.result()

    assert from_iterator == [1, 2, 3]
    assert from_callback == [1, 2, 3]


@pytest.mark.fake_clock
async def test_cancel_from_another_task_ends_the_iterator_and_the_call(connect: Connect, events: list[Event]) -> None:
    """call.cancel(reason) from elsewhere: the iterator ends, result() raises RequestCancelled, the server is told."""
    peer = ScriptedPeer(era="modern")
    seen: list[Progress] = []
    async with connect(peer, timeout=TimeoutPolicy(idle=5, maximum=100)) as client:
        async with client.tool_call("chatty", {"interval": 1}) as call:

            async def stop_later() -> None:
                await anyio.sleep(3.5)
                call.cancel("enough")

            async with anyio.create_task_group() as tg:
                tg.start_soon(stop_later)
                seen = [p async for p in call.progress()]
            with pytest.raises(RequestCancelled) as caught:
                await call.result()
        await anyio.sleep(1)

    assert [p.progress for p in seen] == [1, 2, 3]
    assert caught.value.reason == "enough"
    (sent,) = sent_calls(events)
    assert peer.stats.cancel_notifications == [{"requestId": sent.request_id, "reason": "enough"}]
    assert peer.stats.outcomes == {sent.request_id: "cancelled"}


async def test_leaving_the_block_early_cancels_the_call(
    connect: Connect, events: list[Event], eventually: Eventually
) -> None:
    """Leaving `async with client.tool_call(...)` before the call ended cancels it, on the wire too."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        async with client.tool_call("silent") as call:
            await eventually(lambda: sent_calls(events))
        assert call.done
        with pytest.raises(RequestCancelled):
            await call.result()
        (sent,) = sent_calls(events)
        await eventually(lambda: peer.stats.outcomes.get(sent.request_id) == "cancelled")

    assert peer.stats.cancelled_request_ids == [sent.request_id]


@pytest.mark.fake_clock
async def test_breaking_out_of_the_progress_loop_and_leaving_cancels(connect: Connect, events: list[Event]) -> None:
    """A host that stops watching (break, then leave the block) cancels the call; nothing is left running."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=5, maximum=100)) as client:
        start = anyio.current_time()
        async with client.tool_call("chatty", {"interval": 1}) as call:
            async for update in call.progress():
                if update.progress >= 2:
                    break
        left_after = anyio.current_time() - start
        await anyio.sleep(1)

    assert left_after == pytest.approx(2)
    (sent,) = sent_calls(events)
    assert peer.stats.outcomes == {sent.request_id: "cancelled"}


async def test_cancel_after_the_result_is_a_no_op(connect: Connect, eventually: Eventually) -> None:
    """Cancelling a call that already ended changes nothing and sends nothing."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        async with client.tool_call("echo", {"text": "kept"}) as call:
            result = await call.result()
            call.cancel("too late")
            assert text_of(await call.result()) == "kept"
        for _ in range(50):
            await anyio.lowlevel.checkpoint()

    assert text_of(result) == "kept"
    assert peer.stats.cancel_notifications == []


async def test_raise_on_error_through_the_handle(connect: Connect) -> None:
    """tool_call(..., raise_on_error=True): result() raises ToolError for an isError result."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client, client.tool_call("tool_error", raise_on_error=True) as call:
        with pytest.raises(ToolError):
            await call.result()


@pytest.mark.fake_clock
async def test_slow_callback_does_not_hold_the_block_past_the_maximum(connect: Connect) -> None:
    """Every call resolves by its maximum: leaving the block is not held back by a slow progress callback."""
    peer = ScriptedPeer(era="modern")

    async def very_slow_callback(update: Progress) -> None:
        await anyio.sleep(50)

    async with connect(peer, timeout=TimeoutPolicy(idle=30, maximum=10)) as client:
        start = anyio.current_time()
        async with client.tool_call(
            "slow", {"seconds": 2, "progress_every": 1}, on_progress=very_slow_callback
        ) as call:
            result = await call.result()
        elapsed = anyio.current_time() - start

    assert not result.is_error
    assert elapsed <= 10
