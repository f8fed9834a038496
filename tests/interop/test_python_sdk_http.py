"""Interop over Streamable HTTP with the official Python SDK's MCPServer (mcp 2.3.0) under uvicorn.

Each test starts ``python_sdk_server.py --http --port <free port>`` (SSE answers by default, ``--json-response``
for JSON) and talks to it through a caller-supplied client whose request hook records every request the
transport makes: an ``httpx2.AsyncClient`` and httpx 0.28's ``httpx.AsyncClient`` (each test that takes one runs
with both), or the client ``http()`` makes (on each of its engines, httpcore2's pool and an ``httpx2.AsyncClient``:
the ``http_engine`` fixture). Cancellation is confirmed by the server itself: its tools write
"<tag> cancelled" to the events file. Real process, real clock, wide margins.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest

from mcp_client import (
    CancelMethod,
    CancelSent,
    Client,
    Event,
    IdleTimeout,
    IdleTimerReset,
    LateMessage,
    MaxTimeout,
    ProtocolError,
    ProtocolViolation,
    TimeoutPolicy,
    TransportFailure,
)
from mcp_client.transports.http import http
from tests.interop.conftest import EVENTS_ENV, PYTHON_SDK_SERVER, free_port, serve_http

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


def _start_server(events_file: Path, *extra: str) -> Iterator[str]:
    port = free_port()
    env = dict(os.environ, **{EVENTS_ENV: str(events_file)})
    command = [sys.executable, str(PYTHON_SDK_SERVER), "--http", "--port", str(port), *extra]
    yield from serve_http(command, port, env, "the HTTP server")


@pytest.fixture
def sse_server(events_file: Path) -> Iterator[str]:
    """URL of a server answering requests with SSE streams."""
    yield from _start_server(events_file)


@pytest.fixture
def json_server(events_file: Path) -> Iterator[str]:
    """URL of a server answering requests with plain JSON (``--json-response``)."""
    yield from _start_server(events_file, "--json-response")


LIBRARIES: dict[str, Any] = {"httpx2": httpx2, "httpx": httpx}


@pytest.fixture(params=sorted(LIBRARIES))
async def recorded(request: pytest.FixtureRequest) -> AsyncIterator[tuple[httpx.AsyncClient, list[httpx.Request]]]:
    """A caller's client of either line (httpx2, httpx) that records every request it sends."""
    library = LIBRARIES[request.param]
    requests: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        requests.append(request)

    limits = library.Limits(max_connections=None, max_keepalive_connections=20)
    timeout = library.Timeout(connect=30, read=None, write=30, pool=None)
    async with library.AsyncClient(event_hooks={"request": [record]}, limits=limits, timeout=timeout) as client:
        yield client, requests


def _posted(requests: list[httpx.Request], method: str) -> list[httpx.Request]:
    return [r for r in requests if r.method == "POST" and json.loads(r.content).get("method") == method]


async def _wait_for_line(events_file: Path, line: str, within: float = 10.0) -> list[str]:
    with anyio.move_on_after(within):
        while line not in events_file.read_text().splitlines():
            await anyio.sleep(0.05)
    return events_file.read_text().splitlines()


async def test_modern_session_over_sse(
    sse_server: str, recorded: tuple[httpx.AsyncClient, list[httpx.Request]]
) -> None:
    """The probe settles on 2026-07-28; tools list and call; every POST carries the routing headers."""
    client_http, requests = recorded
    async with Client(http(sse_server, client=client_http), timeout=TimeoutPolicy(idle=20, maximum=60)) as client:
        assert client.protocol_version == "2026-07-28"
        assert {"echo", "slow_progress", "silent"} <= {tool.name for tool in await client.list_tools()}
        result = await client.call_tool("echo", {"text": "héllo"})
    assert not result.is_error
    assert result.content[0].text == "héllo"  # type: ignore[union-attr]
    (call,) = _posted(requests, "tools/call")
    assert call.headers["MCP-Protocol-Version"] == "2026-07-28"
    assert call.headers["Mcp-Name"] == "echo"
    assert all(r.method == "POST" for r in requests)


async def test_progress_over_sse_resets_idle(http_engine: str, sse_server: str, events_file: Path) -> None:
    """A 2.5 s call under a 1 s idle timeout succeeds only because each progress event resets idle."""
    events: list[Event] = []
    seen: list[float] = []
    policy = TimeoutPolicy(idle=1.0, maximum=30)
    async with Client(http(sse_server), timeout=policy, on_event=events.append) as client:
        result = await client.call_tool(
            "slow_progress",
            {"seconds": 2.5, "interval": 0.1, "tag": "long"},
            on_progress=lambda p: seen.append(p.progress),
        )
    assert not result.is_error
    assert sum(isinstance(e, IdleTimerReset) for e in events) >= 10
    assert len(seen) >= 2
    assert seen == sorted(seen)
    assert "long completed" in events_file.read_text().splitlines()


async def test_modern_idle_timeout_closes_the_stream_and_the_server_cancels(
    sse_server: str, events_file: Path, recorded: tuple[httpx.AsyncClient, list[httpx.Request]]
) -> None:
    """At 2026-07-28 the timeout closes the SSE stream; the server cancels the tool; nothing else is POSTed."""
    client_http, requests = recorded
    events: list[Event] = []
    policy = TimeoutPolicy(idle=1.0, maximum=30)
    async with Client(http(sse_server, client=client_http), timeout=policy, on_event=events.append) as client:
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", {"seconds": 30, "tag": "quiet"})
        lines = await _wait_for_line(events_file, "quiet cancelled")
        assert not (await client.call_tool("echo", {"text": "still here"})).is_error
    assert "quiet cancelled" in lines
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [(c.request_id, c.how) for c in cancels] == [(caught.value.request_ids[0], CancelMethod.STREAM_CLOSE)]
    assert not _posted(requests, "notifications/cancelled")
    assert not [e for e in events if isinstance(e, TransportFailure | ProtocolViolation)]


async def test_json_mode_timeout_is_prompt_and_the_late_answer_is_harmless(
    http_engine: str, json_server: str, events_file: Path
) -> None:
    """JSON answers: a 2 s silent call under a 0.5 s maximum fails at once; whatever comes later is only late."""
    events: list[Event] = []
    async with Client(
        http(json_server), timeout=TimeoutPolicy(idle=None, maximum=0.5), on_event=events.append
    ) as client:
        assert client.protocol_version == "2026-07-28"
        started = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("silent", {"seconds": 2, "tag": "json-slow"})
        assert anyio.current_time() - started < 1.5
        await _wait_for_line(events_file, "json-slow completed", within=5)  # or cancelled: either way it ended
        await anyio.sleep(0.3)
        assert (await client.call_tool("echo", {"text": "x"}, timeout=10)).content[0].text == "x"  # type: ignore[union-attr]
    assert [line for line in events_file.read_text().splitlines() if line.startswith("json-slow ")]
    assert len([e for e in events if isinstance(e, LateMessage)]) <= 1
    assert not [e for e in events if isinstance(e, TransportFailure | ProtocolViolation)]


async def test_legacy_session_over_http(
    sse_server: str, events_file: Path, recorded: tuple[httpx.AsyncClient, list[httpx.Request]]
) -> None:
    """At 2025-11-25: initialize, the session id on every later POST and the GET stream, the cancel POSTed, DELETE
    on close."""
    client_http, requests = recorded
    events: list[Event] = []
    policy = TimeoutPolicy(idle=1.0, maximum=30)
    transport = http(sse_server, client=client_http)
    async with Client(transport, protocol="2025-11-25", timeout=policy, on_event=events.append) as client:
        assert client.protocol_version == "2025-11-25"
        assert (await client.call_tool("echo", {"text": "legacy"})).content[0].text == "legacy"  # type: ignore[union-attr]
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", {"seconds": 30, "tag": "old"})
        lines = await _wait_for_line(events_file, "old cancelled")
    assert "old cancelled" in lines
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [c.how for c in cancels] == [CancelMethod.NOTIFICATION_AND_STREAM_CLOSE]
    (cancel,) = _posted(requests, "notifications/cancelled")
    assert json.loads(cancel.content)["params"]["requestId"] == caught.value.request_ids[0]
    (initialize,) = _posted(requests, "initialize")
    session_id = cancel.headers["Mcp-Session-Id"]
    assert "Mcp-Session-Id" not in initialize.headers
    for later in _posted(requests, "tools/call"):
        assert later.headers["Mcp-Session-Id"] == session_id
        assert later.headers["MCP-Protocol-Version"] == "2025-11-25"
    gets = [r for r in requests if r.method == "GET"]  # the standalone stream, opened after initialized
    assert gets
    assert gets[0].headers["Mcp-Session-Id"] == session_id
    assert gets[0].headers["Accept"] == "text/event-stream"
    assert requests[-1].method == "DELETE"
    assert requests[-1].headers["Mcp-Session-Id"] == session_id


async def test_a_callers_client_isolates_failures_and_cancellations(
    sse_server: str, events_file: Path, recorded: tuple[httpx.AsyncClient, list[httpx.Request]]
) -> None:
    """On a caller's client of either line, with calls in flight together: one cancelled by the caller, one timed
    out, one refused by the server and one that is too large to accept each end on their own (the server cancels
    the first two), while a call with progress completes beside them; the caller's client is left open and works
    for the next connection."""
    client_http, _requests = recorded
    events: list[Event] = []
    outcomes: dict[str, object] = {}
    policy = TimeoutPolicy(idle=20, maximum=60)
    transport = http(sse_server, client=client_http, max_message_size=4096)
    async with Client(transport, timeout=policy, on_event=events.append) as client:
        cancel_scope = anyio.CancelScope()

        async def cancelled_by_the_caller() -> None:
            with cancel_scope:
                await client.call_tool("silent", {"seconds": 30, "tag": "iso-cancelled"})
            outcomes["cancelled"] = cancel_scope.cancelled_caught

        async def timed_out() -> None:
            with pytest.raises(MaxTimeout):
                await client.call_tool("silent", {"seconds": 30, "tag": "iso-timeout"}, timeout=1.0)
            outcomes["timed out"] = True

        async def refused() -> None:
            result = await client.call_tool("no_such_tool", {})
            outcomes["refused"] = result.is_error

        async def too_large() -> None:
            with pytest.raises(ProtocolError, match="4096-byte limit"):
                await client.call_tool("echo", {"text": "x" * 10_000})
            outcomes["too large"] = True

        async def with_progress() -> None:
            result = await client.call_tool("slow_progress", {"seconds": 1.5, "interval": 0.1, "tag": "iso-ok"})
            outcomes["progress"] = result.content[0].text  # type: ignore[union-attr]

        async with anyio.create_task_group() as tg:
            for work in (cancelled_by_the_caller, timed_out, refused, too_large, with_progress):
                tg.start_soon(work)
            await anyio.sleep(0.5)
            cancel_scope.cancel()
        lines = await _wait_for_line(events_file, "iso-timeout cancelled")
        lines = await _wait_for_line(events_file, "iso-cancelled cancelled")
    assert outcomes == {
        "cancelled": True,
        "timed out": True,
        "refused": True,
        "too large": True,
        "progress": "done",
    }
    assert {"iso-cancelled cancelled", "iso-timeout cancelled", "iso-ok completed"} <= set(lines)
    assert not client_http.is_closed
    async with Client(http(sse_server, client=client_http), timeout=policy) as again:
        assert (await again.call_tool("echo", {"text": "again"})).content[0].text == "again"  # type: ignore[union-attr]
