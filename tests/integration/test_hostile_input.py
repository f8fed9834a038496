"""Bad input from a server is a report and costs no other message, on every transport and backend.

The scripted peer's ``hostile`` tool writes one bad line and the true answer of the call in a single write, so a
reader that loses the rest of a chunk after a bad line loses the answer. Lines nested thousands deep make the JSON
decoder raise ``RecursionError`` (not a ``ValueError``); that once escaped the line reader: trio's client died with
an exception group and asyncio's pipe callback dropped the answers read with the bad line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import anyio
import pytest

from mcp_client import (
    Client,
    Event,
    MCPClientError,
    ProgressRejected,
    ProtocolViolation,
    ServerError,
    TimeoutPolicy,
    http,
    stdio,
)
from mcp_client.testing._peer_hostile import HOSTILE_KINDS
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports._json import loads
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]
LIMIT = 1_000_000
"""The client's message size limit here: the peer's huge lines (2 MB) pass it."""


def reports(events: list[Event]) -> list[Event]:
    return [e for e in events if isinstance(e, ProtocolViolation | ProgressRejected)]


def test_the_decoder_turns_deep_nesting_into_a_value_error() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ValueError, match="nested"):
        loads(deep)
    with pytest.raises(ValueError, match="nested"):
        loads(b"  " + deep)  # json.loads' own path, taken for leading whitespace


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
async def test_each_kind_of_bad_input_is_reported_and_costs_nothing_else(
    connect: Connect, events: list[Event], kind: str
) -> None:
    async with connect(ScriptedPeer(), max_message_size=LIMIT) as client:
        result = await client.call_tool("hostile", {"kind": kind})
        after = await client.call_tool("echo", {"text": "next"})

    assert text_of(result) == f"survived {kind}"
    assert text_of(after) == "next"
    assert reports(events), f"{kind}: no ProtocolViolation or ProgressRejected event"


async def test_a_response_with_result_and_error_fails_its_call_typed(connect: Connect) -> None:
    async with connect(ScriptedPeer()) as client:
        with pytest.raises(ServerError):
            await client.call_tool("result_and_error")
        assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"


@pytest.mark.real_clock
@pytest.mark.parametrize("kind", ["deep_nesting", "deep_nesting_response", "truncated", "huge_line"])
async def test_bad_input_on_a_real_pipe_loses_no_answer(kind: str) -> None:
    """Over a real process's stdout (asyncio: the loop's pipe callback; trio: the reader task)."""
    events: list[Event] = []
    transport = stdio(sys.executable, ["-m", "mcp_client.testing.peer"], max_message_size=LIMIT)
    policy = TimeoutPolicy(idle=None, maximum=20, connect=30)
    async with Client(transport, timeout=policy, on_event=events.append) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("hostile", {"kind": kind})
            after = await client.call_tool("echo", {"text": "next"})

    assert text_of(result) == f"survived {kind}"
    assert text_of(after) == "next"
    assert [e for e in events if isinstance(e, ProtocolViolation)]


@pytest.mark.real_clock
@pytest.mark.parametrize("kind", ["deep_nesting", "deep_nesting_response", "truncated", "not_an_object", "many_values"])
async def test_bad_input_over_http_loses_no_answer(kind: str) -> None:
    events: list[Event] = []
    policy = TimeoutPolicy(idle=None, maximum=20, connect=30)
    async with (
        HttpPeer(ScriptedPeer()).serving() as url,
        Client(http(url), timeout=policy, on_event=events.append) as client,
    ):
        with anyio.fail_after(30):
            try:
                result = await client.call_tool("hostile", {"kind": kind})
            except MCPClientError as exc:
                pytest.fail(f"{kind}: the call failed ({exc!r}); events: {events}")
            after = await client.call_tool("echo", {"text": "next"})

    assert text_of(result) == f"survived {kind}"
    assert text_of(after) == "next"
    assert [e for e in events if isinstance(e, ProtocolViolation)]
