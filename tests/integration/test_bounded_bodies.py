"""Every body that comes off the network is read by one bounded reader (``transports/bounded_body.py``): a hostile
server on a loopback socket (``hostile_http.py``) answers with bodies far larger than any limit, plain or as gzip
bombs, and the host's peak memory (tracemalloc, which sees every Python allocation) stays a small fraction of
them, on every path: HTTP+SSE POST answers (through ``sse()`` and through ``http()``'s fallback), OAuth's 401
bodies (which httpx's own auth loop reads too), Streamable HTTP answers and error bodies on both engines and on a
caller's httpx client. A body read only in part leaves no generator to the garbage collector.
"""

from __future__ import annotations

import functools
import gc
import gzip
import json
import tracemalloc
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import httpx2
import pytest

from mcp_client import Client, MCPClientError, ProtocolError, TimeoutPolicy, TransportError, http, sse
from mcp_client.auth import ClientCredentials, OAuth
from mcp_client.protocol.negotiate import ERA_CACHE
from mcp_client.transports.sse._endpoint import KNOWN_SSE_ENDPOINTS
from tests.integration.hostile_http import HostileHttp, Reply, Seen, filler

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=30, maximum=60, connect=30)
HUGE = 64 * 1024 * 1024
"""What a hostile server sends where a few bytes are expected."""
BOUND = 16_000_000
"""The most a host may grow by to refuse (or drop) a HUGE body: a quarter of it, some 30 times the pieces read."""

TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def _result(message: dict[str, Any]) -> dict[str, Any]:
    method = message["method"]
    if method == "initialize":
        version = message["params"]["protocolVersion"]
        return {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "h", "version": "1"}}
    if method == "server/discover":
        return {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
    if method == "tools/list":
        return TOOLS
    if method == "tools/call":
        return {"content": [{"type": "text", "text": message["params"]["arguments"]["text"]}]}
    return {}


def _json(status: int, body: object, **headers: str) -> Reply:
    return Reply(status, {"content-type": "application/json", **headers}, json.dumps(body).encode())


async def _peak(work: Callable[[], Awaitable[None]]) -> int:
    """The peak of traced memory, above what was traced when ``work`` started, while it ran."""
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        await work()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - start


class SseServer:
    """An HTTP+SSE server (2024-11-05) whose every POST answer carries ``answer_size`` bytes nobody asked for."""

    def __init__(self, answer_size: int) -> None:
        self.answer_size = answer_size
        self._send, self._receive = anyio.create_memory_object_stream[dict[str, Any]](100)

    async def route(self, seen: Seen) -> Reply:
        if seen.method == "GET" and seen.path == "/sse":
            return Reply(200, {"content-type": "text/event-stream"}, self._events())
        if seen.method == "POST" and seen.path == "/sse":
            return Reply(405, {"allow": "GET"}, b"Method Not Allowed")  # as the official SDK's server answers
        if seen.method == "POST" and seen.path == "/messages":
            message = json.loads(seen.body)
            if "id" in message and "method" in message:
                await self._send.send({"jsonrpc": "2.0", "id": message["id"], "result": _result(message)})
            return Reply(202, {"content-length": str(self.answer_size)}, filler(self.answer_size))
        return Reply(404)

    async def _events(self) -> AsyncIterator[bytes]:
        yield b"event: endpoint\ndata: /messages?session_id=1\n\n"
        async for message in self._receive:
            yield b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"


async def test_an_http_sse_post_answer_is_never_read_whole() -> None:
    """Issue 29, item 10: every POST was sent without streaming, so its answer was read whole (+1 GiB for a 1 GiB
    answer to initialize). Now it is streamed and dropped after a few KB."""
    server = SseServer(HUGE)
    async with HostileHttp(server.route).serving() as base:

        async def session() -> None:
            async with Client(sse(f"{base}/sse"), timeout=POLICY, retry=None) as client:
                result = await client.call_tool("echo", {"text": "still here"})
            assert result.content[0].text == "still here"  # type: ignore[union-attr]

        peak = await _peak(session)
    assert peak < BOUND, f"{peak / 1e6:.0f} MB for a session whose POSTs were answered with {HUGE / 1e6:.0f} MB each"


async def test_http_reaches_the_same_bound_through_its_fallback(http_engine: str) -> None:
    """Plain ``http()`` falls back to HTTP+SSE after a 405, and its POSTs are bounded there too (item 10)."""
    server = SseServer(HUGE)
    async with HostileHttp(server.route).serving() as base:
        url = f"{base}/sse"
        ERA_CACHE.forget(url)
        KNOWN_SSE_ENDPOINTS.forget(url)

        async def session() -> None:
            async with Client(http(url), timeout=POLICY, retry=None) as client:
                result = await client.call_tool("echo", {"text": "fell back"})
            assert result.content[0].text == "fell back"  # type: ignore[union-attr]

        try:
            peak = await _peak(session)
        finally:
            ERA_CACHE.forget(url)
            KNOWN_SSE_ENDPOINTS.forget(url)
    assert peak < BOUND, f"{peak / 1e6:.0f} MB through http()'s fallback"


class ProtectedServer:
    """An MCP endpoint behind OAuth whose 401s carry ``refusal_size`` bytes, beside its authorization server."""

    def __init__(self, refusal_size: int) -> None:
        self.refusal_size = refusal_size
        self.refusals = 0
        self.base = ""

    async def route(self, seen: Seen) -> Reply:
        base = self.base
        if seen.path == "/.well-known/oauth-protected-resource/mcp":
            return _json(200, {"resource": f"{base}/mcp", "authorization_servers": [base]})
        if seen.path == "/.well-known/oauth-authorization-server":
            metadata = {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "grant_types_supported": ["client_credentials"],
            }
            return _json(200, metadata)
        if seen.path == "/token":
            return _json(200, {"access_token": "good-token", "token_type": "Bearer", "expires_in": 3600})
        if seen.path == "/mcp" and seen.headers.get("authorization") != "Bearer good-token":
            self.refusals += 1
            challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
            headers = {"www-authenticate": challenge, "content-length": str(self.refusal_size)}
            return Reply(401, headers, filler(self.refusal_size))
        if seen.path == "/mcp":
            message = json.loads(seen.body)
            if "id" not in message:
                return Reply(202)
            return _json(200, {"jsonrpc": "2.0", "id": message["id"], "result": _result(message)})
        return Reply(404)


async def test_an_oauth_refusal_body_is_never_read_whole() -> None:
    """Item 11: the flow read a 401's body whole before asking again (+513 MiB for 512 MiB), and httpx2's auth
    loop reads it too; now both find it dropped after a bounded number of bytes."""
    server = ProtectedServer(HUGE)
    async with HostileHttp(server.route).serving() as base:
        server.base = base
        auth = OAuth(ClientCredentials("machine", issuer=base, client_secret="s"))

        async def session() -> None:
            transport = http(f"{base}/mcp", auth=auth)
            async with Client(transport, protocol="2026-07-28", timeout=POLICY, retry=None) as client:
                result = await client.call_tool("echo", {"text": "signed in"})
            assert result.content[0].text == "signed in"  # type: ignore[union-attr]

        peak = await _peak(session)
    assert server.refusals >= 1
    assert peak < BOUND, f"{peak / 1e6:.0f} MB to sign in past a {HUGE / 1e6:.0f} MB refusal"


@functools.cache
def _bomb(prefix: bytes) -> bytes:
    """HUGE bytes after ``prefix``, in some 64 KB of gzip."""
    return gzip.compress(prefix + b"A" * HUGE)


def _streamable_route(kind: str) -> Callable[[Seen], Awaitable[Reply]]:
    """A Streamable HTTP endpoint (2026-07-28) whose answer to ``tools/call`` is hostile in the way ``kind`` says."""
    bomb = _bomb(b'{"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "')
    event = _bomb(b"event: message\ndata: ")

    async def route(seen: Seen) -> Reply:
        message = json.loads(seen.body)
        if "id" not in message:
            return Reply(202)
        if message["method"] != "tools/call":
            return _json(200, {"jsonrpc": "2.0", "id": message["id"], "result": _result(message)})
        if kind == "json answer":
            return Reply(200, {"content-type": "application/json", "content-length": str(HUGE)}, filler(HUGE))
        if kind == "error body":
            return Reply(500, {"content-type": "text/plain", "content-length": str(HUGE)}, filler(HUGE))
        if kind == "gzip error body":
            return Reply(400, {"content-type": "application/json", "content-encoding": "gzip"}, bomb)
        if kind == "gzip answer":
            return Reply(200, {"content-type": "application/json", "content-encoding": "gzip"}, bomb)
        assert kind == "gzip event stream"
        return Reply(200, {"content-type": "text/event-stream", "content-encoding": "gzip"}, event)

    return route


@pytest.mark.parametrize("kind", ["json answer", "error body", "gzip error body", "gzip answer", "gzip event stream"])
async def test_a_streamable_http_body_costs_bounded_memory(http_engine: str, kind: str) -> None:
    """Answers, error bodies and event streams, plain or compressed, on both engines: a typed error, and a peak far
    below what the server sent (item 14: inflated a piece at a time, the total after inflation bounded)."""
    route = _streamable_route(kind)  # (its bomb made before the memory is traced)
    async with HostileHttp(route).serving() as base:

        async def call() -> None:
            transport = http(f"{base}/mcp", max_message_size=1_000_000)
            async with Client(transport, protocol="2026-07-28", timeout=POLICY, retry=None) as client:
                with pytest.raises(MCPClientError):  # (a 4xx body's head is no JSON-RPC error: -32600)
                    await client.call_tool("echo", {"text": "boom"})

        peak = await _peak(call)
    assert peak < BOUND, f"{peak / 1e6:.0f} MB for a {kind} of {HUGE / 1e6:.0f} MB"


async def test_a_callers_httpx_client_inflates_a_piece_at_a_time() -> None:
    """Item 14 on a caller's httpx 0.28 client: its decoder inflates each received chunk whole (a 64 KB chunk of a
    gzip bomb is some 64 MB at once); the bounded reader inflates the raw body itself, 64 KB at a time."""
    async with HostileHttp(_streamable_route("gzip answer")).serving() as base, httpx.AsyncClient() as own:

        async def call() -> None:
            transport = http(f"{base}/mcp", client=own, max_message_size=1_000_000)
            async with Client(transport, protocol="2026-07-28", timeout=POLICY, retry=None) as client:
                with pytest.raises(ProtocolError, match="limit"):
                    await client.call_tool("echo", {"text": "boom"})

        peak = await _peak(call)
    assert peak < BOUND, f"{peak / 1e6:.0f} MB through a caller's httpx client"


async def test_a_half_read_error_body_leaves_no_generator_to_the_collector(http_engine: str) -> None:
    """Item 19: an error body read only up to its limit left its body generators to the garbage collector, which
    on trio warns for each (~80 ResourceWarnings per 40 errors). Every generator is closed when reading stops."""

    async def route(seen: Seen) -> Reply:
        message = json.loads(seen.body)
        if "id" not in message:
            return Reply(202)
        if message["method"] != "tools/call":
            return _json(200, {"jsonrpc": "2.0", "id": message["id"], "result": _result(message)})
        return Reply(500, {"content-type": "text/plain", "content-length": str(2 * 1024 * 1024)}, filler(2 << 20))

    gc.collect()  # (what earlier tests in this process left to the collector is theirs, not this test's)
    await anyio.lowlevel.checkpoint()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with HostileHttp(route).serving() as base:
            async with Client(http(f"{base}/mcp"), protocol="2026-07-28", timeout=POLICY, retry=None) as client:
                for _ in range(10):
                    with pytest.raises(TransportError, match="500"):
                        await client.call_tool("echo", {"text": "x"})
            gc.collect()
            await anyio.lowlevel.checkpoint()  # (trio closes a collected generator in a task of its own, and warns)
            gc.collect()
    left = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    if http_engine == "httpx2":
        # httpx2's own response stream (AsyncResponseStream.__aiter__) drops httpcore2's generator when it is
        # closed early, out of our reach; every generator of ours and of the response we read is closed. Which of
        # httpcore2's generators it drops depends on its release: the pool's stream (2.16) or the connection's
        # (2.17), so it is told by its package, not its name.
        left = [message for message in left if "generator 'httpcore2._async." not in message]
    assert not left, sorted({message[:90] for message in left})


async def test_a_hosts_own_auth_retries_past_a_refusal_without_reading_it_whole() -> None:
    """A host's own ``Auth`` (Digest here) asks again after a 401: httpx's auth loop read that 401's body whole
    in between; every auth a transport is given now drops it after a bounded number of bytes (item 11)."""

    async def route(seen: Seen) -> Reply:
        if not seen.headers.get("authorization", "").startswith("Digest "):
            challenge = 'Digest realm="mcp", nonce="n0nce", qop="auth", algorithm=MD5'
            headers = {"www-authenticate": challenge, "content-length": str(HUGE)}
            return Reply(401, headers, filler(HUGE))
        message = json.loads(seen.body)
        if "id" not in message:
            return Reply(202)
        return _json(200, {"jsonrpc": "2.0", "id": message["id"], "result": _result(message)})

    async with HostileHttp(route).serving() as base:

        async def session() -> None:
            transport = http(f"{base}/mcp", auth=httpx2.DigestAuth("user", "secret"))
            async with Client(transport, protocol="2026-07-28", timeout=POLICY, retry=None) as client:
                result = await client.call_tool("echo", {"text": "digested"})
            assert result.content[0].text == "digested"  # type: ignore[union-attr]

        peak = await _peak(session)
    assert peak < BOUND, f"{peak / 1e6:.0f} MB to answer a Digest challenge carried by {HUGE / 1e6:.0f} MB"


@functools.cache
def _coded_bomb(coding: str) -> bytes:
    """HUGE zero bytes under ``coding``: ``zstd`` (which httpx 0.28 asks for when zstandard is installed), or gzip
    with a coding nobody knows stacked on it (which the HTTP library skips, and then inflates the gzip itself)."""
    if coding == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(level=19).compress(bytes(HUGE))
    return gzip.compress(bytes(HUGE))


@pytest.mark.parametrize("coding", ["zstd", "gzip, unknown"])
async def test_a_coding_the_bounded_reader_cannot_inflate_is_never_handed_to_the_library(coding: str) -> None:
    """A caller's httpx 0.28 client decodes a ``zstd`` body (or gzip under an unknown coding), one received chunk
    at a time, whole: 64 KB of zstd are 2 GB at once. The bounded reader refuses a coding it does not inflate
    itself, typed, and asks only for those it does (``Accept-Encoding: gzip, deflate``)."""
    pytest.importorskip("zstandard", reason="httpx 0.28 decodes zstd only with zstandard installed")
    body = _coded_bomb(coding)

    async def route(seen: Seen) -> Reply:
        message = json.loads(seen.body)
        if "id" not in message:
            return Reply(202)
        if message["method"] != "tools/call":
            return _json(200, {"jsonrpc": "2.0", "id": message["id"], "result": _result(message)})
        return Reply(200, {"content-type": "application/json", "content-encoding": coding}, body)

    server = HostileHttp(route)
    async with server.serving() as base, httpx.AsyncClient() as own:

        async def call() -> None:
            transport = http(f"{base}/mcp", client=own, max_message_size=1_000_000)
            async with Client(transport, protocol="2026-07-28", timeout=POLICY, retry=None) as client:
                with pytest.raises(MCPClientError):
                    await client.call_tool("echo", {"text": "boom"})

        peak = await _peak(call)
    assert peak < BOUND, f"{peak / 1e6:.0f} MB for a {coding} body of {HUGE / 1e6:.0f} MB through a caller's client"
    assert all(seen.headers.get("accept-encoding") == "gzip, deflate" for seen in server.requests)
