"""The ``endpoint`` event of an HTTP+SSE server: resolved against the SSE URL, refused unless on its origin."""

from __future__ import annotations

import pytest

from mcp_client import TransportError
from mcp_client.transports.sse._endpoint import KnownSseEndpoints, message_endpoint, origin_of

SSE = "http://mcp.example.com:8000/sse"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"/messages/?session_id=abc", "http://mcp.example.com:8000/messages/?session_id=abc"),
        (b"messages?session_id=1", "http://mcp.example.com:8000/messages?session_id=1"),
        (b"http://mcp.example.com:8000/m", "http://mcp.example.com:8000/m"),
        (b"HTTP://MCP.example.com:8000/m", "http://MCP.example.com:8000/m"),  # scheme and host are case-blind
        (b"  /messages/\r\n", "http://mcp.example.com:8000/messages/"),
    ],
)
def test_an_endpoint_on_the_same_origin_is_resolved(data: bytes, expected: str) -> None:
    assert message_endpoint(SSE, data) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"http://elsewhere.example.com:8000/messages",
        b"//elsewhere.example.com:8000/messages",  # scheme-relative: another host
        b"https://mcp.example.com:8000/messages",  # another scheme
        b"http://mcp.example.com:9000/messages",  # another port
        b"http://mcp.example.com/messages",  # the default port, 80, is another port too
        b"http://mcp.example.com:8000@elsewhere.example.com/messages",  # userinfo trick
    ],
)
def test_an_endpoint_on_another_origin_is_refused(data: bytes) -> None:
    with pytest.raises(TransportError, match="another origin") as caught:
        message_endpoint(SSE, data)
    assert caught.value.written is False


@pytest.mark.parametrize("data", [b"", b"   ", b"\xff\xfe"])
def test_an_endpoint_that_names_nothing_is_refused(data: bytes) -> None:
    with pytest.raises(TransportError):
        message_endpoint(SSE, data)


def test_default_ports_are_the_same_origin() -> None:
    assert origin_of("https://a.example/x") == origin_of("https://A.example:443/y")
    assert origin_of("http://a.example/x") != origin_of("https://a.example/x")


def test_the_memory_of_sse_urls_is_bounded() -> None:
    known = KnownSseEndpoints(limit=2)
    for url in ("http://a/sse", "http://b/sse", "http://c/sse"):
        known.remember(url)
    assert "http://a/sse" not in known
    assert "http://b/sse" in known
    assert "http://c/sse" in known
    known.forget("http://b/sse")
    assert "http://b/sse" not in known
