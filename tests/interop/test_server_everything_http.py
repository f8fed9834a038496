"""Interop over Streamable HTTP with ``@modelcontextprotocol/server-everything`` (``streamableHttp`` mode), which
speaks 2025-11-25 with sessions.

Each test starts ``node dist/index.js streamableHttp`` with ``PORT=<free port>`` and talks to it through a
caller-supplied ``httpx.AsyncClient`` whose hooks record every request and response. The server's long-running
tool ignores cancellation (it keeps running, sending progress for the cancelled token), so a cancellation is
confirmed by what is observable: the ``notifications/cancelled`` POST accepted with 202, no answer to that id after
the tool's duration, and the session still working. Real process, real clock, wide margins.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator

import anyio
import httpx
import pytest

from mcp_client import (
    CancelMethod,
    CancelSent,
    Client,
    Event,
    IdleTimerReset,
    MaxTimeout,
    ProtocolViolation,
    TimeoutPolicy,
    TransportFailure,
)
from mcp_client.transports.http import http
from tests.interop.conftest import free_port, serve_http

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

Exchange = tuple[httpx.Request, httpx.Response]


@pytest.fixture
def everything_url(server_everything_command: list[str]) -> Iterator[str]:
    """URL of a server-everything started in streamableHttp mode on a free port (killed after the test)."""
    port = free_port()
    command = [*server_everything_command[:-1], "streamableHttp"]
    yield from serve_http(command, port, dict(os.environ, PORT=str(port)), "server-everything")


@pytest.fixture
async def recorded() -> AsyncIterator[tuple[httpx.AsyncClient, list[Exchange]]]:
    """An httpx client that records every (request, response) pair it completes."""
    exchanges: list[Exchange] = []

    async def record(response: httpx.Response) -> None:
        exchanges.append((response.request, response))

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=20)
    timeout = httpx.Timeout(connect=30, read=None, write=30, pool=None)
    async with httpx.AsyncClient(event_hooks={"response": [record]}, limits=limits, timeout=timeout) as client:
        yield client, exchanges


def _posted(exchanges: list[Exchange], method: str) -> list[Exchange]:
    return [(q, r) for q, r in exchanges if q.method == "POST" and json.loads(q.content).get("method") == method]


async def test_session_echo_and_delete_on_close(
    everything_url: str, recorded: tuple[httpx.AsyncClient, list[Exchange]]
) -> None:
    """discover is refused, initialize gives a session id that every later request carries; the GET stream is
    opened; echo works; closing the client DELETEs the session."""
    client_http, exchanges = recorded
    events: list[Event] = []
    policy = TimeoutPolicy(idle=20, maximum=60)
    async with Client(http(everything_url, client=client_http), timeout=policy, on_event=events.append) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None
        assert "echo" in {tool.name for tool in await client.list_tools()}
        result = await client.call_tool("echo", {"message": "over http"})
        assert not result.is_error
        assert "over http" in " ".join(getattr(block, "text", "") for block in result.content)
    ((initialize, answer),) = _posted(exchanges, "initialize")
    session_id = answer.headers["mcp-session-id"]
    assert "Mcp-Session-Id" not in initialize.headers
    for request, _ in [*_posted(exchanges, "notifications/initialized"), *_posted(exchanges, "tools/call")]:
        assert request.headers["Mcp-Session-Id"] == session_id
        assert request.headers["MCP-Protocol-Version"] == "2025-11-25"
    gets = [(q, r) for q, r in exchanges if q.method == "GET"]
    assert gets
    assert gets[0][0].headers["Mcp-Session-Id"] == session_id
    assert gets[0][1].status_code == 200
    deletes = [(q, r) for q, r in exchanges if q.method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0][0].headers["Mcp-Session-Id"] == session_id
    assert deletes[0][1].status_code == 200
    assert not [e for e in events if isinstance(e, TransportFailure | ProtocolViolation)]


async def test_progress_resets_idle_so_a_long_operation_succeeds(http_engine: str, everything_url: str) -> None:
    """A 3 s operation with progress every 0.2 s succeeds under a 1 s idle timeout (progress on the POST's SSE)."""
    events: list[Event] = []
    seen: list[float] = []
    policy = TimeoutPolicy(idle=1.0, maximum=30)
    async with Client(http(everything_url), timeout=policy, on_event=events.append) as client:
        result = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 3, "steps": 15},
            on_progress=lambda p: seen.append(p.progress),
        )
    assert not result.is_error
    assert sum(isinstance(e, IdleTimerReset) for e in events) >= 10
    assert seen == sorted(seen)
    assert seen[-1] == 15


async def test_cancelled_call_is_posted_and_never_answered(
    everything_url: str, recorded: tuple[httpx.AsyncClient, list[Exchange]]
) -> None:
    """MaxTimeout: notifications/cancelled is POSTed with the session (202) and the stream closed; that id is never
    answered, even after the operation's own end; the session keeps working."""
    client_http, exchanges = recorded
    events: list[Event] = []
    policy = TimeoutPolicy(idle=5, maximum=1.2)
    async with Client(http(everything_url, client=client_http), timeout=policy, on_event=events.append) as client:
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("trigger-long-running-operation", {"duration": 2.5, "steps": 10})
        (request_id,) = caught.value.request_ids
        await anyio.sleep(2.5)  # past the operation's own end: an uncancelled call would have been answered by now
        assert not (await client.call_tool("echo", {"message": "after"}, timeout=10)).is_error
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [(c.request_id, c.how) for c in cancels] == [(request_id, CancelMethod.NOTIFICATION_AND_STREAM_CLOSE)]
    ((cancel, accepted),) = _posted(exchanges, "notifications/cancelled")
    assert json.loads(cancel.content)["params"]["requestId"] == request_id
    assert cancel.headers["Mcp-Session-Id"]
    assert accepted.status_code == 202
    assert not [e for e in events if isinstance(e, TransportFailure)]
