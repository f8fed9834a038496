"""A client's life, as httpx's ``ClientState``: entered once, closed once, never entered again once closed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_client import Client
from mcp_client.client.client import ClientState
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio


def state(client: Client) -> ClientState:
    return client._state


async def test_a_client_is_unopened_then_opened_then_closed(connect: Callable[..., Client]) -> None:
    client = connect(ScriptedPeer(era="modern"))
    assert state(client) is ClientState.UNOPENED
    async with client:
        assert state(client) is ClientState.OPENED
        assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
    assert state(client) is ClientState.CLOSED
    await client.aclose()  # closing again does nothing
    assert state(client) is ClientState.CLOSED


async def test_an_open_client_cannot_be_entered_again(connect: Callable[..., Client]) -> None:
    async with connect(ScriptedPeer(era="modern")) as client:
        with pytest.raises(RuntimeError, match="entered only once"):
            await client.__aenter__()
        assert state(client) is ClientState.OPENED


async def test_a_closed_client_cannot_be_reopened(connect: Callable[..., Client]) -> None:
    peer = ScriptedPeer(era="modern")
    client = connect(peer)
    async with client:
        pass
    with pytest.raises(RuntimeError, match="Cannot reopen a Client"):
        async with client:
            pass  # pragma: no cover
    assert state(client) is ClientState.CLOSED
    assert peer.stats.connections == 1  # nothing was connected the second time
