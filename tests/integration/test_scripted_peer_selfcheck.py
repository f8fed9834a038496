"""Self-checks of the scripted MCP peer, driven with raw JSON lines.

The client's tests trust the peer to do exactly what its tools promise, so these
tests pin that down on the wire, in-process on asyncio and trio, and once as a
subprocess over stdio. Backends and clocks come from ``tests/conftest.py``: by
default asyncio and trio on a jumping ``MockClock``; ``fake_clock`` tests check
timing in virtual time; ``real_clock`` tests start real processes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.stapled import StapledByteStream

from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN}
MAX_LINE = 16 * 1024 * 1024
REPO_ROOT = Path(__file__).resolve().parents[2]


class RawClient:
    """The client end of a connection to the peer, one JSON line at a time."""

    def __init__(self, stream: StapledByteStream) -> None:
        self.stream = stream
        self.lines = BufferedByteReceiveStream(stream)

    async def send(self, message: dict[str, Any]) -> None:
        await self.stream.send(json.dumps(message).encode() + b"\n")

    async def request(
        self,
        request_id: int | str,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        modern: bool = True,
        progress_token: str | None = None,
    ) -> None:
        params = dict(params or {})
        meta: dict[str, Any] = dict(ENVELOPE) if modern else {}
        if progress_token is not None:
            meta["progressToken"] = progress_token
        if meta:
            params["_meta"] = meta
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    async def call_tool(
        self, request_id: int | str, name: str, arguments: dict[str, Any] | None = None, **options: Any
    ) -> None:
        await self.request(request_id, "tools/call", {"name": name, "arguments": arguments or {}}, **options)

    async def cancel(self, request_id: int | str) -> None:
        params = {"requestId": request_id, "reason": "test"}
        await self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    async def receive_line(self) -> bytes:
        return await self.lines.receive_until(b"\n", MAX_LINE)

    async def receive(self) -> dict[str, Any]:
        message = json.loads(await self.receive_line())
        assert isinstance(message, dict)
        return message

    async def response(self, request_id: int | str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Everything up to the response for ``request_id``: (the messages before it, the response)."""
        before: list[dict[str, Any]] = []
        while True:
            message = await self.receive()
            if message.get("id") == request_id and "method" not in message:
                return before, message
            before.append(message)

    async def result(self, request_id: int | str) -> dict[str, Any]:
        _, response = await self.response(request_id)
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    async def error(self, request_id: int | str) -> dict[str, Any]:
        _, response = await self.response(request_id)
        assert "error" in response, response
        error: dict[str, Any] = response["error"]
        return error

    async def close_and_drain(self) -> tuple[list[dict[str, Any]], bytes]:
        """Send EOF, then read until the peer closes: (the remaining messages, any unterminated tail)."""
        await self.stream.send_eof()
        messages: list[dict[str, Any]] = []
        while True:
            try:
                messages.append(json.loads(await self.receive_line()))
            except anyio.IncompleteRead:
                return messages, bytes(self.lines.buffer)


@asynccontextmanager
async def connected(peer: ScriptedPeer, *, timeout: float = 10) -> AsyncIterator[RawClient]:
    with anyio.fail_after(timeout):
        async with peer.connect() as stream:
            yield RawClient(stream)


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    assert len(content) == 1
    assert content[0]["type"] == "text"
    text: str = content[0]["text"]
    return text


# -- protocol eras -------------------------------------------------------------------------------------------


async def test_modern_discover_answers_with_versions_capabilities_and_server_info() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.request(1, "server/discover")
        result = await client.result(1)
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == [MODERN]
    assert set(result["capabilities"]) == {"tools", "prompts", "resources"}
    assert result["ttlMs"] == 0
    assert result["cacheScope"] == "public"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-client-scripted-peer"


async def test_modern_requests_must_carry_a_supported_protocol_version() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.request(1, "tools/list", modern=False)
        assert (await client.error(1))["code"] == -32602
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}},
            }
        )
        error = await client.error(2)
        assert error["code"] == -32022
        assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}
        await client.request(3, "initialize", {"protocolVersion": "2025-11-25"}, modern=False)
        assert (await client.error(3))["code"] == -32022
        await client.request(4, "no/such/method")
        assert (await client.error(4))["code"] == -32601
        await client.call_tool(5, "echo", {"text": "hi"})
        result = await client.result(5)
    assert result["resultType"] == "complete"
    assert text_of(result) == "hi"


async def test_legacy_requires_initialize_and_answers_without_result_type() -> None:
    peer = ScriptedPeer(era="legacy")
    async with connected(peer) as client:
        await client.request(1, "tools/list", modern=False)
        assert (await client.error(1))["code"] == -32600
        await client.request(2, "ping", modern=False)
        assert await client.result(2) == {}
        await client.request(3, "server/discover")
        assert (await client.error(3))["code"] == -32601
        await client.request(4, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}, modern=False)
        initialize = await client.result(4)
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await client.request(5, "tools/list", modern=False)
        tools = await client.result(5)
        await client.call_tool(6, "echo", {"text": "hi"}, modern=False)
        echoed = await client.result(6)
    assert initialize["protocolVersion"] == "2025-06-18"
    assert initialize["serverInfo"]["name"] == "mcp-client-scripted-peer"
    assert "tools" in initialize["capabilities"]
    assert "resultType" not in tools
    assert "ttlMs" not in tools
    assert echoed == {"content": [{"type": "text", "text": "hi"}]}
    assert peer.stats.initialized_notifications == 1


async def test_legacy_offers_its_newest_version_for_an_unknown_one() -> None:
    async with connected(ScriptedPeer(era="legacy")) as client:
        await client.request(1, "initialize", {"protocolVersion": "1999-01-01"}, modern=False)
        assert (await client.result(1))["protocolVersion"] == "2025-11-25"


async def test_silent_discover_is_never_answered() -> None:
    peer = ScriptedPeer(era="legacy", discover="silent")
    async with connected(peer) as client:
        await client.request(1, "server/discover")
        await client.request(2, "ping", modern=False)
        before, _ = await client.response(2)
        remaining, _ = await client.close_and_drain()
    assert before == []
    assert remaining == []
    assert [request["id"] for request in peer.stats.ignored_requests] == [1]


async def test_auto_era_serves_discover_and_initialize_on_separate_connections() -> None:
    peer = ScriptedPeer(era="auto")
    async with connected(peer) as client:
        await client.request(1, "server/discover")
        assert (await client.result(1))["supportedVersions"] == [MODERN]
        await client.request(2, "initialize", {"protocolVersion": "2025-11-25"}, modern=False)
        assert (await client.error(2))["code"] == -32022
    async with connected(peer) as client:
        await client.request(1, "initialize", {"protocolVersion": "2025-11-25"}, modern=False)
        assert (await client.result(1))["protocolVersion"] == "2025-11-25"
        await client.request(2, "tools/list", modern=False)
        assert "resultType" not in await client.result(2)
        await client.request(3, "tools/list")
        assert (await client.error(3))["code"] == -32600
    assert peer.stats.connections == 2


# -- lists, prompts, resources -------------------------------------------------------------------------------


async def test_tools_list_paginates_with_opaque_cursors() -> None:
    pages: list[dict[str, Any]] = []
    async with connected(ScriptedPeer(era="modern", page_size=4)) as client:
        cursor: str | None = None
        while True:
            await client.request(len(pages), "tools/list", {} if cursor is None else {"cursor": cursor})
            page = await client.result(len(pages))
            pages.append(page)
            cursor = page.get("nextCursor")
            if cursor is None:
                break
            assert isinstance(cursor, str)
        await client.request("bad", "tools/list", {"cursor": "not-a-cursor"})
        assert (await client.error("bad"))["code"] == -32602
    tools = [tool for page in pages for tool in page["tools"]]
    names = [tool["name"] for tool in tools]
    assert len(pages) > 1
    assert all(len(page["tools"]) == 4 for page in pages[:-1])
    assert 1 <= len(pages[-1]["tools"]) <= 4
    assert all(page["ttlMs"] == 0 and page["cacheScope"] == "public" for page in pages)
    assert len(names) == len(set(names))
    assert {"echo", "slow", "chatty", "silent", "die", "ping_client", "reindex", "stuck"} <= set(names)
    assert all(tool["inputSchema"]["type"] == "object" for tool in tools)
    echo = tools[names.index("echo")]
    assert echo["annotations"]["readOnlyHint"] is True
    assert echo["annotations"]["idempotentHint"] is True


async def test_prompts_and_resources() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.request(1, "prompts/list")
        assert [prompt["name"] for prompt in (await client.result(1))["prompts"]] == ["greet"]
        await client.request(2, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
        messages = (await client.result(2))["messages"]
        await client.request(3, "prompts/get", {"name": "nope"})
        assert (await client.error(3))["code"] == -32602
        await client.request(4, "resources/list")
        assert [resource["uri"] for resource in (await client.result(4))["resources"]] == ["memo://hello"]
        await client.request(5, "resources/read", {"uri": "memo://hello"})
        contents = (await client.result(5))["contents"]
        await client.request(6, "resources/read", {"uri": "memo://nope"})
        assert (await client.error(6))["code"] == -32602
    assert messages == [{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}]
    assert contents[0]["text"] == "hello"


# -- calls, cancellation, progress ---------------------------------------------------------------------------


async def test_cancelled_silent_call_records_cancelled_and_never_answers() -> None:
    peer = ScriptedPeer(era="modern")
    async with connected(peer) as client:
        await client.call_tool(7, "silent")
        await client.cancel(7)
        await client.call_tool(8, "echo", {"text": "after"})
        before, response = await client.response(8)
        remaining, tail = await client.close_and_drain()
    assert before == []
    assert text_of(response["result"]) == "after"
    assert remaining == []
    assert tail == b""
    assert peer.stats.outcomes == {7: "cancelled", 8: "completed"}
    assert peer.stats.cancel_notifications == [{"requestId": 7, "reason": "test"}]
    assert not any(message.get("id") == 7 for message in peer.stats.sent)


async def test_calls_still_running_at_eof_are_aborted() -> None:
    peer = ScriptedPeer(era="modern")
    async with connected(peer) as client:
        await client.call_tool(1, "chatty", {"interval": 0.01}, progress_token="tick")
        await client.receive()
        remaining, _ = await client.close_and_drain()
    assert all(message.get("method") == "notifications/progress" for message in remaining)
    assert peer.stats.outcomes == {1: "aborted"}


async def test_ignore_cancel_answers_late_and_counts_as_completed() -> None:
    peer = ScriptedPeer(era="modern")
    async with connected(peer) as client:
        await client.call_tool(1, "ignore_cancel", {"seconds": 0.05})
        await client.cancel(1)
        result = await client.result(1)
    assert text_of(result) == "finished despite cancellation"
    assert peer.stats.outcomes == {1: "completed"}
    assert peer.stats.cancelled_request_ids == [1]


async def test_progress_backwards_sends_the_sequence_then_the_result() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.call_tool(1, "progress_backwards", progress_token="p")
        notifications, response = await client.response(1)
        await client.call_tool(2, "progress_backwards")
        without_token, _ = await client.response(2)
    assert [n["method"] for n in notifications] == ["notifications/progress"] * 4
    assert [n["params"]["progress"] for n in notifications] == [5, 3, 5, 7]
    assert {n["params"]["progressToken"] for n in notifications} == {"p"}
    assert text_of(response["result"]) == "done"
    assert without_token == []


@pytest.mark.fake_clock
async def test_slow_reports_progress_on_schedule_in_virtual_time() -> None:
    arrivals: list[tuple[float, Any]] = []
    async with connected(ScriptedPeer(era="modern")) as client:
        start = anyio.current_time()
        await client.call_tool(1, "slow", {"seconds": 3.5, "progress_every": 1, "total": 3}, progress_token="s")
        while True:
            message = await client.receive()
            elapsed = round(anyio.current_time() - start, 6)
            if message.get("id") == 1:
                arrivals.append((elapsed, text_of(message["result"])))
                break
            params = message["params"]
            arrivals.append((elapsed, (params["progress"], params["total"], params["message"])))
    assert arrivals == [
        (1.0, (1, 3, "step 1")),
        (2.0, (2, 3, "step 2")),
        (3.0, (3, 3, "step 3")),
        (3.5, "done"),
    ]


async def test_invalid_tool_arguments_and_unknown_tools_are_invalid_params() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.call_tool(1, "slow", {"seconds": "soon"})
        assert (await client.error(1))["code"] == -32602
        await client.call_tool(2, "no_such_tool")
        assert (await client.error(2))["code"] == -32602


# -- misbehaviour ---------------------------------------------------------------------------------------------


async def test_die_closes_the_stream_without_answering() -> None:
    peer = ScriptedPeer(era="modern")
    async with connected(peer) as client:
        await client.call_tool(1, "silent")
        await client.call_tool(2, "die")
        with pytest.raises(anyio.IncompleteRead):
            await client.receive_line()
        tail = bytes(client.lines.buffer)
        with pytest.raises(anyio.BrokenResourceError):
            await client.call_tool(3, "echo")
    assert tail == b""
    assert peer.stats.died
    assert peer.stats.outcomes == {1: "aborted", 2: "aborted"}


async def test_half_line_leaves_an_unterminated_message_then_dies() -> None:
    peer = ScriptedPeer(era="modern")
    async with connected(peer) as client:
        await client.call_tool(1, "half_line")
        with pytest.raises(anyio.IncompleteRead):
            await client.receive_line()
        tail = bytes(client.lines.buffer)
    assert tail == b'{"jsonrpc":"2.0","id":'
    assert peer.stats.died


async def test_garbage_wrong_id_and_answer_twice_on_the_wire() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.call_tool(1, "garbage")
        garbage_lines = [await client.receive_line() for _ in range(3)]
        await client.call_tool(2, "wrong_id")
        stray, response = await client.response(2)
        await client.call_tool(3, "answer_twice")
        first = await client.receive()
        second = await client.receive()
    assert garbage_lines[:2] == [b"this is not json", b"[1,2,3]"]
    assert text_of(json.loads(garbage_lines[2])["result"]) == "survived"
    assert [message["id"] for message in stray] == [999999]
    assert text_of(response["result"]) == "right id"
    assert first == second
    assert first["id"] == 3


async def test_simple_tools_answer_as_documented() -> None:
    peer = ScriptedPeer(era="modern")
    async with connected(peer) as client:
        await client.call_tool(1, "fail", {"code": -32000, "message": "nope"})
        failed = await client.error(1)
        await client.call_tool(2, "tool_error")
        tool_error = await client.result(2)
        await client.call_tool(3, "bad_result_type")
        bad_result_type = await client.result(3)
        await client.call_tool(4, "huge", {"size": 200_000})
        huge = await client.result(4)
        await client.call_tool(5, "stderr", {"text": "to stderr"})
        stderr = await client.result(5)
        await client.call_tool(6, "increment", {"by": 2})
        await client.result(6)
        await client.call_tool(7, "increment")
        incremented = await client.result(7)
        await client.call_tool(8, "stats")
        stats = json.loads(text_of(await client.result(8)))
    assert failed == {"code": -32000, "message": "nope"}
    assert tool_error["isError"] is True
    assert text_of(tool_error) == "tool failed"
    assert bad_result_type["resultType"] == "weird"
    assert text_of(huge) == "x" * 200_000
    assert text_of(stderr) == "ok"
    assert peer.stats.stderr_lines == ["to stderr"]
    assert text_of(incremented) == "3"
    assert stats["outcomes"] == {str(request_id): "completed" for request_id in range(1, 8)}
    assert stats["cancelled"] == []


async def test_stray_progress_tools() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.call_tool(1, "progress_unknown_token", progress_token="mine")
        unknown, _ = await client.response(1)
        await client.call_tool(2, "progress_after_result", progress_token="late")
        early, _ = await client.response(2)
        late = await client.receive()
    assert [notification["params"]["progressToken"] for notification in unknown] == ["no-such-token"]
    assert early == []
    assert late["method"] == "notifications/progress"
    assert late["params"]["progressToken"] == "late"


@pytest.mark.fake_clock
async def test_reindex_reports_batches_until_done() -> None:
    async with connected(ScriptedPeer(era="modern")) as client:
        await client.call_tool(1, "reindex", {"collection": "notes"}, progress_token="r")
        progress, response = await client.response(1)
    assert [n["params"]["message"] for n in progress] == [f"indexed {step}/8" for step in range(1, 9)]
    assert {n["params"]["total"] for n in progress} == {8}
    assert text_of(response["result"]) == "reindexed 'notes' in 8 batches"


async def test_malformed_client_lines_are_recorded_and_ignored() -> None:
    peer = ScriptedPeer(era="modern")
    async with connected(peer) as client:
        await client.stream.send(b"{not json\n[1,2]\n")
        await client.call_tool(1, "echo", {"text": "still here"})
        result = await client.result(1)
    assert text_of(result) == "still here"
    assert peer.stats.malformed == [b"{not json", b"[1,2]"]


async def test_ping_client_waits_for_the_clients_answer() -> None:
    peer = ScriptedPeer(era="legacy")
    async with connected(peer) as client:
        await client.request(1, "initialize", {"protocolVersion": "2025-11-25"}, modern=False)
        await client.result(1)
        await client.call_tool(2, "ping_client", modern=False)
        ping = await client.receive()
        assert ping["method"] == "ping"
        await client.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
        result = await client.result(2)
    assert text_of(result) == "pong received"
    assert peer.stats.client_responses == [{"jsonrpc": "2.0", "id": ping["id"], "result": {}}]


# -- subprocess -----------------------------------------------------------------------------------------------


async def _run_peer_process(
    requests: list[dict[str, Any]], *, responses: int, close_stdin: bool = True
) -> tuple[list[dict[str, Any]], int]:
    """Send ``requests`` to a peer subprocess, read ``responses`` lines, then (optionally) send EOF and wait."""
    command = [sys.executable, "-m", "mcp_client.testing.peer", "--era", "modern"]
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=REPO_ROOT) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            stdout = BufferedByteReceiveStream(process.stdout)
            for request in requests:
                await process.stdin.send(json.dumps(request).encode() + b"\n")
            received = [json.loads(await stdout.receive_until(b"\n", MAX_LINE)) for _ in range(responses)]
            if close_stdin:
                await process.stdin.aclose()
            return received, await process.wait()


@pytest.mark.real_clock
async def test_subprocess_echo_round_trip() -> None:
    call = {"name": "echo", "arguments": {"text": "over stdio"}, "_meta": ENVELOPE}
    received, returncode = await _run_peer_process(
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}], responses=1
    )
    assert received == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "over stdio"}], "resultType": "complete"},
        }
    ]
    assert returncode == 0


@pytest.mark.real_clock
async def test_subprocess_die_exits_with_status_3() -> None:
    call = {"name": "die", "_meta": ENVELOPE}
    # stdin stays open: the peer must exit by itself, not because it saw EOF.
    _, returncode = await _run_peer_process(
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}], responses=0, close_stdin=False
    )
    assert returncode == 3
