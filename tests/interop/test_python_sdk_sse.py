"""Interop over HTTP+SSE (2024-11-05) with the official Python SDK's ``MCPServer.sse_app()`` (mcp 2.3.0) under uvicorn.

One ``python_sdk_server.py --sse --port <free port>`` (GET ``/sse``, POST ``/messages/``) serves the module; each
test tags its calls uniquely and talks to it through ``sse()`` or through ``http()``'s fallback, with a caller's
client that records every request. The policy is checked against the real server: progress resets idle, the
maximum holds, a timeout POSTs ``notifications/cancelled`` and the server's tool sees the cancellation (it writes
"<tag> cancelled" to the events file), elicitation is answered by POST, a cut stream fails the call waiting on it.
Real process, real clock, wide margins.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp_types
import pytest

from mcp_client import (
    CancelMethod,
    CancelSent,
    Client,
    ClientGroup,
    Event,
    IdleTimeout,
    IdleTimerReset,
    MaxTimeout,
    ProtocolViolation,
    RequestSent,
    TimeoutPolicy,
    TransportError,
    TransportFailure,
    http,
    sse,
)
from mcp_client.cli import main
from mcp_client.protocol.negotiate import ERA_CACHE
from mcp_client.transports.sse._endpoint import KNOWN_SSE_ENDPOINTS
from tests.interop.conftest import EVENTS_ENV, PYTHON_SDK_SERVER, free_port, serve_http
from tests.interop.proxy import CuttingProxy

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


@pytest.fixture(scope="module")
def sse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One HTTP+SSE server of the official SDK for the module (each test tags its calls uniquely): its ``/sse``
    URL and the file its tools write "<tag> completed|cancelled" to."""
    events = tmp_path_factory.mktemp("sse-server") / "events.txt"
    events.touch()
    port = free_port()
    env = dict(os.environ, **{EVENTS_ENV: str(events)})
    command = [sys.executable, str(PYTHON_SDK_SERVER), "--sse", "--port", str(port)]
    for url in serve_http(command, port, env, "the HTTP+SSE server"):
        yield url.removesuffix("/mcp") + "/sse", events


@pytest.fixture
def sse_url(sse_server: tuple[str, Path]) -> str:
    return sse_server[0]


@pytest.fixture
def server_events(sse_server: tuple[str, Path]) -> Path:
    return sse_server[1]


def _tag(name: str) -> str:
    """A tag no other test (or run on the other backend) uses on the shared server."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def recorded() -> AsyncIterator[tuple[httpx2.AsyncClient, list[httpx2.Request]]]:
    requests: list[httpx2.Request] = []

    async def record(request: httpx2.Request) -> None:
        requests.append(request)

    timeout = httpx2.Timeout(connect=30, read=None, write=30, pool=None)
    async with httpx2.AsyncClient(event_hooks={"request": [record]}, timeout=timeout) as client:
        yield client, requests


def _posted(requests: list[httpx2.Request], method: str | None) -> list[httpx2.Request]:
    return [r for r in requests if r.method == "POST" and json.loads(r.content).get("method") == method]


async def _wait_for_line(server_events: Path, line: str, within: float = 10.0) -> list[str]:
    with anyio.move_on_after(within):
        while line not in server_events.read_text().splitlines():
            await anyio.sleep(0.05)
    return server_events.read_text().splitlines()


async def test_a_session_over_sse(sse_url: str, recorded: tuple[httpx2.AsyncClient, list[httpx2.Request]]) -> None:
    """The handshake, a tool listing and a call; every POST goes to the endpoint the stream named."""
    client_http, requests = recorded
    async with Client(sse(sse_url, client=client_http), timeout=TimeoutPolicy(idle=20, maximum=60)) as client:
        assert client.protocol_version == "2025-11-25"
        assert {"echo", "slow_progress", "silent"} <= {tool.name for tool in await client.list_tools()}
        result = await client.call_tool("echo", {"text": "héllo"})
    assert result.content[0].text == "héllo"  # type: ignore[union-attr]
    assert (requests[0].method, requests[0].url.path) == ("GET", "/sse")
    posts = [r for r in requests if r.method == "POST"]
    assert posts
    assert {r.url.path for r in posts} == {"/messages/"}
    assert len({r.url.params["session_id"] for r in posts}) == 1
    assert not _posted(requests, "server/discover")


async def test_progress_resets_idle_and_the_maximum_holds(sse_url: str, server_events: Path) -> None:
    events: list[Event] = []
    seen: list[float] = []
    long, capped_tag = _tag("long"), _tag("capped")
    async with Client(sse(sse_url), timeout=TimeoutPolicy(idle=1.0, maximum=30), on_event=events.append) as client:
        result = await client.call_tool(
            "slow_progress",
            {"seconds": 2.5, "interval": 0.1, "tag": long},
            on_progress=lambda p: seen.append(p.progress),
        )
        assert not result.is_error
        assert sum(isinstance(e, IdleTimerReset) for e in events) >= 10
        assert len(seen) >= 2
        assert seen == sorted(seen)
        started = anyio.current_time()
        capped = TimeoutPolicy(idle=1.0, maximum=1.5)
        with pytest.raises(MaxTimeout):
            await client.call_tool("slow_progress", {"seconds": 30, "interval": 0.1, "tag": capped_tag}, timeout=capped)
        assert anyio.current_time() - started < 3.0
        lines = await _wait_for_line(server_events, f"{capped_tag} cancelled")
    assert f"{long} completed" in lines
    assert f"{capped_tag} cancelled" in lines


async def test_a_timeout_posts_the_cancel_and_the_server_cancels(
    sse_url: str, server_events: Path, recorded: tuple[httpx2.AsyncClient, list[httpx2.Request]]
) -> None:
    client_http, requests = recorded
    events: list[Event] = []
    quiet = _tag("quiet")
    policy = TimeoutPolicy(idle=1.0, maximum=30)
    async with Client(sse(sse_url, client=client_http), timeout=policy, on_event=events.append) as client:
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", {"seconds": 30, "tag": quiet})
        lines = await _wait_for_line(server_events, f"{quiet} cancelled")
        assert not (await client.call_tool("echo", {"text": "still here"})).is_error
    assert f"{quiet} cancelled" in lines
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [(c.request_id, c.how) for c in cancels] == [(caught.value.request_ids[0], CancelMethod.NOTIFICATION)]
    (cancel,) = _posted(requests, "notifications/cancelled")
    assert json.loads(cancel.content)["params"]["requestId"] == caught.value.request_ids[0]
    assert not [e for e in events if isinstance(e, TransportFailure | ProtocolViolation)]


async def test_elicitation_is_answered_over_the_endpoint(
    sse_url: str, recorded: tuple[httpx2.AsyncClient, list[httpx2.Request]]
) -> None:
    client_http, requests = recorded

    async def elicitation(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(sse(sse_url, client=client_http), elicitation=elicitation) as client:
        result = await client.call_tool("greet_asking", {"greeting": "hi"})
    assert result.content[0].text == "hi Ada"  # type: ignore[union-attr]
    (answer,) = _posted(requests, None)  # the response to the server's elicitation/create
    assert answer.url.path == "/messages/"
    assert json.loads(answer.content)["result"]["action"] == "accept"


async def test_http_falls_back_to_sse_by_itself(
    sse_url: str, server_events: Path, recorded: tuple[httpx2.AsyncClient, list[httpx2.Request]]
) -> None:
    """``http(sse_url)``: the probe's POST is refused (405), the GET opens the stream, the rest is HTTP+SSE;
    a timeout there is a POSTed cancel the server acts on. The next connection goes straight to the GET."""
    client_http, requests = recorded
    ERA_CACHE.forget(sse_url)
    KNOWN_SSE_ENDPOINTS.forget(sse_url)
    quiet = _tag("fallback-quiet")
    try:
        events: list[Event] = []
        policy = TimeoutPolicy(idle=1.0, maximum=30)
        async with Client(http(sse_url, client=client_http), timeout=policy, on_event=events.append) as client:
            assert client.protocol_version == "2025-11-25"
            assert (await client.call_tool("echo", {"text": "via http"})).content[0].text == "via http"  # type: ignore[union-attr]
            with pytest.raises(IdleTimeout):
                await client.call_tool("silent", {"seconds": 30, "tag": quiet})
            lines = await _wait_for_line(server_events, f"{quiet} cancelled")
        assert f"{quiet} cancelled" in lines
        assert [c.how for c in events if isinstance(c, CancelSent)] == [CancelMethod.NOTIFICATION]
        assert [(r.method, r.url.path) for r in requests[:2]] == [("POST", "/sse"), ("GET", "/sse")]
        requests.clear()
        async with Client(http(sse_url, client=client_http)) as client:
            assert (await client.call_tool("echo", {"text": "again"})).content[0].text == "again"  # type: ignore[union-attr]
        assert (requests[0].method, requests[0].url.path) == ("GET", "/sse")
        assert json.loads(requests[1].content)["method"] == "initialize"
    finally:
        ERA_CACHE.forget(sse_url)
        KNOWN_SSE_ENDPOINTS.forget(sse_url)


@pytest.mark.parametrize("key", ["type", "transport"])
async def test_an_mcp_json_sse_entry_through_a_client_group(sse_url: str, key: str) -> None:
    """``"type": "sse"`` as Claude Desktop and Cursor write it, through ``ClientGroup.from_config``."""
    config = {"mcpServers": {"old": {"url": sse_url, key: "sse"}}}
    async with ClientGroup.from_config(config) as group:
        result = await group.call_tool("old/echo", {"text": "from mcp.json"})
    assert result.content[0].text == "from mcp.json"  # type: ignore[union-attr]


def test_the_cli_reaches_an_http_sse_server_with_url(sse_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``mcp-client call --url`` is ``http()``: it falls back to HTTP+SSE by itself."""
    ERA_CACHE.forget(sse_url)
    KNOWN_SSE_ENDPOINTS.forget(sse_url)
    try:
        code = main(["call", "echo", '{"text": "from the terminal"}', "--url", sse_url])
    finally:
        ERA_CACHE.forget(sse_url)
        KNOWN_SSE_ENDPOINTS.forget(sse_url)
    assert code == 0
    assert "from the terminal" in capsys.readouterr().out


async def test_a_dropped_stream_fails_the_waiting_call_and_the_next_call_reconnects(sse_url: str) -> None:
    """The connections are cut under a call in flight (a proxy between): it fails at once with a written
    TransportError; the next call starts a new session on a new stream and succeeds."""
    upstream = urlsplit(sse_url).port
    assert upstream is not None
    failures: list[TransportError] = []
    async with CuttingProxy(upstream).serving() as proxy:
        url = f"http://127.0.0.1:{proxy.port}/sse"
        sent = anyio.Event()

        def on_event(event: Event) -> None:
            if isinstance(event, RequestSent) and event.method == "tools/call":
                sent.set()

        policy = TimeoutPolicy(idle=None, maximum=30)
        async with Client(sse(url), timeout=policy, on_event=on_event) as client:

            async def waiting() -> None:
                with pytest.raises(TransportError) as caught:
                    await client.call_tool("silent", {"seconds": 30, "tag": _tag("cut")})
                failures.append(caught.value)

            async with anyio.create_task_group() as tg:
                tg.start_soon(waiting)
                with anyio.fail_after(10):
                    await sent.wait()  # the call is POSTed: its answer would come on the stream cut now
                cut_at = anyio.current_time()
                assert proxy.cut_open() >= 1
            assert anyio.current_time() - cut_at < 5.0  # at once, not at the maximum
            result = await client.call_tool("echo", {"text": "reconnected"}, timeout=10)
    assert result.content[0].text == "reconnected"  # type: ignore[union-attr]
    (failure,) = failures
    assert failure.written is True


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05"])
async def test_an_older_handshake_version_over_sse(sse_url: str, version: str) -> None:
    """The versions before 2025-11-25 that such servers speak: the server agrees to the one asked for."""
    async with Client(sse(sse_url), protocol=version, timeout=TimeoutPolicy(idle=20, maximum=60)) as client:
        assert client.protocol_version == version
        result = await client.call_tool("echo", {"text": version})
    assert result.content[0].text == version  # type: ignore[union-attr]
