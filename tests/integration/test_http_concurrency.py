"""Many calls at once over Streamable HTTP with the client :func:`~mcp_client.transports.http.http` makes: each
call is handed a connection of its own (no call is handed one another took and has to go round again), and
idle connections are reused up to the keep-alive limit, not reopened.

The server is a minimal HTTP/1.1 endpoint on a real local socket (keep-alive, JSON answers) that holds every
``tools/call`` until the whole burst has arrived, so exactly ``BURST`` calls are in flight together, and counts
the TCP connections it accepted.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import pytest

from mcp_client import Client, TimeoutPolicy
from mcp_client.transports.http import DEFAULT_LIMITS, http

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=30, maximum=60, connect=30)
BURST = 30
_keepalive = DEFAULT_LIMITS.max_keepalive_connections
assert _keepalive is not None
KEEPALIVE: int = _keepalive
assert KEEPALIVE < BURST


class Endpoint:
    """``POST /mcp``: answers ``server/discover`` and ``tools/call`` ``echo``; ``tools/call`` waits for its burst."""

    def __init__(self, burst: int) -> None:
        self.burst = burst
        self.accepted = 0
        self.waiting = 0
        self.most_waiting = 0
        self.gate = anyio.Event()

    async def serve(self, stream: anyio.abc.ByteStream) -> None:
        self.accepted += 1
        buffer = b""
        async with stream:
            while True:
                while b"\r\n\r\n" not in buffer:
                    try:
                        buffer += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        return
                head, buffer = buffer.split(b"\r\n\r\n", 1)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buffer) < length:
                    buffer += await stream.receive()
                body, buffer = json.loads(buffer[:length]), buffer[length:]
                await stream.send(await self.answer(body))

    async def answer(self, body: dict[str, Any]) -> bytes:
        if "id" not in body:
            return b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
        if body["method"] == "tools/call":
            await self.wait_for_the_burst()
            result: dict[str, Any] = {"content": [{"type": "text", "text": body["params"]["arguments"]["text"]}]}
        else:
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
        payload = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        return head.encode() + payload

    async def wait_for_the_burst(self) -> None:
        gate = self.gate
        self.waiting += 1
        self.most_waiting = max(self.most_waiting, self.waiting)
        if self.waiting == self.burst:
            self.waiting = 0
            self.gate = anyio.Event()
            gate.set()
        await gate.wait()


@pytest.fixture
async def endpoint() -> AsyncIterator[tuple[Endpoint, str]]:
    server = Endpoint(BURST)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, server.serve)
        yield server, f"http://127.0.0.1:{port}/mcp"
        tg.cancel_scope.cancel()


async def test_bursts_of_calls_reuse_the_kept_alive_connections(
    endpoint: tuple[Endpoint, str], refusals: list[object], http_engine: str
) -> None:
    server, url = endpoint
    answers: list[str] = []

    async def call(client: Client, text: str) -> None:
        result = await client.call_tool("echo", {"text": text})
        answers.append(result.content[0].text)  # type: ignore[union-attr]

    async with Client(http(url), protocol="2026-07-28", timeout=POLICY) as client:
        with anyio.fail_after(30):
            for burst in range(2):
                async with anyio.create_task_group() as tg:
                    for index in range(BURST):
                        tg.start_soon(call, client, f"{burst}-{index}")
    assert sorted(answers) == sorted(f"{burst}-{index}" for burst in range(2) for index in range(BURST))
    assert server.most_waiting == BURST
    # The first burst needs BURST connections (the probe's is reused); KEEPALIVE of them stay open for the
    # second burst, which opens only the rest.
    assert server.accepted == BURST + (BURST - KEEPALIVE)
    # No call was handed a connection another call had been handed too (and sent again).
    assert refusals == []
