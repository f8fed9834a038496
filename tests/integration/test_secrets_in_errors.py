"""Secrets in an endpoint's configuration stay out of what a failed connect shows: a stdio command's arguments, a
URL's password and query never appear in ``ConnectError``/``TransportError`` text, a group's failures, or logs.
"""

from __future__ import annotations

import logging
import sys

import httpx2
import pytest

from mcp_client import Client, ClientGroup, ConnectError, TimeoutPolicy
from mcp_client._redact import command_summary, redacted_url
from mcp_client.transports.http import http
from mcp_client.transports.sse import sse
from mcp_client.transports.stdio._transport import stdio

pytestmark = pytest.mark.anyio

KEY = "sk-live-0123456789"
POLICY = TimeoutPolicy(idle=5, maximum=10, connect=5)


def test_command_summary_and_redacted_url() -> None:
    assert command_summary("npx", ["-y", "server", "--api-key", KEY]) == "npx (4 arguments)"
    assert command_summary("srv", ["x"]) == "srv (1 argument)"
    assert command_summary("srv", []) == "srv"
    assert redacted_url(f"https://bob:{KEY}@mcp.example:8443/mcp?api_key={KEY}#frag") == (
        "https://***@mcp.example:8443/mcp?***"
    )
    assert redacted_url("https://mcp.example/mcp") == "https://mcp.example/mcp"
    assert redacted_url(f"https://{KEY}@mcp.example/mcp") == "https://***@mcp.example/mcp"
    assert redacted_url("http://[::1]:8000/mcp") == "http://[::1]:8000/mcp"
    assert KEY not in redacted_url(f"not a url?key={KEY}")


@pytest.mark.real_clock
async def test_a_stdio_command_that_fails_shows_no_argument(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    transport = stdio("/nonexistent/mcp-server", ["--api-key", KEY])
    with pytest.raises(ConnectError) as caught:
        async with Client(transport, timeout=POLICY):
            pass
    assert KEY not in str(caught.value)
    assert "/nonexistent/mcp-server (2 arguments)" in str(caught.value)
    assert KEY not in caplog.text


@pytest.mark.real_clock
async def test_a_stdio_server_that_dies_at_start_shows_no_argument() -> None:
    transport = stdio(sys.executable, ["-c", "import sys; sys.exit(3)", "--token", KEY])
    with pytest.raises(ConnectError) as caught:
        async with Client(transport, timeout=POLICY):
            pass
    text = f"{caught.value} {caught.value.__cause__} {caught.value.__context__}"
    assert KEY not in text
    assert "(4 arguments)" in str(caught.value)


def refuse(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("connection refused", request=request)


async def test_an_http_url_that_fails_shows_no_password_or_query() -> None:
    url = f"https://bob:{KEY}@mcp.example/mcp?api_key={KEY}"
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)) as client:
        with pytest.raises(ConnectError) as caught:
            async with Client(http(url, client=client), timeout=POLICY):
                pass
    shown = str(caught.value)
    assert KEY not in shown
    assert "https://***@mcp.example/mcp?***" in shown


async def test_an_sse_url_that_fails_shows_no_password_or_query() -> None:
    url = f"https://bob:{KEY}@mcp.example/sse?api_key={KEY}"
    assert sse(url).description == "https://***@mcp.example/sse?***"
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)) as client:
        with pytest.raises(ConnectError) as caught:
            async with Client(sse(url, client=client), timeout=POLICY):
                pass
    assert KEY not in str(caught.value)


async def test_a_group_failure_shows_no_secret() -> None:
    url = f"https://mcp.example/mcp?api_key={KEY}"
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)) as client:
        group = ClientGroup({"remote": http(url, client=client)}, timeout=POLICY)
        async with group:
            pass
        assert "remote" in group.failures
        assert KEY not in str(group.failures["remote"])
