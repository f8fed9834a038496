"""Progress: tokens, validation (strictly increasing, known tokens only), and delivery to callbacks.

Delivery is in order, one callback at a time, sync or async; a slow consumer never stalls the reader (updates
coalesce, latest wins); ``progress_interval`` rate-limits; nothing is delivered after the result.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import pytest

from mcp_client import (
    Client,
    Event,
    IdleTimeout,
    LateMessage,
    MaxTimeout,
    Progress,
    ProgressAccepted,
    ProgressRejected,
    RequestSent,
    TimeoutPolicy,
    memory,
)
from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]


def progress_token_of(message: dict[str, object]) -> object:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


async def test_progress_token_attached_without_callback_when_idle_is_set(connect: Connect, events: list[Event]) -> None:
    """A token is attached whenever the policy resets on progress, not only when the caller passed a callback."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=10, maximum=100)) as client:
        await client.call_tool("echo", {"text": "hi"})

    (call,) = [m for m in peer.stats.received if m.get("method") == "tools/call"]
    token = progress_token_of(call)
    assert isinstance(token, str | int)
    sent = [e for e in events if isinstance(e, RequestSent) and e.request_id == call["id"]]
    assert [e.progress_token for e in sent] == [token]


@pytest.mark.fake_clock
async def test_progress_without_callback_keeps_an_idle_call_alive(connect: Connect) -> None:
    """Progress resets idle even when nobody consumes it: the token is there and the peer's progress counts."""
    peer = ScriptedPeer(era="legacy")
    async with connect(peer, timeout=TimeoutPolicy(idle=3, maximum=100)) as client:
        result = await client.call_tool("slow", {"seconds": 20, "progress_every": 2})

    assert not result.is_error


@pytest.mark.fake_clock
async def test_progress_tokens_are_unique_and_never_equal_to_request_ids(connect: Connect) -> None:
    """Progress tokens: a namespace of their own, unique and never reused, also across timeouts and cancels."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=2, maximum=100)) as client:
        for index in range(30):
            if index % 3 == 0:
                with pytest.raises(IdleTimeout):
                    await client.call_tool("silent")
            elif index % 3 == 1:
                with anyio.move_on_after(1):
                    await client.call_tool("silent")
            else:
                await client.call_tool("echo", {"text": str(index)}, on_progress=lambda p: None)

    requests = [m for m in peer.stats.received if m.get("method") == "tools/call"]
    assert len(requests) == 30
    tokens = [progress_token_of(m) for m in requests]
    assert all(token is not None for token in tokens)
    assert len(set(tokens)) == 30
    ids = {m["id"] for m in peer.stats.received if "id" in m and "method" in m}
    assert not {str(token) for token in tokens} & {str(request_id) for request_id in ids}


async def test_progress_backwards_is_rejected_and_never_delivered(connect: Connect, events: list[Event]) -> None:
    """Progress must increase strictly: 5, 3, 5, 7 delivers 5 and 7; 3 and the repeated 5 are rejected events."""
    peer = ScriptedPeer(era="modern")
    seen: list[float] = []
    async with connect(peer) as client:
        result = await client.call_tool("progress_backwards", on_progress=lambda p: seen.append(p.progress))

    assert not result.is_error
    assert seen == [5, 7]
    rejected = [e for e in events if isinstance(e, ProgressRejected)]
    assert [e.value for e in rejected] == [3, 5]
    assert {e.reason for e in rejected} == {"not increasing"}
    call_id = next(e.request_id for e in events if isinstance(e, RequestSent) and e.method == "tools/call")
    assert {e.request_id for e in rejected} == {call_id}
    assert [e.progress.progress for e in events if isinstance(e, ProgressAccepted)] == [5, 7]


class _ProgressThreeIsNaN(anyio.abc.ByteSendStream):
    """The peer's output with ``"progress":3`` rewritten to ``NaN`` (which Python's JSON reader accepts)."""

    def __init__(self, inner: anyio.abc.ByteSendStream) -> None:
        self._inner = inner

    async def send(self, item: bytes) -> None:
        await self._inner.send(item.replace(b'"progress":3,', b'"progress":NaN,'))

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_nan_progress_is_rejected_and_never_delivered(events: list[Event]) -> None:
    """Progress must be a finite number: NaN is a ProgressRejected event and never reaches the callback."""
    peer = ScriptedPeer(era="modern")
    seen: list[float] = []

    async def serve(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        await peer.serve(receive, _ProgressThreeIsNaN(send))

    async with Client(memory(serve), on_event=events.append) as client:
        await client.call_tool("progress_backwards", on_progress=lambda p: seen.append(p.progress))

    assert seen == [5, 7]
    rejected = [e for e in events if isinstance(e, ProgressRejected)]
    assert [e.reason for e in rejected] == ["not a finite number", "not increasing"]


async def test_progress_for_an_unknown_token_is_rejected(connect: Connect, events: list[Event]) -> None:
    """Progress is accepted only for an active token: an unknown one is a ProgressRejected event, nothing more."""
    peer = ScriptedPeer(era="modern")
    seen: list[Progress] = []
    async with connect(peer) as client:
        result = await client.call_tool("progress_unknown_token", on_progress=seen.append)

    assert not result.is_error
    assert seen == []
    rejected = [e for e in events if isinstance(e, ProgressRejected)]
    assert len(rejected) == 1
    assert rejected[0].reason == "unknown progress token"
    assert rejected[0].progress_token == "no-such-token"
    assert rejected[0].request_id is None


async def test_progress_after_the_result_is_not_delivered(
    connect: Connect, events: list[Event], eventually: Callable[[Callable[[], object]], Awaitable[None]]
) -> None:
    """Nothing is delivered after the result: progress for a finished request is a LateMessage, not a callback."""
    peer = ScriptedPeer(era="modern")
    seen: list[Progress] = []
    async with connect(peer) as client:
        result = await client.call_tool("progress_after_result", on_progress=seen.append)
        await eventually(lambda: any(isinstance(e, LateMessage) for e in events))

    assert not result.is_error
    assert seen == []
    (late,) = [e for e in events if isinstance(e, LateMessage)]
    assert late.kind == "progress"
    assert late.late_by is not None
    assert late.late_by >= 0
    assert not [e for e in events if isinstance(e, ProgressAccepted)]


@pytest.mark.fake_clock
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_sync_and_async_callbacks_receive_every_update_in_order(connect: Connect, kind: str) -> None:
    """Callbacks may be sync or async; a fast one sees every update, in order, with total and message."""
    peer = ScriptedPeer(era="modern")
    seen: list[Progress] = []

    def sync_callback(update: Progress) -> None:
        seen.append(update)

    async def async_callback(update: Progress) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(update)

    callback = sync_callback if kind == "sync" else async_callback
    async with connect(peer) as client:
        await client.call_tool("slow", {"seconds": 5, "progress_every": 1, "total": 5}, on_progress=callback)

    assert [p.progress for p in seen] == [1, 2, 3, 4, 5]
    assert {p.total for p in seen} == {5}
    assert [p.message for p in seen] == [f"step {n}" for n in range(1, 6)]
    assert seen[-1].fraction == 1


@pytest.mark.fake_clock
async def test_slow_callback_never_stalls_the_reader_and_sees_coalesced_updates(
    connect: Connect, events: list[Event]
) -> None:
    """A slow consumer never stalls the reader: progress keeps resetting idle, updates coalesce, latest wins."""
    peer = ScriptedPeer(era="modern")
    seen: list[float] = []
    running = 0
    overlapped = False

    async def slow_callback(update: Progress) -> None:
        nonlocal running, overlapped
        running += 1
        overlapped = overlapped or running > 1
        seen.append(update.progress)
        await anyio.sleep(5)  # far longer than the 1 s between updates, and longer than idle
        running -= 1

    # idle (3 s) is shorter than one callback run (5 s): were the reader waiting on the callback, idle would fire.
    async with connect(peer, timeout=TimeoutPolicy(idle=3, maximum=100)) as client:
        result = await client.call_tool("slow", {"seconds": 20, "progress_every": 1}, on_progress=slow_callback)

    assert not result.is_error
    assert not overlapped, "one callback at a time per call"
    assert seen == sorted(set(seen)), "strictly increasing, in order"
    assert seen[0] == 1
    assert seen[-1] == 20, "the latest update wins"
    assert len(seen) < 20, "updates coalesced while the callback was busy"
    accepted = [e for e in events if isinstance(e, ProgressAccepted)]
    assert len(accepted) == 20


@pytest.mark.fake_clock
async def test_nothing_is_delivered_after_the_call_returns_or_fails(connect: Connect) -> None:
    """Nothing is delivered after the result: no callback runs once the call has returned or raised."""
    peer = ScriptedPeer(era="modern")
    calls_after_end: list[float] = []
    ended = False

    async def callback(update: Progress) -> None:
        if ended:
            calls_after_end.append(update.progress)
        await anyio.sleep(3)

    async with connect(peer, timeout=TimeoutPolicy(idle=5, maximum=10)) as client:
        with pytest.raises(MaxTimeout):
            await client.call_tool("chatty", {"interval": 1}, on_progress=callback)
        ended = True
        await anyio.sleep(30)
        ended = False
        await client.call_tool("slow", {"seconds": 8, "progress_every": 1}, on_progress=callback)
        ended = True
        await anyio.sleep(30)

    assert calls_after_end == []


@pytest.mark.fake_clock
async def test_progress_interval_rate_limits_deliveries(connect: Connect) -> None:
    """progress_interval: at most one delivery per interval; the stream stays in order and ends on the latest."""
    peer = ScriptedPeer(era="modern")
    deliveries: list[tuple[float, float]] = []
    async with connect(peer, progress_interval=5) as client:
        await client.call_tool(
            "slow",
            {"seconds": 30, "progress_every": 1},
            on_progress=lambda p: deliveries.append((anyio.current_time(), p.progress)),
        )

    times = [t for t, _ in deliveries]
    values = [v for _, v in deliveries]
    assert all(later - earlier >= 5 - 1e-9 for earlier, later in itertools.pairwise(times))
    assert 5 <= len(deliveries) <= 7
    assert values == sorted(set(values))
    assert values[0] == 1
    assert values[-1] == 30


@pytest.mark.fake_clock
async def test_a_failing_callback_does_not_end_the_call(connect: Connect) -> None:
    """A callback that raises is logged; the call goes on and the next update still reaches the callback."""
    peer = ScriptedPeer(era="modern")
    seen: list[float] = []

    def callback(update: Progress) -> None:
        seen.append(update.progress)
        raise RuntimeError("a bug in the host's callback")

    async with connect(peer) as client:
        result = await client.call_tool("slow", {"seconds": 3, "progress_every": 1}, on_progress=callback)

    assert not result.is_error
    assert seen == [1, 2, 3]


@pytest.mark.fake_clock
async def test_slow_callback_does_not_delay_the_timeout_error(connect: Connect) -> None:
    """The timeout error is raised promptly at the deadline, however long the progress callback takes."""
    peer = ScriptedPeer(era="modern")

    async def very_slow_callback(update: Progress) -> None:
        await anyio.sleep(50)

    async with connect(peer, timeout=TimeoutPolicy(idle=30, maximum=10)) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("chatty", {"interval": 1}, on_progress=very_slow_callback)
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(10)


@pytest.mark.fake_clock
async def test_slow_callback_does_not_hold_a_finished_call_past_its_maximum(connect: Connect) -> None:
    """Every call resolves by its maximum: a slow progress callback cannot hold back a result that has arrived."""
    peer = ScriptedPeer(era="modern")

    async def very_slow_callback(update: Progress) -> None:
        await anyio.sleep(50)

    async with connect(peer, timeout=TimeoutPolicy(idle=30, maximum=10)) as client:
        start = anyio.current_time()
        result = await client.call_tool("slow", {"seconds": 2, "progress_every": 1}, on_progress=very_slow_callback)
        elapsed = anyio.current_time() - start

    assert not result.is_error
    assert elapsed <= 10
