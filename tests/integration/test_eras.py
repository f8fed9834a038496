"""Both protocol eras: 2026-07-28 (stateless, ``server/discover``) and 2025-11-25 (``initialize``), the fallback
between them, the connect budget, and the list/get helpers (all pages fetched) in each.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import anyio
import anyio.abc
import mcp_types
import pytest

from mcp_client import (
    Client,
    ConnectError,
    Event,
    InvalidParams,
    RequestSent,
    ServerNotification,
    TimeoutPolicy,
    memory,
)
from mcp_client.testing.peer import CATALOGUE as TOOLS, ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
ERAS = [("modern", "2026-07-28"), ("legacy", "2025-11-25")]


def methods(peer: ScriptedPeer) -> list[str]:
    return [m["method"] for m in peer.stats.received if "method" in m]


async def test_modern_peer_speaks_2026_07_28_without_a_handshake(connect: Connect) -> None:
    """A 2026-07-28 server: discover answers, no initialize, every request stamped with the protocol version."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        result = await client.call_tool("echo", {"text": "modern"})
        assert client.protocol_version == "2026-07-28"
        assert client.era.modern
        assert client.server_info is not None
        assert client.server_info.name == "mcp-client-scripted-peer"

    assert text_of(result) == "modern"
    assert methods(peer) == ["server/discover", "tools/call"]
    assert all(m["params"]["_meta"][PROTOCOL_VERSION_KEY] == "2026-07-28" for m in peer.stats.received)


async def test_legacy_peer_falls_back_to_initialize(connect: Connect) -> None:
    """A 2025-11-25 server refuses discover: the client falls back to initialize + notifications/initialized."""
    peer = ScriptedPeer(era="legacy")
    async with connect(peer) as client:
        result = await client.call_tool("echo", {"text": "legacy"})
        assert client.protocol_version == "2025-11-25"
        assert not client.era.modern
        assert client.server_info is not None
        assert client.server_info.name == "mcp-client-scripted-peer"

    assert text_of(result) == "legacy"
    assert methods(peer) == ["server/discover", "initialize", "notifications/initialized", "tools/call"]
    assert peer.stats.initialized_notifications == 1
    (call,) = [m for m in peer.stats.received if m.get("method") == "tools/call"]
    assert PROTOCOL_VERSION_KEY not in call["params"].get("_meta", {})


async def test_auto_peer_is_spoken_to_in_the_modern_era(connect: Connect) -> None:
    """A server speaking both eras gets 2026-07-28."""
    peer = ScriptedPeer(era="auto")
    async with connect(peer) as client:
        assert client.protocol_version == "2026-07-28"
        assert text_of(await client.call_tool("echo", {"text": "x"})) == "x"


async def test_pinned_legacy_version_skips_the_probe(connect: Connect) -> None:
    """protocol="2025-11-25" goes straight to initialize, no discover probe."""
    peer = ScriptedPeer(era="auto")
    async with connect(peer, protocol="2025-11-25") as client:
        assert client.protocol_version == "2025-11-25"
        await client.call_tool("echo")

    assert "server/discover" not in methods(peer)


async def test_client_answers_the_servers_ping_in_the_legacy_era(connect: Connect) -> None:
    """2025-11-25: the client answers a server-initiated ping."""
    peer = ScriptedPeer(era="legacy")
    async with connect(peer) as client:
        result = await client.call_tool("ping_client")

    assert text_of(result) == "pong received"
    assert not result.is_error
    assert [(r["id"], r.get("result")) for r in peer.stats.client_responses] == [("srv-1", {})]


@pytest.mark.fake_clock
async def test_connect_budget_bounds_the_handshake(events: list[Event]) -> None:
    """connect: a server that never answers the handshake fails with ConnectError at exactly the connect budget."""

    async def mute(receive: object, send: object) -> None:
        await anyio.sleep_forever()

    start = anyio.current_time()
    with pytest.raises(ConnectError):
        async with Client(memory(mute), timeout=TimeoutPolicy(connect=4), probe_timeout=60, on_event=events.append):
            pass
    assert anyio.current_time() - start == pytest.approx(4)
    assert [e.method for e in events if isinstance(e, RequestSent)] == ["server/discover"]


async def test_handshake_refused_is_a_connect_error(events: list[Event]) -> None:
    """A server that refuses both discover and initialize fails the start-up with ConnectError (the handshake)."""

    async def refuse_everything(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        buffer = b""
        async for chunk in receive:
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                if "id" in message:
                    error = {"code": -32601, "message": f"no {message['method']} here"}
                    await send.send(
                        json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode() + b"\n"
                    )

    with pytest.raises(ConnectError):
        async with Client(memory(refuse_everything), on_event=events.append):
            pass
    assert [e.method for e in events if isinstance(e, RequestSent)] == ["server/discover", "initialize"]


class _AnnounceListChangedFirst(anyio.abc.ByteSendStream):
    """The peer's output, preceded by an unsolicited notifications/tools/list_changed before its first answer."""

    def __init__(self, inner: anyio.abc.ByteSendStream) -> None:
        self._inner = inner
        self._announced = False

    async def send(self, item: bytes) -> None:
        if not self._announced:
            self._announced = True
            notification = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}
            await self._inner.send(json.dumps(notification).encode() + b"\n")
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_unsolicited_notifications_are_tolerated(events: list[Event], era: str) -> None:
    """A notification nobody asked for (list_changed right after start) is an event, and harms nothing."""
    peer = ScriptedPeer(era=era)  # type: ignore[arg-type]

    async def serve(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        await peer.serve(receive, _AnnounceListChangedFirst(send))

    async with Client(memory(serve), on_event=events.append) as client:
        result = await client.call_tool("echo", {"text": "still here"})

    assert text_of(result) == "still here"
    notifications = [e for e in events if isinstance(e, ServerNotification)]
    assert [e.method for e in notifications] == ["notifications/tools/list_changed"]


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_list_tools_fetches_every_page(connect: Connect, era: str, version: str) -> None:
    """Pagination: list_tools follows nextCursor until every tool is listed, once each."""
    peer = ScriptedPeer(era=era, page_size=3)  # type: ignore[arg-type]
    async with connect(peer) as client:
        tools = await client.list_tools()
        assert client.protocol_version == version

    assert [tool.name for tool in tools] == [tool.name for tool in TOOLS]
    assert methods(peer).count("tools/list") == math.ceil(len(TOOLS) / 3)
    echo = next(tool for tool in tools if tool.name == "echo")
    assert echo.annotations is not None
    assert echo.annotations.idempotent_hint is True


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_prompts_helpers(connect: Connect, era: str, version: str) -> None:
    """list_prompts and get_prompt return the mcp-types models, in both eras."""
    peer = ScriptedPeer(era=era)  # type: ignore[arg-type]
    async with connect(peer) as client:
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        with pytest.raises(InvalidParams):
            await client.get_prompt("no_such_prompt")

    assert [p.name for p in prompts] == ["greet"]
    (message,) = prompt.messages
    assert isinstance(message.content, mcp_types.TextContent)
    assert message.content.text == "Hello, Ada!"


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_resources_helpers(connect: Connect, era: str, version: str) -> None:
    """list_resources and read_resource return the mcp-types models, in both eras."""
    peer = ScriptedPeer(era=era)  # type: ignore[arg-type]
    async with connect(peer) as client:
        resources = await client.list_resources()
        read = await client.read_resource("memo://hello")
        with pytest.raises(InvalidParams):
            await client.read_resource("memo://missing")

    assert [str(r.uri) for r in resources] == ["memo://hello"]
    (contents,) = read.contents
    assert isinstance(contents, mcp_types.TextResourceContents)
    assert contents.text == "hello"


class _SlowToStart(anyio.abc.ByteReceiveStream):
    """A server that starts reading its input only after ``delay`` seconds (a Python server importing its SDK on a
    loaded machine): the discover probe times out, yet the server reads it first when it is up."""

    def __init__(self, inner: anyio.abc.ByteReceiveStream, delay: float) -> None:
        self._inner = inner
        self._delay: float | None = delay

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._delay is not None:
            await anyio.sleep(self._delay)
            self._delay = None
        return await self._inner.receive(max_bytes)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.mark.fake_clock
async def test_a_probe_answered_too_late_still_ends_in_the_modern_era(events: list[Event]) -> None:
    """The probe timed out, so initialize followed; the server took the probe when it came up and refuses
    initialize with -32022 naming 2026-07-28: the client probes once more and speaks 2026-07-28 (seen with
    mcp-server-time, mcp 2.3.0, on a busy machine)."""
    peer = ScriptedPeer(era="auto")

    async def serve(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        await peer.serve(_SlowToStart(receive, delay=8.0), send)

    async with Client(memory(serve), probe_timeout=5.0, on_event=events.append) as client:
        assert client.protocol_version == "2026-07-28"
        assert text_of(await client.call_tool("echo", {"text": "late but fine"})) == "late but fine"
    assert methods(peer) == ["server/discover", "initialize", "server/discover", "tools/call"]
