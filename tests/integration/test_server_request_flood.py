"""A server that floods the client with requests of its own (2025-11-25) gets at most ``max_server_requests`` of
the host's handlers at once, and the rest of a flood beyond the bound is dropped and reported; the call that
carried the flood, and the next one, are answered."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import mcp_types
import pytest

from mcp_client import Client, Event, ProtocolViolation
from mcp_client.session.server_requests import DEFAULT_MAX_SERVER_REQUESTS, WAITING_PER_HANDLER
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]


async def test_an_elicitation_flood_runs_a_bounded_number_of_handlers_and_drops_the_rest(
    connect: Connect, events: list[Event]
) -> None:
    running = most = 0

    async def ask_a_person(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        nonlocal running, most
        running += 1
        most = max(most, running)
        try:
            await anyio.sleep_forever()  # nobody answers: each handler holds its place until the client closes
        finally:
            running -= 1
        raise AssertionError("unreachable")

    async with connect(ScriptedPeer(), protocol="2025-11-25", elicitation=ask_a_person) as client:
        flood = await client.call_tool("flood_client", {"method": "elicitation/create", "count": 2_000})
        assert text_of(flood) == "flooded 2000"
        assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"
        await anyio.sleep(0.1)
        assert most == DEFAULT_MAX_SERVER_REQUESTS

    dropped = [e for e in events if isinstance(e, ProtocolViolation) and "dropped unanswered" in e.detail]
    assert len(dropped) == 2_000 - DEFAULT_MAX_SERVER_REQUESTS * WAITING_PER_HANDLER


async def test_a_ping_flood_from_a_reading_server_is_answered_up_to_the_bound(
    connect: Connect, events: list[Event]
) -> None:
    async with connect(ScriptedPeer(), protocol="2025-11-25") as client:
        flood = await client.call_tool("flood_client", {"method": "ping", "count": 50})
        assert text_of(flood) == "flooded 50"
        assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"
    assert not [e for e in events if isinstance(e, ProtocolViolation)]
