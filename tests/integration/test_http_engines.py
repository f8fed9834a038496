"""The two engines of the client :func:`~mcp_client.transports.http.http` makes: which one a configuration takes,
and what the one over httpcore2 must do itself that httpx2's client did (``Host`` and ``Content-Length``, cookies
the server set, compressed bodies), checked on both against a minimal HTTP/1.1 endpoint on a real local socket.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx
import httpx2
import pytest

from mcp_client import Client, TimeoutPolicy
from mcp_client.transports.http import http
from mcp_client.transports.http._transport import engine_kind

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=30, maximum=60, connect=30)


class Endpoint:
    """``POST /mcp``: answers ``server/discover`` and ``tools/call`` ``echo`` with JSON; records every head.

    The first answer sets a cookie; with ``compress`` every answer body is gzip-compressed."""

    def __init__(self, *, compress: bool = False) -> None:
        self.compress = compress
        self.heads: list[dict[str, str]] = []

    async def serve(self, stream: anyio.abc.ByteStream) -> None:
        buffer = b""
        async with stream:
            while True:
                while b"\r\n\r\n" not in buffer:
                    try:
                        buffer += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        return
                raw_head, buffer = buffer.split(b"\r\n\r\n", 1)
                head: dict[str, str] = {}
                for line in raw_head.split(b"\r\n")[1:]:
                    name, _, value = line.decode("latin-1").partition(":")
                    name, value = name.strip().lower(), value.strip()
                    head[name] = f"{head[name]}, {value}" if name in head else value  # a repeated header shows
                self.heads.append(head)
                length = int(head.get("content-length", "0"))
                while len(buffer) < length:
                    buffer += await stream.receive()
                body, buffer = json.loads(buffer[:length]), buffer[length:]
                await stream.send(self.answer(body))

    def answer(self, body: dict[str, Any]) -> bytes:
        if "id" not in body:
            return b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
        if body["method"] == "tools/call":
            result: dict[str, Any] = {"content": [{"type": "text", "text": body["params"]["arguments"]["text"]}]}
        else:
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
        payload = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
        extra = ""
        if self.compress:
            payload = gzip.compress(payload)
            extra += "Content-Encoding: gzip\r\n"
        if len(self.heads) == 1:
            extra += "Set-Cookie: route=backend-7; Path=/\r\n"
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}Content-Length: {len(payload)}\r\n\r\n"
        return head.encode() + payload


@asynccontextmanager
async def serving(endpoint: Endpoint) -> AsyncIterator[str]:
    """The URL of ``endpoint``, served on a loopback socket while the block runs."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, endpoint.serve)
        yield f"http://127.0.0.1:{port}/mcp"
        tg.cancel_scope.cancel()


async def test_each_request_carries_host_length_and_the_cookie_the_server_set(http_engine: str) -> None:
    endpoint = Endpoint()
    async with serving(endpoint) as url, Client(http(url), protocol="2026-07-28", timeout=POLICY) as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    port = url.split(":")[2].split("/")[0]
    first, second = endpoint.heads[0], endpoint.heads[1]
    assert first["host"] == second["host"] == f"127.0.0.1:{port}"
    assert first["mcp-method"] == "server/discover"
    assert second["mcp-method"] == "tools/call"
    assert second["mcp-name"] == "echo"
    assert int(second["content-length"]) > 0
    assert "cookie" not in first
    assert second["cookie"] == "route=backend-7"


async def test_a_compressed_answer_is_decoded(http_engine: str) -> None:
    endpoint = Endpoint(compress=True)
    async with serving(endpoint) as url, Client(http(url), protocol="2026-07-28", timeout=POLICY) as client:
        result = await client.call_tool("echo", {"text": "squeezed"})
    assert result.content[0].text == "squeezed"  # type: ignore[union-attr]


def test_which_engine_a_configuration_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    assert engine_kind(http("http://127.0.0.1:8000/mcp")) == "httpcore2"
    assert engine_kind(http("https://mcp.example/mcp", headers={"Authorization": "Bearer t"})) == "httpcore2"
    assert engine_kind(http("http://127.0.0.1:8000/mcp", auth=httpx2.BasicAuth("a", "b"))) == "httpx2"
    assert engine_kind(http("http://user:secret@127.0.0.1:8000/mcp")) == "httpx2"
    assert engine_kind(http("http://127.0.0.1:8000/mcp", client=httpx2.AsyncClient())) == "caller's client"
    assert engine_kind(http("http://127.0.0.1:8000/mcp", client=httpx.AsyncClient())) == "caller's client"
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert engine_kind(http("http://127.0.0.1:8000/mcp")) == "httpx2"


async def test_a_host_header_given_replaces_ours(http_engine: str) -> None:
    endpoint = Endpoint()
    transport_headers = {"Host": "alias.test"}
    async with (
        serving(endpoint) as url,
        Client(http(url, headers=transport_headers), protocol="2026-07-28", timeout=POLICY) as client,
    ):
        await client.call_tool("echo", {"text": "hi"})
    assert [head["host"] for head in endpoint.heads] == ["alias.test", "alias.test"]


@functools.cache
def bomb() -> bytes:
    """64 MB of JSON in some 62 KB of gzip: an answer a hostile server may send to any request."""
    return gzip.compress(b'{"jsonrpc": "2.0", "id": 2, "result": {"content": [{"text": "' + b"A" * 64_000_000)


class BombEndpoint(Endpoint):
    """Answers ``tools/call`` with :func:`bomb` (gzip), everything else as :class:`Endpoint` does."""

    def answer(self, body: dict[str, Any]) -> bytes:
        if body.get("method") != "tools/call":
            return super().answer(body)
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        return f"{head}Content-Length: {len(bomb())}\r\n\r\n".encode() + bomb()


async def test_a_compressed_answer_is_bounded_by_the_message_size_while_it_is_decoded(http_engine: str) -> None:
    """Red team of the HTTP transport (room 1): max_message_size bounds what a compressed answer costs while it is
    decoded, not only what is kept of it (httpcore2's engine inflated each received chunk whole: ~150 MB here)."""
    import tracemalloc

    from mcp_client import ProtocolError

    bomb()  # (made before the memory is traced)
    async with serving(BombEndpoint()) as url:
        transport = http(url, max_message_size=1_000_000)
        async with Client(transport, protocol="2026-07-28", timeout=POLICY, retry=None) as client:
            tracemalloc.start()
            try:
                with pytest.raises(ProtocolError, match="limit"):
                    await client.call_tool("echo", {"text": "boom"})
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    assert peak < 16_000_000, f"{peak / 1e6:.0f} MB to refuse a 1 MB message"
