"""Input from a person (elicitation): 2026-07-28 ``input_required`` rounds and 2025-11-25 server requests.

Every round gets a fresh id and a fresh token and echoes ``requestState``; while the host's handler runs (a person
is answering) the idle clock stops, and the maximum stops only with ``pause_maximum``. The scripted peer has no
tool that asks for input, so these tests use two small servers of their own, one per era.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import mcp_types
import pytest

from mcp_client import Client, Event, IdleTimeout, MaxTimeout, RequestSent, TimeoutPolicy, memory
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

ELICITATION = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Who is asking?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
}
Handler = Callable[[mcp_types.ElicitRequestParams], Awaitable[mcp_types.ElicitResult]]


class _LineServer:
    """A server reading one JSON message per line; subclasses say what to answer."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    async def serve(self, receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        buffer = b""
        async for chunk in receive:
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                self.received.append(message)
                for reply in self.answer(message):
                    await send.send(json.dumps(reply).encode() + b"\n")

    def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def tool_calls(self) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == "tools/call"]


class _ModernServer(_LineServer):
    """2026-07-28: `tools/call` answers input_required (one elicitation, a requestState) until the answer comes."""

    def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        if "id" not in message:
            return []
        if message["method"] == "server/discover":
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
            }
        elif "requestState" not in message["params"]:
            result = {"resultType": "input_required", "inputRequests": {"who": ELICITATION}, "requestState": "s-1"}
        else:
            name = message["params"]["inputResponses"]["who"]["content"]["name"]
            result = {"resultType": "complete", "content": [{"type": "text", "text": f"hello {name}"}]}
        return [{"jsonrpc": "2.0", "id": message["id"], "result": result}]


class _LegacyServer(_LineServer):
    """2025-11-25: during `tools/call` it sends `elicitation/create` to the client and answers once it has the reply."""

    def __init__(self) -> None:
        super().__init__()
        self.pending_call: Any = None

    def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        method = message.get("method")
        if "id" not in message:
            return []
        if method == "server/discover":
            return [{"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no discover"}}]
        if method == "initialize":
            info = {"name": "legacy", "version": "1"}
            result: dict[str, object] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": info,
            }
            return [{"jsonrpc": "2.0", "id": message["id"], "result": result}]
        if method == "tools/call":
            self.pending_call = message["id"]
            return [{"jsonrpc": "2.0", "id": "ask-1", **ELICITATION}]
        if method is None and message["id"] == "ask-1":  # the client's answer to our elicitation
            name = message["result"]["content"]["name"]
            result = {"content": [{"type": "text", "text": f"hello {name}"}]}
            return [{"jsonrpc": "2.0", "id": self.pending_call, "result": result}]
        return [{"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}]


def person(seconds: float, name: str = "Ada") -> Handler:
    """An elicitation handler: a person who takes ``seconds`` to type ``name``."""

    async def answer(request: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        await anyio.sleep(seconds)
        return mcp_types.ElicitResult(action="accept", content={"name": name})

    return answer


def progress_token_of(message: dict[str, Any]) -> object:
    return message["params"].get("_meta", {}).get("progressToken")


async def test_each_input_round_gets_a_fresh_id_and_token_and_echoes_the_state(events: list[Event]) -> None:
    """input_required: the next round is a new request (fresh id, fresh token) with the answers and requestState."""
    server = _ModernServer()
    async with Client(memory(server.serve), elicitation=person(0), on_event=events.append) as client:
        result = await client.call_tool("ask", {"topic": "x"})

    assert text_of(result) == "hello Ada"
    first, second = server.tool_calls()
    assert first["id"] != second["id"]
    assert progress_token_of(first) != progress_token_of(second)
    assert second["params"]["requestState"] == "s-1"
    assert second["params"]["inputResponses"] == {"who": {"action": "accept", "content": {"name": "Ada"}}}
    assert second["params"]["arguments"] == {"topic": "x"}
    assert "requestState" not in first["params"]
    assert [e.request_id for e in events if isinstance(e, RequestSent) and e.method == "tools/call"] == [
        first["id"],
        second["id"],
    ]


@pytest.mark.fake_clock
async def test_idle_clock_stops_while_a_person_answers_an_input_round() -> None:
    """While the host answers an input request, the idle clock stops: a 30 s answer survives a 5 s idle limit."""
    server = _ModernServer()
    client = Client(memory(server.serve), elicitation=person(30), timeout=TimeoutPolicy(idle=5, maximum=100))
    async with client:
        start = anyio.current_time()
        result = await client.call_tool("ask")
        elapsed = anyio.current_time() - start

    assert text_of(result) == "hello Ada"
    assert elapsed == pytest.approx(30)


@pytest.mark.fake_clock
async def test_idle_clock_runs_again_after_the_answer() -> None:
    """The idle clock stops only while the person answers: a server silent afterwards still times out."""

    class _SilentAfterAnswer(_ModernServer):
        def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
            return [] if message.get("params", {}).get("requestState") else super().answer(message)

    server = _SilentAfterAnswer()
    client = Client(memory(server.serve), elicitation=person(30), timeout=TimeoutPolicy(idle=5, maximum=100))
    async with client:
        start = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await client.call_tool("ask")
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(35)


@pytest.mark.fake_clock
async def test_maximum_keeps_running_while_a_person_answers() -> None:
    """The maximum is a promise to the caller: by default it does not stop while a person answers."""
    server = _ModernServer()
    client = Client(memory(server.serve), elicitation=person(30), timeout=TimeoutPolicy(idle=5, maximum=10))
    async with client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("ask")
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(10)


@pytest.mark.fake_clock
async def test_pause_maximum_stops_the_maximum_too() -> None:
    """pause_maximum=True: the maximum also stops while a person answers."""
    server = _ModernServer()
    policy = TimeoutPolicy(idle=5, maximum=10, pause_maximum=True)
    async with Client(memory(server.serve), elicitation=person(30), timeout=policy) as client:
        result = await client.call_tool("ask")

    assert text_of(result) == "hello Ada"


@pytest.mark.fake_clock
async def test_idle_clock_stops_while_a_person_answers_a_legacy_server_request() -> None:
    """2025-11-25: while the host answers the server's elicitation/create, the idle clock of the call stops."""
    server = _LegacyServer()
    client = Client(memory(server.serve), elicitation=person(30), timeout=TimeoutPolicy(idle=5, maximum=100))
    async with client:
        assert client.protocol_version == "2025-11-25"
        start = anyio.current_time()
        result = await client.call_tool("ask")
        elapsed = anyio.current_time() - start

    assert text_of(result) == "hello Ada"
    assert elapsed == pytest.approx(30)
    (reply,) = [m for m in server.received if m.get("id") == "ask-1"]
    assert reply["result"] == {"action": "accept", "content": {"name": "Ada"}}
