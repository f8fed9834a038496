"""A client's life, as httpx's ``ClientState``: entered once, closed once, never entered again once closed."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable

import anyio
import pytest

from mcp_client import Client, ConnectError
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


@pytest.mark.fake_clock
async def test_closing_from_another_task_while_entering_ends_the_entry_and_closes_the_client(
    connect: Callable[..., Client],
) -> None:
    """``aclose()`` while ``__aenter__`` is still connecting (red team): the entry ends with a ``ConnectError``,
    the client is CLOSED (not entered again), and nothing raises a cancel scope's ``RuntimeError``."""
    peer = ScriptedPeer(era="auto", discover="silent")  # the handshake waits out the probe first
    client = connect(peer, probe_timeout=5)
    raised: list[BaseException] = []

    async def enter() -> None:
        try:
            await client.__aenter__()
        except Exception as exc:
            raised.append(exc)

    with anyio.fail_after(4):  # well before the probe's 5 s: the close does not wait for the handshake
        async with anyio.create_task_group() as tg:
            tg.start_soon(enter)
            await anyio.sleep(1)
            await client.aclose()
    assert [type(e) for e in raised] == [ConnectError]
    assert "closed" in str(raised[0])
    assert state(client) is ClientState.CLOSED
    with pytest.raises(RuntimeError, match="Cannot reopen a Client"):
        await client.__aenter__()
    await client.aclose()  # closing again does nothing


async def test_a_closed_client_says_so_for_every_use(connect: Callable[..., Client]) -> None:
    """Red team: a closed client's methods raise the lifecycle's own error (not a transport's "stopped reading",
    nor anyio's "task group is not active" from a handle), and set_log_level is not silently kept."""
    client = connect(ScriptedPeer(era="modern"))
    async with client:
        pass
    with pytest.raises(RuntimeError, match="client is closed"):
        await client.call_tool("echo", {"text": "x"})
    with pytest.raises(RuntimeError, match="client is closed"):
        await client.request("ping")
    with pytest.raises(RuntimeError, match="client is closed"):
        await client.list_tools(cache=False)
    with pytest.raises(RuntimeError, match="client is closed"):
        await client.set_log_level("info")
    with pytest.raises(RuntimeError, match="client is closed"):
        client.tool_call("echo", {"text": "x"})


async def test_closing_an_open_client_from_another_task_is_refused_plainly(connect: Callable[..., Client]) -> None:
    """Red team: the client's task group was entered by the task that entered the client, and only that task can
    leave it; ``aclose()`` from another task used to corrupt the cancel scopes (and cancel the entering task). It
    is refused with a plain error, touching nothing, and the client still works and closes from its own task."""
    async with connect(ScriptedPeer(era="modern")) as client:
        refused: list[BaseException] = []

        async def close_elsewhere() -> None:
            try:
                await client.aclose()
            except RuntimeError as exc:
                refused.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(close_elsewhere)
        assert len(refused) == 1
        assert "task that entered it" in str(refused[0])
        assert state(client) is ClientState.OPENED
        assert text_of(await client.call_tool("echo", {"text": "still"})) == "still"
    assert state(client) is ClientState.CLOSED


async def test_a_closed_client_leaves_no_stream_unclosed(connect: Callable[..., Client]) -> None:
    """Red team (nothing left): the in-memory transport's reader left its end of the server's pipe unclosed, one
    ``ResourceWarning`` per client once collected."""
    gc.collect()  # (what earlier tests left is not this client's)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        client = connect(ScriptedPeer(era="modern"))
        async with client:
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
        del client
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
