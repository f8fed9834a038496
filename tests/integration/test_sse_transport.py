"""The HTTP+SSE transport (2024-11-05) against a scripted server in the test's loop (see ``sse_peer.py``).

The policy holds there as everywhere: idle reset by progress, the hard maximum, ``notifications/cancelled`` on
give-up, late answers dropped as events, server requests, a dropped stream failing the calls waiting on it (and
the next call starting a new session on a new stream). The endpoint event is checked (same origin only), and
``http(url)`` falls back to HTTP+SSE by itself when its first POST is refused and the GET opens such a stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import httpx2
import mcp_types
import pytest

from mcp_client import (
    CancelMethod,
    CancelSent,
    Client,
    ConnectError,
    Event,
    IdleTimeout,
    LateMessage,
    MaxTimeout,
    ProtocolError,
    ProtocolViolation,
    TimeoutPolicy,
    TransportError,
    http,
    sse,
)
from mcp_client.auth import ClientCredentials, OAuth
from mcp_client.protocol.negotiate import ERA_CACHE
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.sse._endpoint import KNOWN_SSE_ENDPOINTS
from tests.integration.sse_peer import SsePeer

pytestmark = pytest.mark.anyio

SSE_URL = "http://sse.test/sse"


@pytest.fixture
async def served() -> AsyncIterator[tuple[SsePeer, httpx2.AsyncClient]]:
    peer = SsePeer(ScriptedPeer(era="legacy"))
    KNOWN_SSE_ENDPOINTS.forget(SSE_URL)
    ERA_CACHE.forget(SSE_URL)
    async with peer.serving() as client:
        yield peer, client
    KNOWN_SSE_ENDPOINTS.forget(SSE_URL)
    ERA_CACHE.forget(SSE_URL)


def _posted(peer: SsePeer) -> list[tuple[str, str | None]]:
    """(path and query, JSON-RPC method) of every POST the client made."""
    out = []
    for request in peer.requests:
        if request.method == "POST":
            target = request.url.raw_path.decode()
            out.append((target, json.loads(request.content).get("method")))
    return out


async def test_a_session_over_http_sse(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    """GET the stream, POST initialize to the endpoint it names (no discover probe), call a tool, list tools."""
    peer, client_http = served
    async with Client(sse(SSE_URL, client=client_http)) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("echo", {"text": "over sse"})
        assert {"echo", "slow"} <= {tool.name for tool in await client.list_tools()}
    assert result.content[0].text == "over sse"  # type: ignore[union-attr]
    assert peer.requests[0].method == "GET"
    assert peer.requests[0].headers["accept"] == "text/event-stream"
    posted = _posted(peer)
    assert posted[:2] == [
        ("/messages?session_id=1", "initialize"),
        ("/messages?session_id=1", "notifications/initialized"),
    ]
    assert "server/discover" not in [method for _, method in posted]
    assert not client_http.is_closed  # a caller's client is left open


@pytest.mark.fake_clock
async def test_the_idle_timeout_posts_notifications_cancelled(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    peer, client_http = served
    events: list[Event] = []
    policy = TimeoutPolicy(idle=1.0, maximum=30)
    async with Client(sse(SSE_URL, client=client_http), timeout=policy, on_event=events.append) as client:
        started = anyio.current_time()
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", {})
        assert anyio.current_time() - started == pytest.approx(1.0)
        await anyio.sleep(0.1)
        assert (await client.call_tool("echo", {"text": "next"})).content[0].text == "next"  # type: ignore[union-attr]
    (request_id,) = caught.value.request_ids
    assert [(e.request_id, e.how) for e in events if isinstance(e, CancelSent)] == [
        (request_id, CancelMethod.NOTIFICATION)
    ]
    assert request_id in peer.peer.stats.cancelled_request_ids
    assert ("/messages?session_id=1", "notifications/cancelled") in _posted(peer)


@pytest.mark.fake_clock
async def test_progress_resets_idle_and_the_maximum_still_ends_the_call(
    served: tuple[SsePeer, httpx2.AsyncClient],
) -> None:
    _peer, client_http = served
    seen: list[float] = []
    policy = TimeoutPolicy(idle=1.0, maximum=4.0)
    async with Client(sse(SSE_URL, client=client_http), timeout=policy) as client:
        result = await client.call_tool(
            "slow", {"seconds": 3, "progress_every": 0.5}, on_progress=lambda p: seen.append(p.progress)
        )
        assert result.content[0].text == "done"  # type: ignore[union-attr]
        assert seen == sorted(seen)
        assert len(seen) >= 5
        started = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("chatty", {"interval": 0.2})
        assert anyio.current_time() - started == pytest.approx(4.0)


@pytest.mark.fake_clock
async def test_an_answer_after_the_maximum_is_only_a_late_message(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    _peer, client_http = served
    events: list[Event] = []
    async with Client(sse(SSE_URL, client=client_http), on_event=events.append) as client:
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("ignore_cancel", {"seconds": 2}, timeout=TimeoutPolicy(idle=None, maximum=1))
        await anyio.sleep(2)
        assert (await client.call_tool("echo", {"text": "fine"})).content[0].text == "fine"  # type: ignore[union-attr]
    late = [e for e in events if isinstance(e, LateMessage)]
    assert [e.request_id for e in late] == [caught.value.request_ids[0]]


async def test_server_requests_are_answered_by_post(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    """elicitation/create arrives on the stream; the answer is POSTed to the endpoint."""
    peer, client_http = served

    async def elicitation(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(sse(SSE_URL, client=client_http), elicitation=elicitation) as client:
        result = await client.call_tool("elicit_client", {"kind": "elicitation"})
    assert not result.is_error
    assert "Ada" in result.content[0].text  # type: ignore[union-attr]
    assert ("/messages?session_id=1", None) in _posted(peer)  # the response to the server's request


@pytest.mark.fake_clock
async def test_a_dropped_stream_fails_the_waiting_call_and_the_next_call_reconnects(
    served: tuple[SsePeer, httpx2.AsyncClient],
) -> None:
    peer, client_http = served
    failures: list[TransportError] = []
    async with Client(sse(SSE_URL, client=client_http), timeout=TimeoutPolicy(idle=None, maximum=60)) as client:

        async def waiting() -> None:
            with pytest.raises(TransportError) as caught:
                await client.call_tool("silent", {})
            failures.append(caught.value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(1)
            started = anyio.current_time()
            peer.drop()
        assert anyio.current_time() - started < 0.1  # at once, not at the maximum
        assert (await client.call_tool("echo", {"text": "again"})).content[0].text == "again"  # type: ignore[union-attr]
    (failure,) = failures
    assert failure.written is True
    assert "ended" in str(failure)
    assert peer.sessions_opened == 2
    initializes = [target for target, method in _posted(peer) if method == "initialize"]
    assert initializes == ["/messages?session_id=1", "/messages?session_id=2"]


async def test_a_post_answered_404_starts_a_new_session_and_sends_the_call_once_more(
    served: tuple[SsePeer, httpx2.AsyncClient],
) -> None:
    peer, client_http = served
    async with Client(sse(SSE_URL, client=client_http)) as client:
        assert (await client.call_tool("echo", {"text": "one"})).content[0].text == "one"  # type: ignore[union-attr]
        peer.forget()
        assert (await client.call_tool("echo", {"text": "two"})).content[0].text == "two"  # type: ignore[union-attr]
    calls = [target for target, method in _posted(peer) if method == "tools/call"]
    assert calls == ["/messages?session_id=1", "/messages?session_id=1", "/messages?session_id=2"]
    assert peer.sessions_opened == 2


async def test_the_stateless_protocol_is_refused_over_http_sse(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    _peer, client_http = served
    with pytest.raises(ConnectError, match="not carried over this transport"):
        async with Client(sse(SSE_URL, client=client_http), protocol="2026-07-28"):
            pass


async def test_oauth_signs_in_on_the_get_and_every_post_carries_the_token() -> None:
    """``auth=``: the GET is refused with 401, OAuth discovers the authorization server, gets a token (client
    credentials), and the stream and every POST carry it."""
    issued: list[str] = []

    def resource_metadata(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"resource": SSE_URL, "authorization_servers": ["http://sse.test"]})

    def server_metadata(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            json={
                "issuer": "http://sse.test",
                "authorization_endpoint": "http://sse.test/authorize",
                "token_endpoint": "http://sse.test/token",
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            },
        )

    def token(request: httpx2.Request) -> httpx2.Response:
        issued.append(request.content.decode())
        return httpx2.Response(200, json={"access_token": "t0ken", "token_type": "Bearer", "expires_in": 3600})

    routes = {
        "/.well-known/oauth-protected-resource/sse": resource_metadata,
        "/.well-known/oauth-authorization-server": server_metadata,
        "/token": token,
    }
    peer = SsePeer(ScriptedPeer(era="legacy"), bearer="t0ken", routes=routes)
    async with peer.serving() as client_http:
        auth = OAuth(ClientCredentials("m2m", client_secret="s", issuer="http://sse.test"), http_client=client_http)
        async with Client(sse(SSE_URL, client=client_http, auth=auth)) as client:
            assert (await client.call_tool("echo", {"text": "signed in"})).content[0].text == "signed in"  # type: ignore[union-attr]
    assert len(issued) == 1
    assert "grant_type=client_credentials" in issued[0]
    gets = [r for r in peer.requests if r.method == "GET" and r.url.path == "/sse"]
    assert len(gets) == 2  # (one request object, re-sent by the auth flow with the token)
    assert gets[-1].headers["authorization"] == "Bearer t0ken"
    assert peer.unauthorized == ["GET /sse"]
    posts = [r for r in peer.requests if r.url.path == "/messages"]
    assert posts
    assert all(r.headers["authorization"] == "Bearer t0ken" for r in posts)


@pytest.mark.parametrize("kind", ["sampling", "roots"])
async def test_sampling_and_roots_are_answered_by_post(kind: str, served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    _peer, client_http = served

    async def sampling(params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="Paris"), model="scripted"
        )

    async def roots(params: mcp_types.RequestParams) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(
            roots=[mcp_types.Root.model_validate({"uri": "file:///projects/demo", "name": "demo"})]
        )

    async with Client(sse(SSE_URL, client=client_http), sampling=sampling, roots=roots) as client:
        result = await client.call_tool("elicit_client", {"kind": kind})
    assert not result.is_error
    assert ("Paris" if kind == "sampling" else "file:///projects/demo") in result.content[0].text  # type: ignore[union-attr]


async def test_an_older_handshake_version_is_spoken_too(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    peer, client_http = served
    async with Client(sse(SSE_URL, client=client_http), protocol="2024-11-05") as client:
        assert client.protocol_version == "2024-11-05"
        assert (await client.call_tool("echo", {"text": "old"})).content[0].text == "old"  # type: ignore[union-attr]
    (initialize,) = [r for r in peer.requests if r.method == "POST" and b'"initialize"' in r.content]
    assert json.loads(initialize.content)["params"]["protocolVersion"] == "2024-11-05"


async def test_an_endpoint_on_another_origin_is_refused() -> None:
    peer = SsePeer(ScriptedPeer(era="legacy"), endpoint="http://elsewhere.test/messages?session_id={id}")
    async with peer.serving() as client_http:
        with pytest.raises(ConnectError, match="another origin"):
            async with Client(sse(SSE_URL, client=client_http)):
                pass
    assert [request.method for request in peer.requests] == ["GET"]  # nothing was POSTed anywhere


async def test_a_stream_that_does_not_start_with_endpoint_is_not_http_sse() -> None:
    peer = SsePeer(ScriptedPeer(era="legacy"), first_event=b"event: message\ndata: {}\n\n")
    async with peer.serving() as client_http:
        with pytest.raises(ConnectError, match="not 'endpoint'"):
            async with Client(sse(SSE_URL, client=client_http)):
                pass


async def test_http_falls_back_when_the_remembered_era_is_legacy(
    served: tuple[SsePeer, httpx2.AsyncClient],
) -> None:
    """With the era remembered but not the transport (another process's cache, say), the refused POST is
    initialize: it is sent again over the stream, since a refused request did not run."""
    peer, client_http = served
    ERA_CACHE.remember(SSE_URL, "2025-11-25")
    async with Client(http(SSE_URL, client=client_http)) as client:
        assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]
    first = [(r.method, r.url.path, json.loads(r.content).get("method") if r.content else None) for r in peer.requests]
    assert first[:3] == [("POST", "/sse", "initialize"), ("GET", "/sse", None), ("POST", "/messages", "initialize")]
    assert peer.sessions_opened == 1


async def test_http_falls_back_to_http_sse_and_remembers_it(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    """The first POST is refused with 405; the GET's first event is endpoint: HTTP+SSE from then on. The next
    connection goes straight to the GET and to initialize (the era cache and the transport remember)."""
    peer, client_http = served
    async with Client(http(SSE_URL, client=client_http)) as client:
        assert client.protocol_version == "2025-11-25"
        assert (await client.call_tool("echo", {"text": "fell back"})).content[0].text == "fell back"  # type: ignore[union-attr]
    first = [(r.method, r.url.path) for r in peer.requests]
    assert first[:3] == [("POST", "/sse"), ("GET", "/sse"), ("POST", "/messages")]
    assert json.loads(peer.requests[0].content)["method"] == "server/discover"
    assert json.loads(peer.requests[2].content)["method"] == "initialize"
    peer.requests.clear()
    async with Client(http(SSE_URL, client=client_http)) as client:
        assert (await client.call_tool("echo", {"text": "direct"})).content[0].text == "direct"  # type: ignore[union-attr]
    assert (peer.requests[0].method, peer.requests[0].url.path) == ("GET", "/sse")
    assert [method for _, method in _posted(peer)][:1] == ["initialize"]
    assert not [r for r in peer.requests if r.method == "POST" and r.url.path == "/sse"]


@pytest.mark.fake_clock
async def test_the_fallback_gives_up_on_a_quiet_get_stream() -> None:
    """A refused POST whose GET opens an event stream that stays quiet (a Streamable HTTP server's GET stream may):
    after 5 s the refusal stands, as without the fallback; the connect does not hang."""
    peer = SsePeer(ScriptedPeer(era="legacy"), first_event=b": nothing to say\n\n")
    ERA_CACHE.forget(SSE_URL)
    async with peer.serving() as client_http:
        started = anyio.current_time()
        with pytest.raises(ConnectError):
            async with Client(http(SSE_URL, client=client_http), timeout=TimeoutPolicy(connect=60), probe_timeout=20):
                pass
        assert anyio.current_time() - started == pytest.approx(5.0)
    assert SSE_URL not in KNOWN_SSE_ENDPOINTS
    ERA_CACHE.forget(SSE_URL)


def _streamable_legacy_server(requests: list[tuple[str, str | None]]) -> httpx2.MockTransport:
    """A Streamable HTTP server of 2025-11-25 that refuses the probe with 400 and a JSON-RPC error, as
    server-everything does, and has no GET stream (405)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        method = json.loads(request.content).get("method") if request.content else None
        requests.append((request.method, method))
        if request.method != "POST":
            return httpx2.Response(405)
        if method == "server/discover":
            error = {"code": -32000, "message": "Bad Request: Server not initialized"}
            return httpx2.Response(400, json={"jsonrpc": "2.0", "id": None, "error": error})
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
            body = {"jsonrpc": "2.0", "id": json.loads(request.content)["id"], "result": result}
            return httpx2.Response(200, json=body, headers={"mcp-session-id": "s1"})
        return httpx2.Response(202)

    return httpx2.MockTransport(handler)


async def test_a_refusal_in_json_rpc_is_no_cue_to_fall_back() -> None:
    """The probe refused with 400 and a JSON-RPC error: a server speaking JSON-RPC at this URL, so no GET is tried
    before initialize."""
    requests: list[tuple[str, str | None]] = []
    url = "http://streamable.test/mcp"
    ERA_CACHE.forget(url)
    client_http = httpx2.AsyncClient(transport=_streamable_legacy_server(requests))
    async with client_http, Client(http(url, client=client_http)) as client:
        assert client.protocol_version == "2025-11-25"
    ERA_CACHE.forget(url)
    assert requests[:2] == [("POST", "server/discover"), ("POST", "initialize")]
    assert url not in KNOWN_SSE_ENDPOINTS


async def test_a_url_that_no_longer_speaks_http_sse_is_forgotten() -> None:
    """Remembered as HTTP+SSE, the URL's GET is now refused: it is forgotten and the client POSTs as usual."""
    requests: list[tuple[str, str | None]] = []
    url = "http://upgraded.test/mcp"
    ERA_CACHE.forget(url)
    KNOWN_SSE_ENDPOINTS.remember(url)
    client_http = httpx2.AsyncClient(transport=_streamable_legacy_server(requests))
    async with client_http, Client(http(url, client=client_http)) as client:
        assert client.protocol_version == "2025-11-25"
    ERA_CACHE.forget(url)
    assert requests[:3] == [("GET", None), ("POST", "server/discover"), ("POST", "initialize")]
    assert url not in KNOWN_SSE_ENDPOINTS


async def test_broken_messages_on_the_stream_fail_only_what_they_answer(
    served: tuple[SsePeer, httpx2.AsyncClient],
) -> None:
    """Garbage on the shared stream is reported and skipped; an oversized answer fails its own call at once
    (its head names it) with ProtocolError; the calls beside them and the connection are unharmed."""
    _peer, client_http = served
    events: list[Event] = []
    transport = sse(SSE_URL, client=client_http, max_message_size=4096)
    async with Client(transport, timeout=TimeoutPolicy(idle=None, maximum=60), on_event=events.append) as client:
        assert (await client.call_tool("garbage", {})).content[0].text == "survived"  # type: ignore[union-attr]
        with pytest.raises(ProtocolError, match="4096-byte limit"):
            await client.call_tool("huge", {"size": 10_000})
        assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"  # type: ignore[union-attr]
    assert len([e for e in events if isinstance(e, ProtocolViolation)]) >= 2


@pytest.mark.fake_clock
async def test_many_calls_in_flight_share_the_stream(served: tuple[SsePeer, httpx2.AsyncClient]) -> None:
    """Forty calls with progress at once: every answer and every progress reaches its own call."""
    _peer, client_http = served
    results: dict[int, str] = {}
    progress: dict[int, list[float]] = {}
    async with Client(sse(SSE_URL, client=client_http), timeout=TimeoutPolicy(idle=2, maximum=60)) as client:

        async def one(index: int) -> None:
            seen = progress.setdefault(index, [])
            result = await client.call_tool(
                "slow", {"seconds": 1 + index % 3, "progress_every": 0.5}, on_progress=lambda p: seen.append(p.progress)
            )
            results[index] = result.content[0].text  # type: ignore[union-attr]

        async with anyio.create_task_group() as tg:
            for index in range(40):
                tg.start_soon(one, index)
    assert results == dict.fromkeys(range(40), "done")
    for index, seen in progress.items():
        assert seen == sorted(seen)
        assert seen[-1] == 2 * (1 + index % 3)  # the last of its own progress, none of another call's
