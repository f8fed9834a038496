"""A caller's HTTP client of either line (httpx2, httpx 0.28): recognised, used exactly as given, its auth run.

The transport is driven through :class:`~mcp_client.Client` over a mock transport of the client's own line, so
what reaches the "server" is what the caller's client sent.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import httpx2
import pytest

from mcp_client import Client, TimeoutPolicy, TransportError
from mcp_client._httpx import HTTPX2, auth_for, http_errors, line_of
from mcp_client.transports.http import http

pytestmark = pytest.mark.anyio

URL = "http://mcp.test/mcp"
POLICY = TimeoutPolicy(idle=10, maximum=60, connect=30)
DISCOVER = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
ECHO = {"content": [{"type": "text", "text": "hi"}], "isError": False}
LIBRARIES: dict[str, Any] = {"httpx2": httpx2, "httpx": httpx}


class Endpoint:
    """Answers ``server/discover`` and any ``tools/call``; records the headers of every request."""

    def __init__(self, library: Any) -> None:
        self.library = library
        self.headers: list[dict[str, str]] = []

    def __call__(self, request: Any) -> Any:
        self.headers.append({name.lower(): value for name, value in request.headers.items()})
        body = json.loads(request.content)
        if "id" not in body:
            return self.library.Response(202)
        answer = DISCOVER if body["method"] == "server/discover" else ECHO
        return self.library.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": answer})


@pytest.fixture(params=sorted(LIBRARIES))
def library(request: pytest.FixtureRequest) -> Any:
    return LIBRARIES[request.param]


def test_each_client_is_recognised_by_its_line() -> None:
    assert line_of(httpx2.AsyncClient()) is HTTPX2
    theirs = line_of(httpx.AsyncClient())
    assert theirs.name == "httpx"
    assert theirs.http_error is httpx.HTTPError
    assert httpx.ConnectError in theirs.not_written
    assert HTTPX2.http_error is httpx2.HTTPError
    assert set(http_errors()) == {httpx.HTTPError, httpx2.HTTPError}


def test_an_auth_of_the_other_line_is_adapted_and_one_of_the_same_line_is_not() -> None:
    theirs = line_of(httpx.AsyncClient())
    basic_httpx, basic_httpx2 = httpx.BasicAuth("u", "p"), httpx2.BasicAuth("u", "p")
    assert auth_for(HTTPX2, basic_httpx2) is basic_httpx2
    assert auth_for(theirs, basic_httpx) is basic_httpx
    assert isinstance(auth_for(HTTPX2, basic_httpx), httpx2.Auth)
    assert isinstance(auth_for(theirs, basic_httpx2), httpx.Auth)
    assert auth_for(HTTPX2, None) is httpx2.USE_CLIENT_DEFAULT
    assert auth_for(theirs, None) is httpx.USE_CLIENT_DEFAULT


async def test_a_callers_client_is_used_as_given_and_left_open(library: Any) -> None:
    endpoint = Endpoint(library)
    async with library.AsyncClient(
        transport=library.MockTransport(endpoint), headers={"X-Host": "mine"}, follow_redirects=True
    ) as caller:
        before = dict(vars(caller))
        async with Client(http(URL, client=caller), protocol="2026-07-28", timeout=POLICY) as client:
            result = await client.call_tool("echo", {})
        assert result.content[0].text == "hi"  # type: ignore[union-attr]
        assert not caller.is_closed
        assert vars(caller) == before  # not one attribute replaced or added
        assert caller.follow_redirects is True
    assert all(headers["x-host"] == "mine" for headers in endpoint.headers)
    assert endpoint.headers[-1]["mcp-method"] == "tools/call"


@pytest.mark.parametrize("auth_library", sorted(LIBRARIES))
async def test_an_auth_of_either_line_runs_on_a_client_of_either_line(library: Any, auth_library: str) -> None:
    endpoint = Endpoint(library)
    auth = LIBRARIES[auth_library].BasicAuth("user", "secret")
    expected = "Basic " + base64.b64encode(b"user:secret").decode()
    async with (
        library.AsyncClient(transport=library.MockTransport(endpoint)) as caller,
        Client(http(URL, client=caller, auth=auth), protocol="2026-07-28", timeout=POLICY) as client,
    ):
        await client.call_tool("echo", {})
    assert endpoint.headers
    assert all(headers["authorization"] == expected for headers in endpoint.headers)


async def test_each_lines_failures_are_ours(library: Any) -> None:
    endpoint = Endpoint(library)

    def answer(request: Any) -> Any:
        name = json.loads(request.content).get("params", {}).get("name")
        if name == "refused":
            raise library.ConnectError("refused", request=request)
        if name == "broken":
            raise library.ReadError("connection reset", request=request)
        return endpoint(request)

    async with (
        library.AsyncClient(transport=library.MockTransport(answer)) as caller,
        Client(http(URL, client=caller), protocol="2026-07-28", timeout=POLICY) as client,
    ):
        with pytest.raises(TransportError, match="refused") as refused:
            await client.call_tool("refused", {})
        with pytest.raises(TransportError, match="connection reset") as broken:
            await client.call_tool("broken", {})
        assert (await client.call_tool("echo", {})).content[0].text == "hi"  # type: ignore[union-attr]
    assert refused.value.written is False
    assert broken.value.written is True
