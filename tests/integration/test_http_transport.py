"""The Streamable HTTP transport against a scripted server: a mock transport inside a caller-supplied client of
either line (``httpx2.AsyncClient``, and httpx 0.28's ``httpx.AsyncClient``: every test runs with both), so every
status, content type and header is chosen by the test and nothing touches a socket.

Driven through the public ``Client``; tests without timing run on asyncio and on trio's fake clock.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx
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
    MethodNotFound,
    Progress,
    ProtocolError,
    ProtocolViolation,
    ServerError,
    TimeoutPolicy,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_client.transports._http_status import parse_retry_after
from mcp_client.transports.http import SessionExpired, encode_header_value, http
from tests.integration.http_lines import mock_client

pytestmark = pytest.mark.anyio

URL = "http://mcp.test/mcp"
POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)
DISCOVER_RESULT = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
INITIALIZE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}
Route = Callable[[dict[str, Any], httpx.Request], Awaitable[httpx.Response]]


def result(body: dict[str, Any], value: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": value})


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class SSE(httpx.AsyncByteStream):
    """An SSE body from raw chunks; optionally stays open afterwards. Records whether the client closed it."""

    def __init__(self, chunks: list[bytes], *, stay_open: bool = False) -> None:
        self.chunks = chunks
        self.stay_open = stay_open
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        if self.stay_open:
            await anyio.sleep_forever()

    async def aclose(self) -> None:
        self.closed = True


def sse_response(stream: SSE) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)


def event(message: dict[str, Any]) -> bytes:
    return b"event: message\r\ndata: " + json.dumps(message).encode() + b"\r\n\r\n"


class Server:
    """A scripted MCP endpoint: routes by method (``tools/call`` by ``tools/call:<name>``) and records every request."""

    def __init__(self, *, legacy: bool = False, session_id: str | None = "session-1") -> None:
        self.requests: list[httpx.Request] = []
        self.routes: dict[str, Route] = {}
        self.legacy = legacy
        self.session_id = session_id
        self.get: Callable[[httpx.Request], Awaitable[httpx.Response]] | None = None
        """Answers GETs (the standalone stream and resumptions); by default the server has none (405)."""

    def bodies(self, method: str | None = None) -> list[dict[str, Any]]:
        found = [json.loads(r.content) for r in self.requests if r.method == "POST"]
        return [b for b in found if method is None or b.get("method") == method]

    def gets(self, *, resuming: bool | None = None) -> list[httpx.Request]:
        found = [r for r in self.requests if r.method == "GET"]
        return [r for r in found if resuming is None or ("Last-Event-ID" in r.headers) == resuming]

    def posts(self, method: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == "POST" and json.loads(r.content).get("method") == method]

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "DELETE":
            return httpx.Response(200)
        if request.method == "GET":
            return await self.get(request) if self.get is not None else httpx.Response(405)
        body = json.loads(request.content)
        method = body.get("method")
        if "id" not in body or method is None:
            return httpx.Response(202)
        key = f"tools/call:{body['params']['name']}" if method == "tools/call" else method
        if key in self.routes:
            return await self.routes[key](body, request)
        if method == "server/discover":
            if self.legacy:
                return httpx.Response(404)
            return result(body, DISCOVER_RESULT)
        if method == "initialize":
            headers = {"mcp-session-id": self.session_id} if self.session_id else {}
            return httpx.Response(
                200, headers=headers, json={"jsonrpc": "2.0", "id": body["id"], "result": INITIALIZE_RESULT}
            )
        if method == "tools/call" and body["params"]["name"] == "echo":
            return result(body, text_result(body["params"].get("arguments", {}).get("text", "")))
        return httpx.Response(404, json={"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "nope"}})


def client_for(server: Server, http_client: httpx.AsyncClient, events: list[Event], **options: Any) -> Client:
    options.setdefault("protocol", "2026-07-28")
    options.setdefault("timeout", POLICY)
    return Client(
        http(URL, client=http_client, headers={"Authorization": "Bearer t"}), on_event=events.append, **options
    )


@pytest.fixture
def server() -> Server:
    return Server()


@pytest.fixture
async def http_client(server: Server, http_line: str) -> AsyncIterator[httpx.AsyncClient]:
    async with mock_client(http_line, server) as client:
        yield client


@pytest.fixture
def events() -> list[Event]:
    return []


# -- answers ---------------------------------------------------------------------------------------------------


async def test_json_answer_and_modern_headers(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """A JSON answer is the result; every POST carries the 2026 routing headers taken from its body."""
    async with client_for(server, http_client, events) as client:
        assert client.protocol_version == "2026-07-28"
        answer = await client.call_tool("echo", {"text": "hello"})
    assert answer.content[0].text == "hello"  # type: ignore[union-attr]
    (discover,) = server.posts("server/discover")
    assert discover.headers["MCP-Protocol-Version"] == "2026-07-28"
    assert discover.headers["Mcp-Method"] == "server/discover"
    assert "Mcp-Name" not in discover.headers
    (call,) = server.posts("tools/call")
    assert call.headers["MCP-Protocol-Version"] == "2026-07-28"
    assert call.headers["Mcp-Method"] == "tools/call"
    assert call.headers["Mcp-Name"] == "echo"
    assert call.headers["Accept"] == "application/json, text/event-stream"
    assert call.headers["Content-Type"] == "application/json"
    assert call.headers["Authorization"] == "Bearer t"
    assert "Mcp-Session-Id" not in call.headers
    assert not [r for r in server.requests if r.method != "POST"]  # no GET, no DELETE at 2026-07-28


async def test_sse_answer_with_progress_keepalives_and_priming(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """SSE: comments and empty-data events are skipped, progress reaches the caller, the result ends the call."""

    async def reindex(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        token = body["params"]["_meta"]["progressToken"]
        progress = {"progressToken": token, "progress": 1, "total": 2, "message": "half"}
        chunks = [
            b": keep-alive\r\n\r\n",
            b"id: prime-1\r\ndata:\r\n\r\n",
            event({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}),
            b": ping\r\n\r\n",
            event({"jsonrpc": "2.0", "id": body["id"], "result": text_result("done")}),
        ]
        return sse_response(SSE(chunks))

    server.routes["tools/call:reindex"] = reindex
    seen: list[Progress] = []
    async with client_for(server, http_client, events, progress_interval=0) as client:
        answer = await client.call_tool("reindex", on_progress=seen.append)
    assert answer.content[0].text == "done"  # type: ignore[union-attr]
    assert [(p.progress, p.total, p.message) for p in seen] == [(1.0, 2.0, "half")]


async def test_protocol_headers_win_over_the_callers_in_any_case(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """Header names are case-insensitive: a caller's ``ACCEPT`` or ``mcp-method`` is replaced, not sent twice."""
    headers = {"ACCEPT": "text/plain", "mcp-method": "forged", "X-Trace": "abc"}
    transport = http(URL, client=http_client, headers=headers)
    async with Client(transport, protocol="2026-07-28", timeout=POLICY, on_event=events.append) as client:
        await client.call_tool("echo", {"text": "x"})
    (call,) = server.posts("tools/call")
    assert call.headers.get_list("accept") == ["application/json, text/event-stream"]
    assert call.headers.get_list("mcp-method") == ["tools/call"]
    assert call.headers["x-trace"] == "abc"


async def test_a_compressed_sse_answer_is_decoded(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """An SSE body sent with ``Content-Encoding: gzip`` goes through httpx's decoder before ours."""

    async def gzipped(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        raw = event({"jsonrpc": "2.0", "id": body["id"], "result": text_result("unzipped")})
        headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
        return httpx.Response(200, headers=headers, content=gzip.compress(raw))

    server.routes["tools/call:zipped"] = gzipped
    async with client_for(server, http_client, events) as client:
        answer = await client.call_tool("zipped")
    assert answer.content[0].text == "unzipped"  # type: ignore[union-attr]


async def test_name_header_is_base64_for_non_ascii_and_sentinel_values(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """Mcp-Name: base64 for non-ASCII names and for URIs that would look encoded; prompts/get and resources/read."""

    async def anything(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        return result(body, text_result("ok"))

    server.routes["tools/call:Hello, 世界"] = anything
    server.routes["resources/read"] = lambda body, request: _async(result(body, {"contents": []}))
    server.routes["prompts/get"] = lambda body, request: _async(result(body, {"messages": []}))
    async with client_for(server, http_client, events) as client:
        await client.call_tool("Hello, 世界")
        await client.read_resource("=?base64?abc?=")
        await client.get_prompt("plain name")
    assert server.posts("tools/call")[0].headers["Mcp-Name"] == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert server.posts("resources/read")[0].headers["Mcp-Name"] == "=?base64?PT9iYXNlNjQ/YWJjPz0=?="
    assert server.posts("prompts/get")[0].headers["Mcp-Name"] == "plain name"


async def _async(response: httpx.Response) -> httpx.Response:
    return response


def test_header_value_encoding() -> None:
    """The spec's examples: safe values travel plain, others as =?base64?...?=."""
    assert encode_header_value("execute_sql") == "execute_sql"
    assert encode_header_value("with inner space") == "with inner space"
    # A tab is a control character to the conformance suite and the reference SDK: always encoded.
    assert encode_header_value("a\tb") == "=?base64?YQli?="
    assert encode_header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_header_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_header_value("line\nbreak") == "=?base64?bGluZQpicmVhaw==?="
    assert encode_header_value("=?base64?SGk=?=") == "=?base64?PT9iYXNlNjQ/U0drPT89?="


# -- HTTP errors -----------------------------------------------------------------------------------------------


async def test_400_with_unsupported_version_body_is_a_typed_error(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """A JSON-RPC error in a 400 body reaches the session as the answer to the request (id substituted)."""

    async def refuse(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        error = {"code": -32022, "message": "unsupported", "data": {"supported": ["2027-01-01"]}}
        return httpx.Response(400, json={"jsonrpc": "2.0", "id": None, "error": error})

    server.routes["tools/call:picky"] = refuse
    async with client_for(server, http_client, events) as client:
        with pytest.raises(UnsupportedProtocolVersion) as caught:
            await client.call_tool("picky")
        assert (await client.call_tool("echo", {"text": "still fine"})).content[0].text == "still fine"  # type: ignore[union-attr]
    assert caught.value.supported == ["2027-01-01"]


async def test_auto_falls_back_to_initialize_on_400_unsupported_version(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """The era probe: -32022 at 400 naming only a legacy version → initialize, then legacy headers."""

    async def refuse(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        error = {"code": -32022, "message": "unsupported", "data": {"supported": ["2025-11-25"]}}
        return httpx.Response(400, json={"jsonrpc": "2.0", "error": error})

    server.routes["server/discover"] = refuse
    async with client_for(server, http_client, events, protocol="auto") as client:
        assert client.protocol_version == "2025-11-25"
        await client.call_tool("echo", {"text": "x"})
    assert server.posts("tools/call")[0].headers["Mcp-Session-Id"] == "session-1"


async def test_auto_falls_back_on_bare_404_and_speaks_legacy_http(http_line: str, events: list[Event]) -> None:
    """404 without a body on server/discover → initialize; then session id, chosen version, and DELETE on close."""
    server = Server(legacy=True)
    async with mock_client(http_line, server) as http_client:
        async with client_for(server, http_client, events, protocol="auto") as client:
            assert client.protocol_version == "2025-11-25"
            await client.call_tool("echo", {"text": "x"})
        (initialize,) = server.posts("initialize")
        assert "MCP-Protocol-Version" not in initialize.headers
        assert "Mcp-Session-Id" not in initialize.headers
        for later in [*server.posts("notifications/initialized"), *server.posts("tools/call")]:
            assert later.headers["MCP-Protocol-Version"] == "2025-11-25"
            assert later.headers["Mcp-Session-Id"] == "session-1"
            assert "Mcp-Method" not in later.headers
        (delete,) = [r for r in server.requests if r.method == "DELETE"]
        assert delete.headers["Mcp-Session-Id"] == "session-1"
        assert server.requests[-1] is delete


async def test_bare_404_and_405_are_method_not_found(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    server.routes["tools/call:gone"] = lambda body, request: _async(httpx.Response(404))
    server.routes["tools/call:wrong"] = lambda body, request: _async(httpx.Response(405))
    server.routes["tools/call:bad"] = lambda body, request: _async(httpx.Response(400, text="no"))
    async with client_for(server, http_client, events) as client:
        with pytest.raises(MethodNotFound, match="HTTP 404 Not Found"):
            await client.call_tool("gone")
        with pytest.raises(MethodNotFound, match="HTTP 405"):
            await client.call_tool("wrong")
        with pytest.raises(ServerError, match="HTTP 400") as caught:
            await client.call_tool("bad")
    assert caught.value.code == -32600


async def test_500_fails_only_that_call(server: Server, http_client: httpx.AsyncClient, events: list[Event]) -> None:
    """A 5xx without a JSON-RPC body fails its call (written=True); a call in flight beside it succeeds."""
    boom_arrived = anyio.Event()

    async def boom(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        boom_arrived.set()
        return httpx.Response(500, text="internal error")

    async def patient(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        await boom_arrived.wait()
        return result(body, text_result("survived"))

    server.routes["tools/call:boom"] = boom
    server.routes["tools/call:patient"] = patient
    outcomes: dict[str, Any] = {}
    async with client_for(server, http_client, events) as client:

        async def run(name: str) -> None:
            try:
                outcomes[name] = await client.call_tool(name)
            except TransportError as exc:
                outcomes[name] = exc

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "patient")
            tg.start_soon(run, "boom")
        assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"  # type: ignore[union-attr]
    assert isinstance(outcomes["boom"], TransportError)
    assert outcomes["boom"].written is True
    assert "HTTP 500" in str(outcomes["boom"])
    assert outcomes["patient"].content[0].text == "survived"


async def test_202_and_redirect_to_a_request_are_transport_errors(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    server.routes["tools/call:accepted"] = lambda body, request: _async(httpx.Response(202))
    redirect = httpx.Response(307, headers={"location": "http://elsewhere.test/mcp"})
    server.routes["tools/call:moved"] = lambda body, request: _async(redirect)
    async with client_for(server, http_client, events) as client:
        with pytest.raises(TransportError, match="202") as accepted:
            await client.call_tool("accepted")
        with pytest.raises(TransportError, match=r"elsewhere\.test") as moved:
            await client.call_tool("moved")
    assert accepted.value.written
    assert moved.value.written
    assert all(r.url.host == "mcp.test" for r in server.requests)  # the redirect was not followed


async def test_sse_stream_ending_without_the_response_fails_the_call(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    server.routes["tools/call:cut"] = lambda body, request: _async(sse_response(SSE([b": ping\r\n\r\n"])))
    async with client_for(server, http_client, events) as client:
        with pytest.raises(TransportError, match="ended without a response") as caught:
            await client.call_tool("cut")
    assert caught.value.written


async def test_connect_error_is_retried_once_then_not_written(http_line: str, events: list[Event]) -> None:
    """A refused connection: nothing left, so the transport sends the same request (same id) once more; refused
    twice, the request fails with written=False (whatever the session then does about it, with new ids)."""
    attempts: list[tuple[str, Any]] = []
    healthy = Server()

    async def flaky(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        name = body.get("params", {}).get("name")
        attempts.append((name or body["method"], body["id"]))
        blips = [a for a in attempts if a[0] == "blip"]
        if name == "down" or (name == "blip" and len(blips) == 1):
            raise httpx.ConnectError("connection refused", request=request)
        if name == "blip":
            return result(body, text_result("made it"))
        return await healthy(request)

    async with (
        mock_client(http_line, flaky) as http_client,
        client_for(healthy, http_client, events) as client,
    ):
        answer = await client.call_tool("blip")
        with pytest.raises(TransportError, match="connection refused") as caught:
            await client.call_tool("down")
    assert answer.content[0].text == "made it"  # type: ignore[union-attr]
    blip_ids = [request_id for name, request_id in attempts if name == "blip"]
    assert len(blip_ids) == 2
    assert len(set(blip_ids)) == 1
    down_ids = [request_id for name, request_id in attempts if name == "down"]
    assert down_ids
    assert all(down_ids.count(request_id) == 2 for request_id in down_ids)
    assert caught.value.written is False


async def test_caller_supplied_client_is_left_open(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    async with client_for(server, http_client, events) as client:
        await client.call_tool("echo", {"text": "x"})
    assert not http_client.is_closed
    response = await http_client.post(URL, json={"jsonrpc": "2.0", "method": "notifications/x"})
    assert response.status_code == 202


def test_limits_and_client_are_exclusive() -> None:
    with pytest.raises(ValueError, match="limits"):
        http(URL, client=httpx.AsyncClient(), limits=httpx.Limits(max_connections=1))
    assert http(URL).description == URL


@pytest.mark.fake_clock
async def test_a_stream_left_open_after_its_answer_is_closed_after_a_short_drain(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """The call returns at its answer; the rest of the stream is read (so the connection could be reused) for at
    most the drain budget of about a second, then closed: a server that never ends it cannot hold a reader."""
    streams: list[SSE] = []

    async def answer_and_linger(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        streams.append(SSE([event({"jsonrpc": "2.0", "id": body["id"], "result": text_result("ok")})], stay_open=True))
        return sse_response(streams[-1])

    server.routes["tools/call:linger"] = answer_and_linger
    async with client_for(server, http_client, events) as client:
        assert (await client.call_tool("linger")).content[0].text == "ok"  # type: ignore[union-attr]
        assert not streams[0].closed  # still draining
        await anyio.sleep(0.5)
        assert not streams[0].closed
        await anyio.sleep(1)
        assert streams[0].closed
    assert not [e for e in events if isinstance(e, CancelSent)]  # an answered request is not cancelled


# -- cancellation ----------------------------------------------------------------------------------------------


@pytest.mark.fake_clock
async def test_modern_timeout_closes_the_stream_and_posts_nothing(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """At 2026-07-28 closing the response stream is the cancellation: no notifications/cancelled is POSTed."""
    streams: list[SSE] = []

    async def hang(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        streams.append(SSE([b": ping\r\n\r\n"], stay_open=True))
        return sse_response(streams[-1])

    server.routes["tools/call:hang"] = hang
    async with client_for(server, http_client, events, timeout=TimeoutPolicy(idle=2, maximum=100)) as client:
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("hang")
        await anyio.sleep(1)
        assert streams[0].closed
        assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [(c.request_id, c.how) for c in cancels] == [(caught.value.request_ids[0], CancelMethod.STREAM_CLOSE)]
    assert not server.posts("notifications/cancelled")


@pytest.mark.fake_clock
async def test_legacy_timeout_posts_the_cancel_and_closes_the_stream(http_line: str, events: list[Event]) -> None:
    """At 2025-11-25 the cancel is POSTed with the session headers, and the stream is closed too."""
    server = Server(legacy=True)
    streams: list[SSE] = []

    async def hang(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        streams.append(SSE([b"id: 1\r\ndata:\r\n\r\n"], stay_open=True))
        return sse_response(streams[-1])

    server.routes["tools/call:hang"] = hang
    async with mock_client(http_line, server) as http_client:
        policy = TimeoutPolicy(idle=2, maximum=100)
        async with client_for(server, http_client, events, protocol="2025-11-25", timeout=policy) as client:
            with pytest.raises(IdleTimeout) as caught:
                await client.call_tool("hang")
            await anyio.sleep(1)
            assert streams[0].closed
    (cancel,) = server.posts("notifications/cancelled")
    assert json.loads(cancel.content)["params"]["requestId"] == caught.value.request_ids[0]
    assert "idle" in json.loads(cancel.content)["params"]["reason"]
    assert cancel.headers["Mcp-Session-Id"] == "session-1"
    assert cancel.headers["MCP-Protocol-Version"] == "2025-11-25"
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [c.how for c in cancels] == [CancelMethod.NOTIFICATION_AND_STREAM_CLOSE]


@pytest.mark.fake_clock
async def test_a_late_json_answer_is_only_a_late_message(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """A JSON answer that comes after the maximum passed raises nothing; at most it is a LateMessage."""
    release = anyio.Event()

    async def slow(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        await release.wait()
        return result(body, text_result("too late"))

    server.routes["tools/call:slow"] = slow
    async with client_for(server, http_client, events, timeout=TimeoutPolicy(idle=None, maximum=3)) as client:
        with anyio.fail_after(10), pytest.raises(MaxTimeout) as caught:
            await client.call_tool("slow")
        release.set()
        await anyio.sleep(1)
        assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]
    assert caught.value.request_ids
    late = [e for e in events if isinstance(e, LateMessage)]
    assert all(e.request_id == caught.value.request_ids[0] for e in late)


async def test_broken_or_oversized_answers_fail_their_call(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """An SSE answer that is not JSON, and a JSON answer over the size limit, fail their call as ProtocolError."""

    async def broken(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        raw = b'data: {"jsonrpc":"2.0","id":' + str(body["id"]).encode() + b',"result":{oops\r\n\r\n'
        return sse_response(SSE([raw], stay_open=True))

    async def huge(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        return result(body, text_result("x" * 5000))

    server.routes["tools/call:broken"] = broken
    server.routes["tools/call:huge"] = huge
    transport = http(URL, client=http_client, max_message_size=4096)
    async with Client(transport, protocol="2026-07-28", timeout=POLICY, on_event=events.append) as client:
        with pytest.raises(ProtocolError, match="not valid JSON"):
            await client.call_tool("broken")
        with pytest.raises(ProtocolError, match="4096-byte limit"):
            await client.call_tool("huge")
        assert (await client.call_tool("echo", {"text": "ok"})).content[0].text == "ok"  # type: ignore[union-attr]


async def test_a_broken_event_on_one_stream_never_fails_another_call(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """A broken event fails at most the request whose stream carried it, even when it claims another call's id."""
    seen: dict[str, Any] = {}
    other_answered = anyio.Event()

    async def waits(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        seen["waits"] = body["id"]
        await other_answered.wait()
        return result(body, text_result("healthy"))

    async def breaks(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        named = str(seen["waits"]).encode()
        chunks = [
            b'data: {"jsonrpc":"2.0","id":' + named + b',"result":{oops\r\n\r\n',
            b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"id":' + named + b",oops\r\n\r\n",
            event({"jsonrpc": "2.0", "id": body["id"], "result": text_result("mine")}),
        ]
        return sse_response(SSE(chunks))

    server.routes["tools/call:waits"] = waits
    server.routes["tools/call:breaks"] = breaks
    outcomes: dict[str, object] = {}
    async with client_for(server, http_client, events) as client, anyio.create_task_group() as tg:

        async def first() -> None:
            outcomes["waits"] = (await client.call_tool("waits")).content[0].text  # type: ignore[union-attr]

        tg.start_soon(first)
        while "waits" not in seen:
            await anyio.lowlevel.checkpoint()
        outcomes["breaks"] = (await client.call_tool("breaks")).content[0].text  # type: ignore[union-attr]
        other_answered.set()

    assert outcomes == {"waits": "healthy", "breaks": "mine"}
    assert len([e for e in events if isinstance(e, ProtocolViolation)]) == 2


async def test_legacy_server_request_on_the_stream_is_answered_by_post(http_line: str, events: list[Event]) -> None:
    """2025-11-25: a server request (ping) on a response stream is answered with a POST carrying the session."""
    server = Server(legacy=True)

    async def chatty(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        chunks = [
            event({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}),
            event({"jsonrpc": "2.0", "id": body["id"], "result": text_result("after ping")}),
        ]
        return sse_response(SSE(chunks))

    server.routes["tools/call:chatty"] = chatty
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, events, protocol="2025-11-25") as client,
    ):
        answer = await client.call_tool("chatty")
        for _ in range(100):
            if any(b.get("id") == "srv-1" for b in server.bodies()):
                break
            await anyio.lowlevel.checkpoint()
    assert answer.content[0].text == "after ping"  # type: ignore[union-attr]
    (reply,) = [r for r in server.requests if r.method == "POST" and json.loads(r.content).get("id") == "srv-1"]
    assert json.loads(reply.content) == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    assert reply.headers["Mcp-Session-Id"] == "session-1"
    assert reply.headers["MCP-Protocol-Version"] == "2025-11-25"


# -- 2025-11-25: the standalone GET stream ----------------------------------------------------------------------


async def test_legacy_get_stream_carries_server_requests(http_line: str, events: list[Event]) -> None:
    """After notifications/initialized a GET stream is opened with the session headers; a server request on it is
    answered by POST; a call works meanwhile; the stream is closed and the session DELETEd at the end."""
    server = Server(legacy=True)
    stream = SSE(
        [b"id: g1\r\ndata:\r\n\r\n", event({"jsonrpc": "2.0", "id": "srv-7", "method": "ping"})], stay_open=True
    )

    async def listen(request: httpx.Request) -> httpx.Response:
        return sse_response(stream)

    server.get = listen
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, events, protocol="2025-11-25") as client,
    ):
        with anyio.fail_after(5):
            while not any(b.get("id") == "srv-7" for b in server.bodies()):
                await anyio.sleep(0.01)
        assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]
    (get,) = server.gets()
    assert get.headers["Accept"] == "text/event-stream"
    assert get.headers["Mcp-Session-Id"] == "session-1"
    assert get.headers["MCP-Protocol-Version"] == "2025-11-25"
    assert get.headers["Authorization"] == "Bearer t"
    assert "Last-Event-ID" not in get.headers
    initialized = server.requests.index(server.posts("notifications/initialized")[0])
    assert server.requests.index(get) > initialized
    (reply,) = [r for r in server.requests if r.method == "POST" and json.loads(r.content).get("id") == "srv-7"]
    assert json.loads(reply.content) == {"jsonrpc": "2.0", "id": "srv-7", "result": {}}
    assert stream.closed
    assert server.requests[-1].method == "DELETE"


async def test_legacy_get_405_means_no_stream(http_line: str, events: list[Event]) -> None:
    """A server without a GET stream answers 405: asked once, never again."""
    server = Server(legacy=True)
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, events, protocol="2025-11-25") as client,
    ):
        await client.call_tool("echo", {"text": "x"})
        await client.call_tool("echo", {"text": "y"})
    assert len(server.gets()) == 1


@pytest.mark.fake_clock
async def test_legacy_get_stream_reconnects_a_bounded_number_of_times(http_line: str, events: list[Event]) -> None:
    """A GET stream that keeps ending without a message is reopened after its retry:, with Last-Event-ID, twice."""
    server = Server(legacy=True)
    count = 0

    async def short(request: httpx.Request) -> httpx.Response:
        nonlocal count
        count += 1
        return sse_response(SSE([f"id: g{count}\r\nretry: 3000\r\ndata:\r\n\r\n".encode()]))

    server.get = short
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, events, protocol="2025-11-25"),
    ):
        started = anyio.current_time()
        await anyio.sleep(60)
    gets = server.gets()
    assert len(gets) == 3
    assert [g.headers.get("Last-Event-ID") for g in gets] == [None, "g1", "g2"]
    assert anyio.current_time() - started >= 6


async def test_no_get_stream_at_2026(server: Server, http_client: httpx.AsyncClient, events: list[Event]) -> None:
    async with client_for(server, http_client, events) as client:
        await client.call_tool("echo", {"text": "x"})
    assert not server.gets()


# -- 2025-11-25: resuming a request's stream (SEP-1699) -----------------------------------------------------------


def _priming_then_close(event_id: str, retry_ms: int) -> Route:
    async def route(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        return sse_response(SSE([f"id: {event_id}\r\nretry: {retry_ms}\r\ndata:\r\n\r\n".encode()]))

    return route


@pytest.mark.fake_clock
async def test_legacy_stream_closed_after_priming_is_resumed_with_last_event_id(
    http_line: str, events: list[Event]
) -> None:
    """The call's stream ends after a priming event: after retry: the rest is read from GET + Last-Event-ID."""
    server = Server(legacy=True)
    server.routes["tools/call:poll"] = _priming_then_close("e-1", 500)
    closed_at: list[float] = []

    async def resume(request: httpx.Request) -> httpx.Response:
        if "Last-Event-ID" not in request.headers:
            return httpx.Response(405)
        closed_at.append(anyio.current_time())
        (call,) = server.bodies("tools/call")
        reply = {"jsonrpc": "2.0", "id": call["id"], "result": text_result("resumed")}
        return sse_response(SSE([b"id: e-2\r\n" + event(reply)]))

    server.get = resume
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, events, protocol="2025-11-25") as client,
    ):
        started = anyio.current_time()
        answer = await client.call_tool("poll")
    assert answer.content[0].text == "resumed"  # type: ignore[union-attr]
    (get,) = server.gets(resuming=True)
    assert get.headers["Last-Event-ID"] == "e-1"
    assert get.headers["Mcp-Session-Id"] == "session-1"
    assert get.headers["MCP-Protocol-Version"] == "2025-11-25"
    assert get.headers["Accept"] == "text/event-stream"
    assert 0.5 <= closed_at[0] - started < 0.7


@pytest.mark.fake_clock
async def test_legacy_resumption_is_bounded(http_line: str, events: list[Event]) -> None:
    """Resumptions that never bring the answer: two GETs (each after retry:, the default 1 s), then the call fails."""
    server = Server(legacy=True)
    server.routes["tools/call:poll"] = lambda body, request: _async(sse_response(SSE([b"id: e-1\r\ndata:\r\n\r\n"])))

    async def resume(request: httpx.Request) -> httpx.Response:
        if "Last-Event-ID" not in request.headers:
            return httpx.Response(405)
        return sse_response(SSE([b": nothing\r\n\r\n"]))

    server.get = resume
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, events, protocol="2025-11-25", retry=None) as client,
    ):
        started = anyio.current_time()
        with pytest.raises(TransportError, match="2 attempts to resume") as caught:
            await client.call_tool("poll")
        assert anyio.current_time() - started >= 2
    assert caught.value.written
    assert [g.headers["Last-Event-ID"] for g in server.gets(resuming=True)] == ["e-1", "e-1"]


async def test_modern_stream_is_never_resumed(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """At 2026-07-28 event ids mean nothing: a stream that ends early fails its call at once, no GET."""
    server.routes["tools/call:poll"] = _priming_then_close("e-1", 10)
    async with client_for(server, http_client, events, retry=None) as client:
        with pytest.raises(TransportError, match="ended without a response") as caught:
            await client.call_tool("poll")
    assert caught.value.written
    assert not server.gets()


# -- session expiry and back-off statuses ---------------------------------------------------------------------


async def test_404_to_a_request_with_a_session_id_is_session_expired(http_line: str, events: list[Event]) -> None:
    """404 with our Mcp-Session-Id: SessionExpired (status 404, written), whatever the body; no DELETE at close."""
    server = Server(legacy=True)
    gone = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}}
    server.routes["tools/call:later"] = lambda body, request: _async(httpx.Response(404, json=gone))
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, events, protocol="2025-11-25", retry=None) as client,
    ):
        with pytest.raises(SessionExpired) as caught:
            await client.call_tool("later")
    assert isinstance(caught.value, TransportError)
    assert caught.value.status_code == 404
    assert caught.value.written
    assert caught.value.session_id == "session-1"
    assert not [r for r in server.requests if r.method == "DELETE"]


async def test_404_without_a_session_is_still_method_not_found(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    server.routes["tools/call:gone"] = lambda body, request: _async(httpx.Response(404))
    async with client_for(server, http_client, events) as client:
        with pytest.raises(MethodNotFound):
            await client.call_tool("gone")


async def test_429_and_503_carry_status_and_retry_after(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """Back-off statuses fail the call with the status and Retry-After in seconds (delta-seconds or HTTP-date)."""
    busy = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "slow down"}}
    server.routes["tools/call:busy"] = lambda body, request: _async(
        httpx.Response(429, headers={"Retry-After": "7"}, json=busy)
    )
    server.routes["tools/call:down"] = lambda body, request: _async(
        httpx.Response(503, headers={"Retry-After": "Thu, 01 Jan 2099 00:00:00 GMT"})
    )
    server.routes["tools/call:vague"] = lambda body, request: _async(httpx.Response(503))
    async with client_for(server, http_client, events, retry=None) as client:
        with pytest.raises(TransportError) as busy_error:
            await client.call_tool("busy")
        with pytest.raises(TransportError) as down_error:
            await client.call_tool("down")
        with pytest.raises(TransportError) as vague_error:
            await client.call_tool("vague")
    # A status code does not prove the request did not run (a gateway may answer after the tool ran): written.
    assert (busy_error.value.status_code, busy_error.value.retry_after, busy_error.value.written) == (429, 7.0, True)
    assert down_error.value.status_code == 503
    assert down_error.value.retry_after == 24 * 3600.0  # capped
    assert (vague_error.value.status_code, vague_error.value.retry_after) == (503, None)


async def test_a_retry_after_of_hundreds_of_digits_is_capped_not_a_crash(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    """Bad input from the server is a typed error of the call it answered, never an OverflowError of the session."""
    huge = "9" * 400
    server.routes["tools/call:busy"] = lambda body, request: _async(httpx.Response(429, headers={"Retry-After": huge}))
    async with client_for(server, http_client, events, retry=None) as client:
        with pytest.raises(TransportError) as busy_error:
            await client.call_tool("busy")
        assert (await client.call_tool("echo", {"text": "still here"})) is not None
    assert busy_error.value.retry_after == 24 * 3600.0


async def test_a_retry_after_of_hundreds_of_digits_at_connect_is_a_connect_error(
    server: Server, http_client: httpx.AsyncClient, events: list[Event]
) -> None:
    huge = "9" * 400
    server.routes["server/discover"] = lambda body, request: _async(httpx.Response(503, headers={"Retry-After": huge}))
    with pytest.raises(ConnectError):
        async with client_for(server, http_client, events, retry=None):
            pass


def test_parse_retry_after() -> None:
    now = 1_000_000_000.0  # 2001-09-09T01:46:40Z
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 0 ") == 0.0
    assert parse_retry_after("-5") is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Sun, 09 Sep 2001 01:47:00 GMT", now=now) == 20.0
    assert parse_retry_after("Sun, 09 Sep 2001 01:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("Sun, 09 Sep 2001 01:47:00 -0000", now=now) == 20.0
    assert parse_retry_after("9" * 400) == 24 * 3600.0  # float() of it overflows
    assert parse_retry_after("9" * 5000) == 24 * 3600.0  # int() of it passes Python's digit limit
    assert parse_retry_after("Sun, 09 Sep 99999 01:47:00 GMT", now=now) is None
