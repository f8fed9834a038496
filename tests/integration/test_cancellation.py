"""Cancellation: every cause (timeouts, the caller's scope, ``call.cancel``) puts exactly one
``notifications/cancelled`` on the wire; ``initialize`` and ``server/discover`` never get one; ids are never reused;
a cancel that cannot be written never delays the caller's error.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest

from mcp_client import (
    CancelMethod,
    CancelSent,
    Client,
    Event,
    IdleTimeout,
    MaxTimeout,
    RequestCancelled,
    TimeoutPolicy,
    Transport,
    TransportError,
    memory,
)
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.base import Connection, MessageHandler
from mcp_client.transports.memory import byte_stream_pair
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE, LineConnection, read_lines
from tests.integration.helpers import sent_calls, text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]
Eventually = Callable[[Callable[[], object]], Awaitable[None]]


@pytest.mark.fake_clock
async def test_timeout_sends_exactly_one_cancel_notification(connect: Connect, events: list[Event]) -> None:
    """A timeout cancels on the wire exactly once (stdio: notifications/cancelled {requestId, reason})."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=100)) as client:
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent")
        await anyio.sleep(10)
        (request_id,) = caught.value.request_ids

    assert peer.stats.cancelled_request_ids == [request_id]
    assert "idle" in peer.stats.cancel_notifications[0]["reason"]
    assert peer.stats.outcomes == {request_id: "cancelled"}
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [(e.request_id, e.how) for e in cancels] == [(request_id, CancelMethod.NOTIFICATION)]


@pytest.mark.fake_clock
async def test_callers_enclosing_deadline_cancels_the_call_on_the_wire(connect: Connect, events: list[Event]) -> None:
    """The caller's anyio deadline caps the call: it stays anyio cancellation and the server is told."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=100, maximum=1000)) as client:
        start = anyio.current_time()
        with anyio.move_on_after(7) as scope:
            await client.call_tool("silent")
        elapsed = anyio.current_time() - start
        await anyio.sleep(1)

    assert scope.cancelled_caught
    assert elapsed == pytest.approx(7)
    (sent,) = sent_calls(events)
    assert peer.stats.cancelled_request_ids == [sent.request_id]
    assert peer.stats.outcomes == {sent.request_id: "cancelled"}


async def test_cancelling_the_awaiting_task_cancels_on_the_wire(
    connect: Connect, events: list[Event], eventually: Eventually
) -> None:
    """anyio cancellation of the awaiting task cancels the request on the wire, once."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "silent")
            await eventually(lambda: sent_calls(events))
            tg.cancel_scope.cancel()
        (sent,) = sent_calls(events)
        await eventually(lambda: peer.stats.outcomes.get(sent.request_id) == "cancelled")

    assert peer.stats.cancelled_request_ids == [sent.request_id]


async def test_call_cancel_raises_request_cancelled_and_sends_the_reason(
    connect: Connect, events: list[Event], eventually: Eventually
) -> None:
    """call.cancel(reason) ends the call with RequestCancelled(.reason); the reason goes to the server."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        async with client.tool_call("silent") as call:
            await eventually(lambda: sent_calls(events))
            call.cancel("the user pressed stop")
            with pytest.raises(RequestCancelled) as caught:
                await call.result()
        (sent,) = sent_calls(events)
        await eventually(lambda: peer.stats.outcomes.get(sent.request_id) == "cancelled")

    assert caught.value.reason == "the user pressed stop"
    assert caught.value.request_ids == (sent.request_id,)
    assert caught.value.method == "tools/call"
    assert peer.stats.cancel_notifications == [{"requestId": sent.request_id, "reason": "the user pressed stop"}]


async def test_cancel_twice_sends_one_notification(
    connect: Connect, events: list[Event], eventually: Eventually
) -> None:
    """On the wire exactly once: cancelling the same call again does nothing more."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        async with client.tool_call("silent") as call:
            await eventually(lambda: sent_calls(events))
            call.cancel("first")
            call.cancel("second")
            with pytest.raises(RequestCancelled) as caught:
                await call.result()
        await eventually(lambda: peer.stats.cancel_notifications)
        for _ in range(50):
            await anyio.lowlevel.checkpoint()

    assert caught.value.reason == "first"
    assert [params["reason"] for params in peer.stats.cancel_notifications] == ["first"]


@pytest.mark.fake_clock
async def test_request_ids_are_never_reused_after_timeouts_and_cancels(connect: Connect) -> None:
    """Request ids are unique for the life of the client, also after timeouts and cancels."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=2, maximum=5)) as client:
        for round_ in range(10):
            with pytest.raises(IdleTimeout):
                await client.call_tool("silent")
            with pytest.raises(MaxTimeout):
                await client.call_tool("chatty", {"interval": 1})
            with anyio.move_on_after(1):
                await client.call_tool("silent")
            async with client.tool_call("silent") as call:
                call.cancel()
            await client.call_tool("echo", {"text": str(round_)})
        await anyio.sleep(1)

    request_ids = [m["id"] for m in peer.stats.received if "method" in m and "id" in m]
    # A handle cancelled before its request was written never writes it: 4 requests and 3 cancels per round.
    assert len(request_ids) == 1 + 10 * 4
    assert len(set(request_ids)) == len(request_ids)
    assert request_ids == sorted(request_ids)
    assert len(peer.stats.cancel_notifications) == 10 * 3


class _DropRepeatedInitialize(anyio.abc.ByteReceiveStream):
    """The peer's input, minus every ``initialize`` after the first (each item is one whole line)."""

    def __init__(self, inner: anyio.abc.ByteReceiveStream) -> None:
        self._inner = inner
        self.dropped: list[int] = []
        self._initialized = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            data = await self._inner.receive(max_bytes)
            message = json.loads(data)
            if message.get("method") != "initialize":
                return data
            if not self._initialized:
                self._initialized = True
                return data
            self.dropped.append(message["id"])

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.mark.fake_clock
async def test_discover_probe_times_out_falls_back_and_is_never_cancelled(
    connect: Connect, events: list[Event]
) -> None:
    """server/discover is never cancelled: a probe that times out falls back to initialize, with no cancel."""
    peer = ScriptedPeer(era="legacy", discover="silent")
    start = anyio.current_time()
    async with connect(peer, probe_timeout=2) as client:
        connected_after = anyio.current_time() - start
        assert client.protocol_version == "2025-11-25"
        with pytest.raises(MaxTimeout):
            await client.request("server/discover", {}, timeout=3)
        await client.call_tool("echo")
        await anyio.sleep(10)

    assert connected_after == pytest.approx(2)
    assert [r["method"] for r in peer.stats.ignored_requests] == ["server/discover", "server/discover"]
    assert peer.stats.cancel_notifications == []
    assert not [e for e in events if isinstance(e, CancelSent)]


@pytest.mark.fake_clock
async def test_initialize_is_never_cancelled(events: list[Event]) -> None:
    """initialize is never cancelled on the wire, even when it times out."""
    peer = ScriptedPeer(era="legacy")
    filters: list[_DropRepeatedInitialize] = []

    async def serve(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        filters.append(_DropRepeatedInitialize(receive))
        await peer.serve(filters[0], send)

    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    async with Client(memory(serve), timeout=TimeoutPolicy(idle=2, maximum=5), on_event=events.append) as client:
        with pytest.raises(MaxTimeout):
            await client.request("initialize", params, timeout=TimeoutPolicy(idle=None, maximum=3))
        await client.call_tool("echo")
        await anyio.sleep(10)

    assert len(filters[0].dropped) == 1
    assert peer.stats.cancel_notifications == []
    assert not [e for e in events if isinstance(e, CancelSent)]


class _StopReadingAfter(anyio.abc.ByteReceiveStream):
    """The peer's input: it reads ``lines`` lines (one per item) and then never reads again."""

    def __init__(self, inner: anyio.abc.ByteReceiveStream, lines: int) -> None:
        self._inner = inner
        self._left = lines

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._left == 0:
            await anyio.sleep_forever()
        self._left -= 1
        return await self._inner.receive(max_bytes)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _StallingTransport(Transport):
    """The scripted peer behind an unbuffered pipe that it stops reading after ``lines`` lines: writes block."""

    def __init__(self, peer: ScriptedPeer, lines: int) -> None:
        self._peer = peer
        self._lines = lines

    @property
    def description(self) -> str:
        return "a peer that stops reading"

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        to_server, server_input = byte_stream_pair(buffer=0)
        server_output, from_server = byte_stream_pair()

        async def read() -> None:
            await read_lines(from_server, handler, max_message_size=DEFAULT_MAX_MESSAGE_SIZE)
            handler.on_closed(TransportError("the peer closed the connection", written=True))

        async with anyio.create_task_group() as tg:
            tg.start_soon(self._peer.serve, _StopReadingAfter(server_input, self._lines), server_output)
            tg.start_soon(read)
            yield LineConnection(to_server)
            tg.cancel_scope.cancel()


@pytest.mark.fake_clock
async def test_timeout_error_is_not_delayed_by_a_cancel_that_cannot_be_written(events: list[Event]) -> None:
    """The error is raised at the deadline; the cancel is sent in the background, bounded, never delaying it."""
    peer = ScriptedPeer(era="modern")
    transport = _StallingTransport(peer, lines=2)  # server/discover, then the tools/call; then no more reading
    client = Client(transport, timeout=TimeoutPolicy(idle=4, maximum=100), cancel_timeout=3, on_event=events.append)
    async with client:
        start = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await client.call_tool("silent")
        elapsed = anyio.current_time() - start
        await anyio.sleep(10)  # the cancel's write stays blocked; its time budget runs out
        closing = anyio.current_time()
    closed_after = anyio.current_time() - closing

    assert elapsed == pytest.approx(4)
    assert not [e for e in events if isinstance(e, CancelSent)]
    assert closed_after <= 3


@pytest.mark.fake_clock
async def test_maximum_counts_a_write_that_never_completes(events: list[Event]) -> None:
    """maximum spans the write: a request stuck writing ends with MaxTimeout at exactly its maximum."""
    peer = ScriptedPeer(era="modern")
    transport = _StallingTransport(peer, lines=1)  # only server/discover is ever read
    client = Client(transport, timeout=TimeoutPolicy(idle=2, maximum=8), cancel_timeout=1, on_event=events.append)
    async with client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("echo")
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(8)
    assert not sent_calls(events)


@pytest.mark.fake_clock
async def test_a_call_made_in_a_scope_already_cancelled_writes_nothing(connect: Connect, events: list[Event]) -> None:
    """Cancelled before it starts (the scope's cancel() was called first): no request and no cancel on the wire."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=100, maximum=1000)) as client:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await client.call_tool("echo", {"text": "never"})
        assert scope.cancelled_caught
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"

    calls = [m for m in peer.stats.received if m.get("method") == "tools/call"]
    assert [call["params"]["arguments"]["text"] for call in calls] == ["after"]
    assert peer.stats.calls_by_tool["echo"] == 1
    assert peer.stats.cancelled_request_ids == []
    assert not [e for e in events if isinstance(e, CancelSent)]
