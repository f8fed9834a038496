"""Timeouts on a fake clock: idle that progress resets, a maximum nothing extends, notify_after, per-call policies.

Every test runs on trio's ``MockClock``: fake seconds pass instantly and ``anyio.current_time()`` is exact.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import mcp_types
import pytest

from mcp_client import (
    DEFAULT_TIMEOUT,
    Client,
    Event,
    IdleTimeout,
    IdleTimerReset,
    MaxTimeout,
    ProgressAccepted,
    RequestFinished,
    RequestSent,
    RequestTimeout,
    Slow,
    TimedOut,
    TimeoutKind,
    TimeoutPolicy,
    memory,
)
from mcp_client.calls import CallOptions
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]


async def test_silent_call_ends_with_idle_timeout_at_exactly_idle(connect: Connect, events: list[Event]) -> None:
    """idle: no sign of life for `idle` seconds after the write ends the call with IdleTimeout, at that moment."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=7, maximum=100)) as client:
        start = anyio.current_time()
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent")
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(7)
    error = caught.value
    assert isinstance(error, RequestTimeout)
    assert isinstance(error, TimeoutError)
    assert error.timeout == 7
    assert error.method == "tools/call"
    assert error.elapsed == pytest.approx(7)
    assert len(error.request_ids) == 1
    timed_out = [e for e in events if isinstance(e, TimedOut)]
    assert [(e.request_id, e.kind) for e in timed_out] == [(error.request_ids[0], TimeoutKind.IDLE)]


async def test_progress_resets_idle_so_a_call_longer_than_idle_succeeds(connect: Connect, events: list[Event]) -> None:
    """idle is reset by each accepted progress: a call outliving `idle` only thanks to progress succeeds."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=10, maximum=100)) as client:
        start = anyio.current_time()
        result = await client.call_tool("slow", {"seconds": 30, "progress_every": 6})
        elapsed = anyio.current_time() - start

    assert text_of(result) == "done"
    assert elapsed == pytest.approx(30)
    resets = [e for e in events if isinstance(e, IdleTimerReset)]
    assert len(resets) == 5
    # Each reset pushes the idle deadline to (arrival + idle): arrivals at 6, 12, ... 30 after the start.
    assert [e.idle_deadline - start for e in resets] == pytest.approx([16, 22, 28, 34, 40])


async def test_gap_between_progress_longer_than_idle_still_times_out(connect: Connect, events: list[Event]) -> None:
    """idle: progress resets the clock, but a gap longer than `idle` between two updates ends the call."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=5, maximum=100)) as client:
        start = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await client.call_tool("slow", {"seconds": 60, "progress_every": 8})
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(5)
    assert not [e for e in events if isinstance(e, ProgressAccepted)]


async def test_chatty_call_ends_with_max_timeout_despite_progress(connect: Connect, events: list[Event]) -> None:
    """maximum: nothing extends it; a call that keeps reporting progress still ends with MaxTimeout at `maximum`."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=3, maximum=20)) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("chatty", {"interval": 1})
        elapsed = anyio.current_time() - start
        await anyio.sleep(1)  # the cancellation reaches the peer

    assert elapsed == pytest.approx(20)
    assert caught.value.timeout == 20
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.last_progress is not None
    assert len([e for e in events if isinstance(e, ProgressAccepted)]) >= 18
    assert [e.kind for e in events if isinstance(e, TimedOut)] == [TimeoutKind.MAXIMUM]
    assert peer.stats.outcomes[caught.value.request_ids[0]] == "cancelled"


async def test_default_policy_is_finite() -> None:
    """Defaults are finite (every request SHOULD time out): a Client with no policy given ends a silent call."""
    peer = ScriptedPeer(era="modern")
    async with Client(memory(peer.serve)) as client:
        assert client.timeout == DEFAULT_TIMEOUT
        start = anyio.current_time()
        with pytest.raises(RequestTimeout):
            await client.call_tool("silent")
        elapsed = anyio.current_time() - start

    assert DEFAULT_TIMEOUT.idle is not None
    assert DEFAULT_TIMEOUT.maximum is not None
    assert elapsed == pytest.approx(min(DEFAULT_TIMEOUT.idle, DEFAULT_TIMEOUT.maximum))


async def test_timeout_none_means_no_limit(connect: Connect) -> None:
    """timeout=None means no limits: a silent-for-10,000-seconds call completes although the client's idle is 1 s."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=1, maximum=2)) as client:
        start = anyio.current_time()
        result = await client.call_tool("slow", {"seconds": 10_000}, timeout=None)
        elapsed = anyio.current_time() - start

    assert text_of(result) == "done"
    assert elapsed == pytest.approx(10_000)


async def test_client_timeout_none_means_no_limit(connect: Connect) -> None:
    """Client(timeout=None) makes every call unlimited unless the call says otherwise."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=None) as client:
        result = await client.call_tool("slow", {"seconds": 10_000})

    assert text_of(result) == "done"


async def test_default_timeout_uses_the_clients_policy(connect: Connect) -> None:
    """timeout omitted (USE_CLIENT_DEFAULT): the client's policy applies."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=50)) as client:
        start = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await client.call_tool("silent")
        assert anyio.current_time() - start == pytest.approx(4)


async def test_per_call_policy_overrides_a_strict_client_policy(connect: Connect) -> None:
    """A per-call TimeoutPolicy replaces the client's: a lenient call on a strict client runs to its end."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=1, maximum=2)) as client:
        start = anyio.current_time()
        result = await client.call_tool("slow", {"seconds": 50}, timeout=TimeoutPolicy(idle=100, maximum=200))
        elapsed = anyio.current_time() - start

    assert text_of(result) == "done"
    assert elapsed == pytest.approx(50)


async def test_per_call_policy_overrides_a_lenient_client_policy(connect: Connect) -> None:
    """A per-call TimeoutPolicy replaces the client's: a strict call on a lenient client times out by its own idle."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=100, maximum=1000)) as client:
        start = anyio.current_time()
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", timeout=TimeoutPolicy(idle=3, maximum=50))
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(3)
    assert caught.value.timeout == 3


async def test_numeric_timeout_sets_the_maximum(connect: Connect) -> None:
    """timeout=<number> is that call's maximum, the other fields from the client's policy."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=100, maximum=1000)) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("silent", timeout=5)
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(5)
    assert caught.value.timeout == 5


async def test_notify_after_emits_one_slow_event_and_the_call_continues(connect: Connect, events: list[Event]) -> None:
    """notify_after: a Slow event once, at the soft deadline, and the call carries on to its result."""
    peer = ScriptedPeer(era="modern")
    policy = TimeoutPolicy(idle=60, maximum=100, notify_after=10)
    async with connect(peer, timeout=policy) as client:
        start = anyio.current_time()
        result = await client.call_tool("slow", {"seconds": 30, "progress_every": 1})
        elapsed = anyio.current_time() - start

    assert text_of(result) == "done"
    assert elapsed == pytest.approx(30)
    slow = [e for e in events if isinstance(e, Slow)]
    assert len(slow) == 1
    assert slow[0].elapsed == pytest.approx(10)
    assert slow[0].method == "tools/call"
    finished = [e for e in events if isinstance(e, RequestFinished) and e.request_id == slow[0].request_id]
    assert [e.error for e in finished] == [None]


async def test_many_concurrent_calls_each_resolve_by_their_maximum(connect: Connect, events: list[Event]) -> None:
    """Every in-flight call resolves, with a result or a typed error, by its maximum: 200 at once, no hangs."""
    peer = ScriptedPeer(era="modern")
    outcomes: dict[int, tuple[float, float, object]] = {}

    async def one(client: Client, index: int) -> None:
        maximum = 5 + index % 17
        tool, arguments = [
            ("silent", {}),
            ("chatty", {"interval": 1}),
            ("slow", {"seconds": index % 11}),
            ("slow", {"seconds": 25, "progress_every": 2}),
        ][index % 4]
        start = anyio.current_time()
        try:
            outcome: object = await client.call_tool(tool, arguments, timeout=TimeoutPolicy(idle=4, maximum=maximum))
        except RequestTimeout as exc:
            outcome = exc
        outcomes[index] = (anyio.current_time() - start, maximum, outcome)

    async with connect(peer) as client:
        async with anyio.create_task_group() as tg:
            for index in range(200):
                tg.start_soon(one, client, index)
        await anyio.sleep(1)  # let the cancellations land

    assert len(outcomes) == 200
    for index, (elapsed, maximum, outcome) in outcomes.items():
        assert elapsed <= maximum + 1e-9, index
        assert isinstance(outcome, mcp_types.CallToolResult | RequestTimeout), index
    calls = [m for m in peer.stats.received if m.get("method") == "tools/call"]
    assert len(calls) == 200
    assert len({m["id"] for m in calls}) == 200
    timed_out = [o for _, _, o in outcomes.values() if isinstance(o, RequestTimeout)]
    assert timed_out, "the mix includes calls that must time out"
    assert sorted(peer.stats.cancelled_request_ids) == sorted(e.request_ids[0] for e in timed_out)
    sent = sorted(e.request_id for e in events if isinstance(e, RequestSent) and e.method == "tools/call")
    finished = sorted(e.request_id for e in events if isinstance(e, RequestFinished) and e.method == "tools/call")
    assert sent == finished == sorted(m["id"] for m in calls), "one RequestSent and one RequestFinished per call"


async def test_the_maximum_counts_from_when_the_call_started(connect: Connect) -> None:
    """A call that began before the session saw it (``started_at``: the caller's call, before our bookkeeping and
    any session renewal) gets only what is left of its maximum."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        policy = TimeoutPolicy(idle=None, maximum=5)
        began = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client._calls_runner.run(
                "tools/call",
                {"name": "silent", "arguments": {}},
                CallOptions(policy),
                started_at=client.session.clock() - 3,
            )
        assert anyio.current_time() - began == pytest.approx(2)
        future = client.session.clock() + 100  # a start in the future is taken as now: the maximum is never longer
        began = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client._calls_runner.run(
                "tools/call", {"name": "silent", "arguments": {}}, CallOptions(policy), started_at=future
            )
        assert anyio.current_time() - began == pytest.approx(5)
