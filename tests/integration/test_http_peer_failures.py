""" "One request's failure is that request's failure", over real Streamable HTTP on loopback sockets.

Every test drives a real :class:`~mcp_client.Client` with :func:`~mcp_client.http` against
:class:`~mcp_client.testing.http_peer.HttpPeer`, a scripted MCP server on ``127.0.0.1`` whose every byte the test
controls: dropped streams, 5xx answers, trickled bytes, slow headers, idle keep-alive connections closed under the
client, servers that ignore cancellation. Real sockets need real time, so these run on asyncio and trio with real
clocks (``real_clock``), each within a second or two.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from mcp_client import (
    DEFAULT_RETRY,
    CancelMethod,
    CancelSent,
    Client,
    Event,
    IdleTimeout,
    LateMessage,
    MaxTimeout,
    ProtocolError,
    RequestFinished,
    RetryScheduled,
    TimedOut,
    TimeoutPolicy,
    TransportError,
    TransportFailure,
    http,
)
from mcp_client.testing.http_peer import HttpFault, HttpPeer, HttpRequestLog

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=5, maximum=10, connect=5)
"""Generous for loopback; tests that time out set their own, short policy per call."""
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


@pytest.fixture
def client_for(events: list[Event], http_engine: str) -> Callable[..., Client]:
    """``client_for(url, protocol=..., transport_options=..., **client_options)``: a Client on ``http(url)``, on
    each engine of the client ``http()`` makes (``http_engine``, from ``conftest.py``).

    Its events go to the ``events`` fixture (from ``conftest.py``); retries are off unless ``retry=`` says otherwise.
    """

    def client_for(
        url: str, *, protocol: str = MODERN, transport_options: dict[str, Any] | None = None, **options: Any
    ) -> Client:
        options.setdefault("timeout", POLICY)
        options.setdefault("retry", None)
        return Client(http(url, **(transport_options or {})), protocol=protocol, on_event=events.append, **options)

    return client_for


async def eventually(predicate: Callable[[], object], *, within: float = 1.5) -> None:
    """Wait (real time, polling) until ``predicate()`` holds; fail after ``within`` seconds."""
    with anyio.move_on_after(within):
        while not predicate():
            await anyio.sleep(0.01)
        return
    raise AssertionError(f"still false after {within} s: {predicate}")


def only(logs: list[HttpRequestLog]) -> HttpRequestLog:
    assert len(logs) == 1, logs
    return logs[0]


def text_of(result: Any) -> str:
    return str(result.content[0].text)


# -- one request's failure ----------------------------------------------------------------------------------------


async def test_dropped_stream_fails_only_that_call(client_for: Callable[..., Client], events: list[Event]) -> None:
    peer = HttpPeer()
    progress: list[Any] = []
    async with peer.serving() as url, client_for(url) as client:
        outcomes: dict[str, Any] = {}

        async def dropped() -> None:
            try:
                await client.call_tool("drop_mid_stream", on_progress=progress.append)
            except TransportError as exc:
                outcomes["dropped"] = exc

        async def healthy() -> None:
            outcomes["healthy"] = await client.call_tool("slow", {"seconds": 0.3, "progress_every": 0.1})

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(healthy)
            task_group.start_soon(dropped)

        error = outcomes["dropped"]
        assert isinstance(error, TransportError)
        assert error.written is True
        assert text_of(outcomes["healthy"]) == "done"
        assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"

    drop = only(peer.stats.posts("tools/call", tool="drop_mid_stream"))
    assert drop.dropped_by_server
    assert drop.status == 200
    assert drop.content_type == "text/event-stream"
    assert [p.progress for p in progress] == [1.0]
    assert [e.request_id for e in events if isinstance(e, TransportFailure)] == [drop.rpc_id]
    assert peer.stats.errors == []


async def test_http_500_fails_only_that_call(client_for: Callable[..., Client]) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, client_for(url) as client:
        outcomes: dict[str, Any] = {}

        async def failing() -> None:
            with pytest.raises(TransportError) as caught:
                await client.call_tool("http_500")
            outcomes["failed"] = caught.value

        async def healthy() -> None:
            outcomes["healthy"] = await client.call_tool("slow", {"seconds": 0.2})

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(healthy)
            task_group.start_soon(failing)

        assert text_of(outcomes["healthy"]) == "done"
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
        error = outcomes["failed"]
        assert error.written is True
        assert "500" in str(error)
        assert error.status_code == 500  # the documented meaning of TransportError.status_code

    assert only(peer.stats.posts("tools/call", tool="http_500")).status == 500


async def test_garbage_body_fails_only_that_call(client_for: Callable[..., Client]) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, client_for(url) as client:
        with pytest.raises(ProtocolError):
            await client.call_tool("garbage_body")
        assert text_of(await client.call_tool("echo", {"text": "fine"})) == "fine"


async def test_oversized_event_fails_only_that_call(client_for: Callable[..., Client]) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, client_for(url, transport_options={"max_message_size": 10_000}) as client:
        with pytest.raises(ProtocolError):
            await client.call_tool("oversized", {"size": 50_000})
        assert text_of(await client.call_tool("echo", {"text": "small"})) == "small"


# -- time limits over HTTP --------------------------------------------------------------------------------------------


async def test_trickled_bytes_do_not_reset_the_idle_timeout(client_for: Callable[..., Client]) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, client_for(url) as client:
        started = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await client.call_tool("trickle", {"interval": 0.05}, timeout=TimeoutPolicy(idle=0.4, maximum=3))
        elapsed = anyio.current_time() - started
        assert 0.35 <= elapsed < 0.9, elapsed
        assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"

    trickle = only(peer.stats.posts("tools/call", tool="trickle"))
    assert trickle.content_type == "text/event-stream"
    assert trickle.sent == []
    assert trickle.closed_early


async def test_slow_headers_are_bounded_by_the_maximum(client_for: Callable[..., Client]) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, client_for(url) as client:
        started = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("slow_headers", {"seconds": 3}, timeout=TimeoutPolicy(idle=None, maximum=0.4))
        elapsed = anyio.current_time() - started
        assert 0.35 <= elapsed < 0.9, elapsed
        slow = only(peer.stats.posts("tools/call", tool="slow_headers"))
        await eventually(lambda: slow.closed_early)
        assert slow.status is None  # the client gave up before the status line
        assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"


async def test_idle_timeout_at_2026_closes_the_stream_and_the_tool_is_cancelled(
    client_for: Callable[..., Client], events: list[Event]
) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, client_for(url) as client:
        started = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await client.call_tool("silent", timeout=TimeoutPolicy(idle=0.3, maximum=3))
        assert anyio.current_time() - started < 0.8
        call = only(peer.stats.posts("tools/call", tool="silent"))
        request_id = call.rpc_id
        await eventually(lambda: peer.stats.peer.outcomes.get(request_id) == "cancelled")
        assert call.closed_early
        assert call.cancelled_tool
        assert peer.stats.disconnect_cancels == [request_id]

    assert peer.stats.peer.cancel_notifications == []
    assert peer.stats.posts("notifications/cancelled") == []
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [(e.request_id, e.how) for e in cancels] == [(request_id, CancelMethod.STREAM_CLOSE)]


async def test_idle_timeout_at_2025_posts_the_cancel_and_closes_the_stream(
    client_for: Callable[..., Client], events: list[Event]
) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, client_for(url, protocol=LEGACY) as client:
        with pytest.raises(IdleTimeout):
            await client.call_tool("silent", timeout=TimeoutPolicy(idle=0.3, maximum=3))
        call = only(peer.stats.posts("tools/call", tool="silent"))
        request_id = call.rpc_id
        await eventually(lambda: peer.stats.peer.outcomes.get(request_id) == "cancelled")
        await eventually(lambda: call.closed_early)
        assert peer.stats.peer.cancelled_request_ids == [request_id]
        cancel_post = only(peer.stats.posts("notifications/cancelled"))
        assert cancel_post.status == 202
        assert cancel_post.headers.get("mcp-session-id") == peer.stats.sessions_created[0]
        assert peer.stats.disconnect_cancels == []  # at 2025-11-25 a closed stream is not a cancel
        assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"

    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [(e.request_id, e.how) for e in cancels] == [(request_id, CancelMethod.NOTIFICATION_AND_STREAM_CLOSE)]
    assert peer.stats.sessions_deleted == peer.stats.sessions_created


async def test_json_server_that_ignores_cancellation_leaks_nothing(
    client_for: Callable[..., Client], events: list[Event]
) -> None:
    tasks_before = {task.id for task in anyio.get_running_tasks()}
    peer = HttpPeer(json_response=True)
    async with peer.serving() as url:
        async with client_for(url) as client:
            started = anyio.current_time()
            with pytest.raises(IdleTimeout):
                await client.call_tool("slow", {"seconds": 0.8}, timeout=TimeoutPolicy(idle=0.3, maximum=3))
            assert anyio.current_time() - started < 0.7
            call = only(peer.stats.posts("tools/call", tool="slow"))
            request_id = call.rpc_id
            # The server runs the tool to its end although the client closed the stream.
            await eventually(lambda: peer.stats.peer.outcomes.get(request_id) == "completed")
            assert call.closed_early
            assert not call.cancelled_tool
            assert peer.stats.disconnect_cancels == []
            assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"
            closing = anyio.current_time()
        assert anyio.current_time() - closing < 0.5

    timed_out = next(i for i, e in enumerate(events) if isinstance(e, TimedOut) and e.request_id == request_id)
    later = [e for e in events[timed_out + 1 :] if getattr(e, "request_id", None) == request_id]
    assert all(isinstance(e, LateMessage | CancelSent | RequestFinished) for e in later), later
    assert peer.stats.errors == []
    leaked = [task for task in anyio.get_running_tasks() if task.id not in tasks_before]
    assert leaked == []


# -- connections ---------------------------------------------------------------------------------------------------


async def test_keep_alive_connection_closed_by_the_server_between_calls(
    client_for: Callable[..., Client], events: list[Event]
) -> None:
    peer = HttpPeer(idle_close=0.3)
    async with peer.serving() as url, client_for(url) as client:
        for round_number in range(5):
            result = await client.call_tool("echo", {"text": f"round {round_number}"})
            assert text_of(result) == f"round {round_number}"
            await anyio.sleep(0.35)

    assert peer.stats.idle_closed >= 4
    assert peer.stats.connections_opened >= 5  # each round after the first on a fresh connection
    assert not [e for e in events if isinstance(e, TransportFailure)]
    assert len(peer.stats.posts("tools/call", tool="echo")) == 5


async def test_a_hundred_concurrent_calls_all_succeed(client_for: Callable[..., Client]) -> None:
    # ``barrier`` answers only once all 100 calls wait in the server together: a hidden cap below 100 on connections
    # or calls in flight would leave them all "timed out".
    peer = HttpPeer()
    results: dict[int, str] = {}
    async with peer.serving() as url, client_for(url) as client:

        async def call(number: int) -> None:
            results[number] = text_of(await client.call_tool("barrier", {"count": 100, "seconds": 8}))

        async with anyio.create_task_group() as task_group:
            for number in range(100):
                task_group.start_soon(call, number)

    assert results == dict.fromkeys(range(100), "released")
    assert peer.stats.max_open_connections >= 100
    assert peer.stats.errors == []


async def test_a_caller_supplied_httpx_client_is_not_closed(client_for: Callable[..., Client]) -> None:
    peer = HttpPeer()
    async with peer.serving() as url, httpx.AsyncClient() as http_client:
        async with client_for(url, transport_options={"client": http_client}) as client:
            assert text_of(await client.call_tool("echo", {"text": "mine"})) == "mine"
        assert not http_client.is_closed
        response = await http_client.get(url)  # still usable
        assert response.status_code == 405


# -- retries -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["http_503_tool", "fault_on_echo"])
async def test_503_retry_after_is_honoured_for_an_idempotent_tool(
    client_for: Callable[..., Client], events: list[Event], variant: str
) -> None:
    if variant == "http_503_tool":
        peer, tool = HttpPeer(), "http_503_retry_after"
    else:
        peer, tool = HttpPeer(faults={"echo": HttpFault("http_503_retry_after", times=1, retry_after=1)}), "echo"
    async with peer.serving() as url, client_for(url, retry=DEFAULT_RETRY) as client:
        tools = {t.name: t for t in await client.list_tools()}
        annotations = tools[tool].annotations
        assert annotations is not None
        assert annotations.idempotent_hint
        assert client.is_idempotent(tool)
        result = await client.call_tool(tool, {"text": "again"})
        assert text_of(result) == "again"

    first, second = peer.stats.posts("tools/call", tool=tool)
    assert (first.status, second.status) == (503, 200)
    assert first.rpc_id != second.rpc_id
    assert second.started_at - first.started_at >= 1.0
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1
    assert retries[0].delay >= 1.0


async def test_a_503_never_resends_a_tool_that_is_not_idempotent(
    client_for: Callable[..., Client], events: list[Event]
) -> None:
    """A gateway's 503 may come after the server behind it ran the tool: the call fails, it is not sent again."""
    peer = HttpPeer(faults={"increment": HttpFault("http_503_retry_after", times=1, retry_after=0)})
    async with peer.serving() as url, client_for(url, retry=DEFAULT_RETRY) as client:
        await client.list_tools()
        assert not client.is_idempotent("increment")
        with pytest.raises(TransportError) as failure:
            await client.call_tool("increment", {"by": 1})

    assert (failure.value.status_code, failure.value.written) == (503, True)
    assert [log.status for log in peer.stats.posts("tools/call", tool="increment")] == [503]
    assert not [e for e in events if isinstance(e, RetryScheduled)]


# -- the peer itself -------------------------------------------------------------------------------------------------


async def test_the_http_peer_enforces_the_transport_rules() -> None:
    """A self-check of HttpPeer with raw httpx: headers, sessions, keep-alive and ``Connection: close``."""
    peer = HttpPeer()
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "_meta": meta}}
    modern_headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
    accept = {"Accept": "application/json, text/event-stream"}
    async with peer.serving() as url, httpx.AsyncClient(headers=accept) as raw:
        ok = await raw.post(url, json=call, headers=modern_headers)
        assert ok.status_code == 200
        assert ok.json()["result"]["content"][0]["text"] == ""
        wrong = await raw.post(url, json={**call, "id": 2}, headers={**modern_headers, "Mcp-Name": "other"})
        assert wrong.status_code == 400
        assert wrong.json()["error"]["code"] == -32020
        missing = await raw.post(url, json={**call, "id": 3}, headers={"Mcp-Method": "tools/call"})
        assert missing.status_code == 400
        assert missing.json()["error"]["code"] == -32020
        encoded = {**modern_headers, "Mcp-Name": "=?base64?ZWNobw==?="}
        assert (await raw.post(url, json={**call, "id": 4}, headers=encoded)).status_code == 200

        initialize = {"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {"protocolVersion": LEGACY}}
        started = await raw.post(url, json=initialize)
        session_id = started.headers["mcp-session-id"]
        list_tools = {"jsonrpc": "2.0", "id": 11, "method": "tools/list"}
        assert (await raw.post(url, json=list_tools)).status_code == 400
        listed = await raw.post(url, json=list_tools, headers={"Mcp-Session-Id": session_id})
        assert "trickle" in {tool["name"] for tool in listed.json()["result"]["tools"]}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await raw.post(url, json=note, headers={"Mcp-Session-Id": session_id})).status_code == 202
        assert (await raw.delete(url, headers={"Mcp-Session-Id": session_id})).status_code == 200
        gone = await raw.post(url, json={**list_tools, "id": 12}, headers={"Mcp-Session-Id": session_id})
        assert gone.status_code == 404

        closing = await raw.post(url, json={**call, "id": 5}, headers={**modern_headers, "Connection": "close"})
        assert closing.headers["connection"] == "close"
        after = await raw.post(url, json={**call, "id": 6}, headers=modern_headers)
        assert after.status_code == 200

    first_connection = peer.stats.requests[0].connection
    assert [log.connection for log in peer.stats.requests[:4]] == [first_connection] * 4  # kept alive
    by_id = {log.rpc_id: log for log in peer.stats.posts("tools/call")}
    assert by_id[6].connection != by_id[5].connection  # a new connection after Connection: close
    assert json.loads(by_id[1].body)["params"]["name"] == "echo"
    assert peer.stats.errors == []
