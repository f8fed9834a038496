"""Late messages: a response or progress for a request that already ended is dropped quietly, as a LateMessage
event (with how late it was); it never reaches the caller, never raises and never harms the connection.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import pytest

from mcp_client import (
    Client,
    Event,
    IdleTimeout,
    LateMessage,
    Progress,
    ProtocolViolation,
    RequestCancelled,
    RequestSent,
    TimeoutPolicy,
    memory,
)
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]
Eventually = Callable[[Callable[[], object]], Awaitable[None]]


def late_messages(events: list[Event]) -> list[LateMessage]:
    return [e for e in events if isinstance(e, LateMessage)]


@pytest.mark.fake_clock
async def test_response_after_a_timeout_is_a_late_message(
    connect: Connect, events: list[Event], caplog: pytest.LogCaptureFixture
) -> None:
    """A response after the timeout (the server ignored the cancel) is a LateMessage with late_by > 0; never raised."""
    caplog.set_level(logging.DEBUG, logger="mcp_client")
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=3, maximum=100)) as client:
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("ignore_cancel", {"seconds": 10})
        await anyio.sleep(20)
        after = await client.call_tool("echo", {"text": "still fine"})

    (request_id,) = caught.value.request_ids
    assert peer.stats.cancelled_request_ids == [request_id]
    assert peer.stats.outcomes[request_id] == "completed"
    (late,) = late_messages(events)
    assert late.request_id == request_id
    assert late.kind == "response"
    assert late.late_by == pytest.approx(7)
    assert late.message["result"]["content"][0]["text"] == "finished despite cancellation"
    assert text_of(after) == "still fine"
    assert not [r for r in caplog.records if r.name.startswith("mcp_client") and r.levelno > logging.DEBUG]


@pytest.mark.fake_clock
async def test_response_after_the_callers_cancel_is_a_late_message(connect: Connect, events: list[Event]) -> None:
    """A cancel that crosses the result: the caller's cancel won, the late result is dropped quietly."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        with anyio.move_on_after(1):
            await client.call_tool("ignore_cancel", {"seconds": 2})
        await anyio.sleep(5)
        after = await client.call_tool("echo", {"text": "next"})

    (late,) = late_messages(events)
    assert late.kind == "response"
    assert late.late_by == pytest.approx(1)
    assert text_of(after) == "next"


async def test_a_second_answer_is_a_late_message(connect: Connect, events: list[Event], eventually: Eventually) -> None:
    """A duplicate response (answer_twice) is a LateMessage for that request; the first answer is the result."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        result = await client.call_tool("answer_twice")
        await eventually(lambda: late_messages(events))
        after = await client.call_tool("echo", {"text": "next"})

    assert text_of(result) == "twice"
    (late,) = late_messages(events)
    request_id = next(e.request_id for e in events if isinstance(e, RequestSent) and e.method == "tools/call")
    assert late.request_id == request_id
    assert late.kind == "response"
    assert late.late_by is not None
    assert late.late_by >= 0
    assert text_of(after) == "next"


async def test_progress_after_the_result_is_a_late_progress_message(
    connect: Connect, events: list[Event], eventually: Eventually
) -> None:
    """Progress for a finished request is a LateMessage(kind="progress"), never delivered."""
    peer = ScriptedPeer(era="modern")
    seen: list[Progress] = []
    async with connect(peer) as client:
        await client.call_tool("progress_after_result", on_progress=seen.append)
        await eventually(lambda: late_messages(events))

    (late,) = late_messages(events)
    assert late.kind == "progress"
    assert late.message["method"] == "notifications/progress"
    assert seen == []


async def test_a_response_to_an_id_never_sent_is_a_protocol_violation(
    connect: Connect, events: list[Event], eventually: Eventually
) -> None:
    """A response whose id the client never issued is a ProtocolViolation event; the real answer still arrives."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        result = await client.call_tool("wrong_id")

    assert text_of(result) == "right id"
    violations = [e for e in events if isinstance(e, ProtocolViolation)]
    assert len(violations) == 1
    assert isinstance(violations[0].raw, dict)
    assert violations[0].raw["id"] == 999999
    assert not late_messages(events)


class _GlueToolResultToNextWrite(anyio.abc.ByteSendStream):
    """The peer's output, with each tools/call result held back and written in one chunk with the next message.

    The client's reader then handles both lines before the caller's task can run again: the worst case for a
    duplicate answer or a progress notification that follows the result.
    """

    def __init__(self, inner: anyio.abc.ByteSendStream) -> None:
        self._inner = inner
        self._held: bytes | None = None

    async def send(self, item: bytes) -> None:
        if self._held is None and "content" in json.loads(item).get("result", {}):
            self._held = item
            return
        if self._held is not None:
            item, self._held = self._held + item, None
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.mark.parametrize("tool", ["answer_twice", "progress_after_result"])
async def test_a_message_in_the_same_chunk_as_the_result_is_late(
    tool: str, events: list[Event], eventually: Eventually
) -> None:
    """Late also when it arrives before the caller's task has run: never swallowed silently, never delivered."""
    peer = ScriptedPeer(era="modern")
    seen: list[Progress] = []

    async def serve(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        await peer.serve(receive, _GlueToolResultToNextWrite(send))

    async with Client(memory(serve), on_event=events.append) as client:
        result = await client.call_tool(tool, on_progress=seen.append)
        await eventually(lambda: late_messages(events))

    assert not result.is_error
    assert seen == []
    (late,) = late_messages(events)
    assert late.kind == ("response" if tool == "answer_twice" else "progress")


async def _answers_with_a_broken_line_first(
    receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream
) -> None:
    """A 2025-11-25 server that answers each tools/call with a broken line and the result in one write, so the
    client routes both in one batch: whatever the broken line's event makes the client do comes before the answer."""
    buffer = b""
    while True:
        try:
            buffer += await receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            if message.get("method") == "initialize":
                info = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": _SERVER_INFO}
                await send.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": info}).encode() + b"\n")
            elif message.get("method") == "tools/call":
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": "x"}]}}
                await send.send(b"not json\n" + json.dumps(answer).encode() + b"\n")


_SERVER_INFO = {"name": "crossing", "version": "1"}


@pytest.mark.parametrize("how", ["handle", "caller_scope"])
async def test_an_answer_that_crosses_a_cancel_is_a_late_message(events: list[Event], how: str) -> None:
    """The call is cancelled (through its handle, or by the caller's scope) and its answer arrives before the
    cancelled task resumes: the answer is dropped, and reported as a LateMessage like any later one."""
    cancel: list[Callable[[], None]] = []

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, ProtocolViolation) and cancel:
            cancel.pop()()  # the cancellation happens between the broken line and the answer

    transport = memory(_answers_with_a_broken_line_first)
    async with Client(
        transport, protocol="2025-11-25", timeout=TimeoutPolicy(idle=5, maximum=10), on_event=on_event
    ) as client:
        if how == "handle":
            async with client.tool_call("any") as call:
                cancel.append(lambda: call.cancel("stop"))
                with pytest.raises(RequestCancelled):
                    await call.result()
            request_ids = call.request_ids
        else:
            with anyio.CancelScope() as scope:
                cancel.append(scope.cancel)
                await client.call_tool("any")
            assert scope.cancelled_caught
            request_ids = tuple(e.request_id for e in events if isinstance(e, RequestSent) and e.method == "tools/call")

    (late,) = late_messages(events)
    assert (late.request_id, late.kind) == (request_ids[0], "response")
    assert late.message["result"]["content"][0]["text"] == "x"
