"""Errors: typed, carrying their call's context, and one request's failure stays that request's failure.

JSON-RPC errors become ServerError subclasses by code; ``isError`` results are results (or ToolError on request);
a broken answer is a ProtocolError for that call only; the death of the shared channel fails every call on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import anyio
import pytest

from mcp_client import (
    Client,
    Event,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MCPClientError,
    MethodNotFound,
    ParseError,
    ProtocolError,
    ProtocolViolation,
    RequestFinished,
    ResourceNotFound,
    ServerError,
    TimeoutPolicy,
    ToolError,
    TransportError,
    TransportFailure,
)
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]


@pytest.mark.parametrize(
    ("code", "error_class"),
    [
        (-32700, ParseError),
        (-32600, InvalidRequest),
        (-32601, MethodNotFound),
        (-32602, InvalidParams),
        (-32603, InternalError),
        (-32002, ResourceNotFound),
        (4242, ServerError),
    ],
)
async def test_json_rpc_error_raises_the_server_error_class_of_its_code(
    connect: Connect, events: list[Event], code: int, error_class: type[ServerError]
) -> None:
    """A JSON-RPC error is a ServerError (a subclass for known codes) with .code, .message and the call's context."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        with pytest.raises(ServerError) as caught:
            await client.call_tool("fail", {"code": code, "message": "it broke"})

    error = caught.value
    assert type(error) is error_class
    assert error.code == code
    assert error.message == "it broke"
    assert error.method == "tools/call"
    call_ids = [m["id"] for m in peer.stats.received if m.get("method") == "tools/call"]
    assert error.request_ids == tuple(call_ids)
    assert error.elapsed is not None
    assert error.elapsed >= 0
    finished = [e for e in events if isinstance(e, RequestFinished) and e.request_id == call_ids[0]]
    assert [e.error for e in finished] == [error]


async def test_unknown_tool_is_invalid_params(connect: Connect) -> None:
    """The server's -32602 for an unknown tool is InvalidParams."""
    peer = ScriptedPeer(era="legacy")
    async with connect(peer) as client:
        with pytest.raises(InvalidParams, match="unknown tool"):
            await client.call_tool("no_such_tool")


async def test_tool_error_is_a_result_unless_raising_is_asked_for(connect: Connect) -> None:
    """isError: true is an ordinary result; with raise_on_error=True it is a ToolError carrying that result."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        result = await client.call_tool("tool_error")
        with pytest.raises(ToolError) as caught:
            await client.call_tool("tool_error", raise_on_error=True)

    assert result.is_error
    assert text_of(result) == "tool failed"
    assert caught.value.result.is_error
    assert "tool failed" in str(caught.value)
    assert caught.value.method == "tools/call"


async def test_unknown_result_type_is_a_protocol_error(connect: Connect) -> None:
    """An unknown resultType is a ProtocolError for that call; the connection carries on."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        with pytest.raises(ProtocolError, match="weird"):
            await client.call_tool("bad_result_type")
        after = await client.call_tool("echo", {"text": "ok"})

    assert text_of(after) == "ok"


async def test_oversized_answer_fails_its_call_and_the_next_call_works(connect: Connect, events: list[Event]) -> None:
    """An answer over max_message_size is a ProtocolError for that call (its id read from the line's head)."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, max_message_size=10_000) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("huge", {"size": 50_000})
        after = await client.call_tool("echo", {"text": "small"})

    assert text_of(after) == "small"
    call_ids = [m["id"] for m in peer.stats.received if m.get("method") == "tools/call"]
    assert caught.value.request_ids == (call_ids[0],)
    violations = [e for e in events if isinstance(e, ProtocolViolation)]
    assert len(violations) == 1
    assert "10000" in violations[0].detail


@pytest.mark.fake_clock
async def test_oversized_answer_does_not_disturb_other_calls(connect: Connect) -> None:
    """One request's failure is that request's failure: a concurrent call carries on to its result."""
    peer = ScriptedPeer(era="modern")
    outcomes: dict[str, object] = {}

    async def run(client: Client, name: str, tool: str, arguments: Mapping[str, object]) -> None:
        try:
            outcomes[name] = text_of(await client.call_tool(tool, arguments))
        except MCPClientError as exc:
            outcomes[name] = exc

    async with connect(peer, max_message_size=10_000) as client, anyio.create_task_group() as tg:
        tg.start_soon(run, client, "slow", "slow", {"seconds": 5, "progress_every": 1})
        tg.start_soon(run, client, "huge", "huge", {"size": 50_000})
        tg.start_soon(run, client, "fail", "fail", {})

    assert outcomes["slow"] == "done"
    assert isinstance(outcomes["huge"], ProtocolError)
    assert isinstance(outcomes["fail"], InternalError)


@pytest.mark.fake_clock
async def test_a_broken_line_naming_another_calls_id_does_not_fail_that_call(
    connect: Connect, events: list[Event]
) -> None:
    """Only a broken line that is certainly a call's response fails it: an id in a notification's data, or a
    server request's own id, must not fail the call in flight with that id."""
    peer = ScriptedPeer(era="modern")
    outcomes: dict[str, object] = {}
    async with connect(peer) as client, anyio.create_task_group() as tg:

        async def slow() -> None:
            outcomes["slow"] = text_of(await client.call_tool("slow", {"seconds": 2, "progress_every": 1}))

        tg.start_soon(slow)
        while not [m for m in peer.stats.received if m.get("method") == "tools/call"]:
            await anyio.sleep(0.01)
        (slow_call,) = [m for m in peer.stats.received if m.get("method") == "tools/call"]
        outcomes["broken"] = text_of(await client.call_tool("broken_naming", {"id": slow_call["id"]}))

    assert outcomes == {"slow": "done", "broken": "survived"}
    assert len([e for e in events if isinstance(e, ProtocolViolation)]) == 2


async def test_garbage_lines_are_reported_and_the_call_survives(connect: Connect, events: list[Event]) -> None:
    """A line that is not JSON, or not an object, is a ProtocolViolation event; it never ends the connection."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        result = await client.call_tool("garbage")
        after = await client.call_tool("echo", {"text": "after"})

    assert text_of(result) == "survived"
    assert text_of(after) == "after"
    violations = [e for e in events if isinstance(e, ProtocolViolation)]
    assert [v.raw for v in violations] == [b"this is not json", b"[1,2,3]"]


@pytest.mark.fake_clock
async def test_server_death_fails_every_call_in_flight_at_once(connect: Connect, events: list[Event]) -> None:
    """The death of the shared channel fails every call on it, each with TransportError, immediately."""
    peer = ScriptedPeer(era="modern")
    failures: list[tuple[float, MCPClientError]] = []

    async def doomed(client: Client, tool: str, arguments: Mapping[str, object]) -> None:
        try:
            await client.call_tool(tool, arguments)
        except MCPClientError as exc:
            failures.append((anyio.current_time(), exc))

    async with connect(peer, timeout=TimeoutPolicy(idle=60, maximum=600)) as client:
        start = anyio.current_time()
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(doomed, client, "silent", {})
            tg.start_soon(doomed, client, "die", {"after": 5})
        with pytest.raises(TransportError) as caught:
            await client.call_tool("echo")

    assert len(failures) == 4
    assert all(isinstance(error, TransportError) for _, error in failures)
    assert [when - start for when, _ in failures] == pytest.approx([5, 5, 5, 5])
    assert all(error.written for _, error in failures if isinstance(error, TransportError))
    assert len({error.request_ids for _, error in failures}) == 4
    assert caught.value.written is False
    assert len([e for e in events if isinstance(e, TransportFailure) and e.request_id is None]) == 1


async def test_half_a_line_then_death_fails_the_call(connect: Connect, events: list[Event]) -> None:
    """Half a message and then EOF: reported as a ProtocolViolation, and the call fails with a typed error."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        with pytest.raises(TransportError):
            await client.call_tool("half_line")

    violations = [e for e in events if isinstance(e, ProtocolViolation)]
    assert len(violations) == 1
    assert violations[0].raw == b'{"jsonrpc":"2.0","id":'
