"""Red team of the HTTP transport's state (room 1): no URL userinfo, query secret or session id reaches an error's
text, its ``for_model`` or a log record of the Streamable HTTP transport, whatever the path (session expiry, the
closing DELETE, the HTTP+SSE fallback and its memory)."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import httpx2
import pytest

from mcp_client import Client, Event, TransportError, sse
from mcp_client.protocol.negotiate import ERA_CACHE
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.http import SessionExpired, http
from mcp_client.transports.sse._endpoint import KNOWN_SSE_ENDPOINTS
from tests.integration.http_lines import mock_client
from tests.integration.sse_peer import SsePeer
from tests.integration.test_http_transport import POLICY, Server, _async

pytestmark = pytest.mark.anyio

KEY = "sk-live-0123456789"
SESSION = "sess-9f8e7d6c5b4a"


def _ours(caplog: pytest.LogCaptureFixture) -> str:
    """What the package logged (a caller's own httpx2 client logs its requests' URLs itself)."""
    return "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("mcp_client"))


async def test_session_expiry_shows_no_session_id(http_line: str, caplog: pytest.LogCaptureFixture) -> None:
    """A 404 to a request that carried our session id: the SessionExpired's text, its for_model and the logs of
    the expiry and of the closing DELETE name no session id (the error keeps it as a fact, session_id)."""
    caplog.set_level(logging.DEBUG)
    events: list[Event] = []
    server = Server(legacy=True, session_id=SESSION)
    gone = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}}
    server.routes["tools/call:later"] = lambda body, request: _async(httpx.Response(404, json=gone))
    async with mock_client(http_line, server) as http_client:
        transport = http("http://mcp.test/mcp", client=http_client)
        async with Client(transport, protocol="2025-11-25", retry=None, timeout=POLICY, on_event=events.append) as c:
            assert (await c.call_tool("echo", {"text": "x"})).content  # a DELETE at close carries the session id
        async with Client(transport, protocol="2025-11-25", retry=None, timeout=POLICY, on_event=events.append) as c:
            with pytest.raises(SessionExpired) as caught:
                await c.call_tool("later")
    assert caught.value.session_id == SESSION
    assert SESSION not in str(caught.value)
    assert SESSION not in caught.value.for_model
    assert SESSION not in _ours(caplog)


def _refuses_everything(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(405)


def _streamable(request: httpx2.Request) -> httpx2.Response:
    if request.method != "POST":
        return httpx2.Response(405)
    method = json.loads(request.content).get("method")
    if method == "server/discover":
        error = {"code": -32000, "message": "Bad Request: Server not initialized"}
        return httpx2.Response(400, json={"jsonrpc": "2.0", "id": None, "error": error})
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        }
        body = {"jsonrpc": "2.0", "id": json.loads(request.content)["id"], "result": result}
        return httpx2.Response(200, json=body, headers={"mcp-session-id": SESSION})
    return httpx2.Response(202)


async def test_a_remembered_http_sse_url_that_no_longer_is_logs_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    """The URL spoke HTTP+SSE before and its GET is now refused: the log of forgetting it names the URL redacted."""
    caplog.set_level(logging.DEBUG)
    url = f"http://bob:{KEY}@upgraded.test/mcp?api_key={KEY}"
    ERA_CACHE.forget(url)
    KNOWN_SSE_ENDPOINTS.remember(url)
    try:
        client_http = httpx2.AsyncClient(transport=httpx2.MockTransport(_streamable))
        async with client_http, Client(http(url, client=client_http), timeout=POLICY) as client:
            assert client.protocol_version == "2025-11-25"
    finally:
        ERA_CACHE.forget(url)
        KNOWN_SSE_ENDPOINTS.forget(url)
    assert "no longer opens an HTTP+SSE stream" in _ours(caplog)
    assert KEY not in _ours(caplog)
    assert SESSION not in _ours(caplog)


async def test_a_refused_post_that_is_no_http_sse_logs_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    """The first POST refused (405) and the GET too: the log of the failed fallback names the URL redacted."""
    caplog.set_level(logging.DEBUG)
    url = f"http://bob:{KEY}@refusing.test/mcp?api_key={KEY}"
    ERA_CACHE.forget(url)
    try:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(_refuses_everything)) as client_http:
            with pytest.raises(Exception):  # noqa: B017, PT011 - whatever the refusal becomes, the logs are the point
                async with Client(http(url, client=client_http), timeout=POLICY):
                    pass
    finally:
        ERA_CACHE.forget(url)
        KNOWN_SSE_ENDPOINTS.forget(url)
    assert "no HTTP+SSE server either" in _ours(caplog)
    assert KEY not in _ours(caplog)


async def test_http_sse_errors_show_no_userinfo_or_session_of_the_endpoint(caplog: pytest.LogCaptureFixture) -> None:
    """HTTP+SSE: the endpoint event's URL is resolved against the configured one (keeping its userinfo) and carries
    the server's session in its query; a POST to it that fails names it as errors show URLs."""
    caplog.set_level(logging.DEBUG)
    peer = SsePeer(ScriptedPeer(era="legacy"))  # its endpoint: /messages?session_id=N

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    url = f"http://bob:{KEY}@sse.test/sse"
    async with (
        peer.serving() as client_http,
        Client(sse(url, client=client_http), timeout=POLICY, retry=None) as client,
    ):
        await client.call_tool("echo", {"text": "x"})
        peer.routes["/messages"] = refuse
        with pytest.raises(TransportError) as caught:
            await client.call_tool("echo", {"text": "y"})
    for text in (str(caught.value), caught.value.for_model, _ours(caplog)):
        assert KEY not in text
        assert "session_id=" not in text
