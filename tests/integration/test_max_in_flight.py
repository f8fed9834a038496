"""``Client(max_in_flight=N)``: at most N calls in flight, the rest wait in line inside their own maximum.

On trio's ``MockClock`` against the scripted peer: who waits and for how long, FIFO order, a maximum that passes in
line (never sent, safe to try again), cancelled waiters that give their place back, and what does not count.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from mcp_client import (
    Client,
    Event,
    MaxTimeout,
    RequestCancelled,
    RequestFinished,
    RequestSent,
    SlotWaited,
    TimeoutPolicy,
)
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]

LONG = TimeoutPolicy(idle=30, maximum=100)
"""The policy of these tests, unless they say otherwise: the 10 s tools never reach its idle limit."""


async def test_the_limit_holds_and_the_others_wait_their_turn(connect: Connect, events: list[Event]) -> None:
    """Six 10 s calls under a limit of 2 end at 10, 10, 20, 20, 30, 30; four waited, for 10 s or 20 s."""
    peer = ScriptedPeer(era="modern")
    ended: list[float] = []
    async with connect(peer, timeout=LONG, max_in_flight=2) as client:
        start = anyio.current_time()

        async def one() -> None:
            await client.call_tool("slow", {"seconds": 10})
            ended.append(anyio.current_time() - start)

        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(one)

    assert ended == pytest.approx([10, 10, 20, 20, 30, 30])
    waited = sorted(e.waited for e in events if isinstance(e, SlotWaited))
    assert waited == pytest.approx([10, 10, 20, 20])
    assert all(e.admitted and e.limit == 2 for e in events if isinstance(e, SlotWaited))


async def test_the_idle_clock_starts_when_the_call_is_sent(connect: Connect) -> None:
    """A call that waited 8 s in line, longer than its 5 s idle limit, still runs: idle starts at the write."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=5, maximum=100), max_in_flight=1) as client:
        results: list[str] = []

        async def one() -> None:
            results.append(text_of(await client.call_tool("slow", {"seconds": 4})))

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(one)
    assert results == ["done", "done", "done"]


async def test_a_maximum_that_passes_in_line_raises_max_timeout_and_nothing_is_sent(
    connect: Connect, events: list[Event]
) -> None:
    """The wait counts against the maximum: MaxTimeout at exactly 5 s, no request id, nothing on the wire, and
    the model is told the tool did not run."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=LONG, max_in_flight=1) as client:
        await client.list_tools()
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "slow", {"seconds": 50})
            await anyio.sleep(1)
            start = anyio.current_time()
            with pytest.raises(MaxTimeout) as caught:
                await client.call_tool("echo", {"text": "hi"}, timeout=5)
            assert anyio.current_time() - start == pytest.approx(5)
            group.cancel_scope.cancel()

    error = caught.value
    assert error.request_ids == ()
    assert error.method == "tools/call"
    assert "never sent" in str(error)
    assert may_have_run(error) is Ran.NO
    assert "did not run" in error.for_model
    assert peer.stats.calls_by_tool["echo"] == 0
    assert not [e for e in events if isinstance(e, RequestSent) and e.target == "echo"]
    [left] = [e for e in events if isinstance(e, SlotWaited)]
    assert not left.admitted
    assert left.waited == pytest.approx(5)
    finished = [e for e in events if isinstance(e, RequestFinished) and e.error is error]
    assert len(finished) == 1


async def test_a_call_waits_only_as_long_as_its_own_maximum_allows_from_its_start(connect: Connect) -> None:
    """The maximum counts from the caller's call: after a 2.5 s wait, a 4 s call with a 5 s maximum times out."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=LONG, max_in_flight=1) as client, anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "slow", {"seconds": 3})
        await anyio.sleep(0.5)
        start = anyio.current_time()
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("slow", {"seconds": 4}, timeout=5)
        assert anyio.current_time() - start == pytest.approx(5)
    assert len(caught.value.request_ids) == 1  # it was sent, at 3 s, and cut at 5 s


async def test_the_line_is_first_come_first_served(connect: Connect) -> None:
    """Calls that wait are sent in the order they came, not in any other."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=LONG, max_in_flight=1) as client, anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "slow", {"seconds": 10})
        await anyio.sleep(1)
        for n in range(8):
            group.start_soon(client.call_tool, "echo", {"text": str(n)})
            await anyio.sleep(0.5)
    sent = [
        m["params"]["arguments"]["text"]
        for m in peer.stats.received
        if m.get("method") == "tools/call" and m["params"]["name"] == "echo"
    ]
    assert sent == [str(n) for n in range(8)]


async def test_cancelled_waiters_give_their_place_back_and_nothing_leaks(connect: Connect) -> None:
    """200 waiters cancelled by their caller's scope leave the line at once; the next call takes the slot as
    soon as the one in flight ends, and the counts are back to zero."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=LONG, max_in_flight=1) as client:
        limit = client._in_flight_limit
        assert limit is not None
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "slow", {"seconds": 10})
            await anyio.sleep(1)
            with anyio.CancelScope() as waiters:
                async with anyio.create_task_group() as line:
                    for n in range(200):
                        line.start_soon(client.call_tool, "echo", {"text": str(n)})
                    await anyio.sleep(1)
                    assert limit.waiting == 200
                    waiters.cancel()
            assert limit.waiting == 0
            assert limit.in_flight == 1
            start = anyio.current_time()
            result = await client.call_tool("echo", {"text": "after"})
            assert anyio.current_time() - start == pytest.approx(8)  # the slow call ends at 10 s
        assert text_of(result) == "after"
        assert (limit.waiting, limit.in_flight) == (0, 0)
    assert peer.stats.calls_by_tool["echo"] == 1


async def test_a_handle_cancelled_while_it_waits_ends_at_once_never_sent(connect: Connect) -> None:
    """``call.cancel()`` on a waiting handle: RequestCancelled at once, no request id, its place given back."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=LONG, max_in_flight=1) as client:
        limit = client._in_flight_limit
        assert limit is not None
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "slow", {"seconds": 10})
            await anyio.sleep(1)
            call = client.tool_call("echo", {"text": "never"}).detach()
            call.start()
            await anyio.sleep(1)
            assert limit.waiting == 1
            start = anyio.current_time()
            call.cancel("the host changed its mind")
            with pytest.raises(RequestCancelled) as caught:
                await call.result()
            assert anyio.current_time() == start
            assert limit.waiting == 0
    assert caught.value.request_ids == ()
    assert caught.value.reason == "the host changed its mind"
    assert may_have_run(caught.value) is Ran.NO
    assert peer.stats.calls_by_tool["echo"] == 0


async def test_pings_do_not_wait_but_other_requests_of_the_host_do(connect: Connect) -> None:
    """With the one slot taken, a ping goes out at once; ``list_tools`` waits for the slot."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=LONG, max_in_flight=1) as client, anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "slow", {"seconds": 10})
        await anyio.sleep(1)
        start = anyio.current_time()
        await client.ping()
        assert anyio.current_time() == start
        await client.list_tools(cache=False)
        assert anyio.current_time() - start == pytest.approx(9)


def test_max_in_flight_is_checked_when_the_client_is_made() -> None:
    """A limit that is not a positive integer is refused with a clear, typed error."""
    from mcp_client import memory

    peer = ScriptedPeer()
    with pytest.raises(ValueError, match="at least 1"):
        Client(memory(peer.serve), max_in_flight=0)
    with pytest.raises(TypeError, match="integer"):
        Client(memory(peer.serve), max_in_flight=True)
    with pytest.raises(TypeError, match="integer"):
        Client(memory(peer.serve), max_in_flight=2.5)  # type: ignore[arg-type]
