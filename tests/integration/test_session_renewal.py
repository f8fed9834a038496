"""2025-11-25 over HTTP: when the server ends our session (404 to a request carrying ``Mcp-Session-Id``), the
client starts a new session with ``initialize`` and sends the request again, once, as the spec requires.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from mcp_client import (
    Client,
    MaxTimeout,
    PartialTimeout,
    PolicyLayer,
    PolicyRegistry,
    RequestCancelled,
    SessionExpired,
    TimeoutPolicy,
    http,
)
from mcp_client.testing._peer_tools import JsonObject, RequestId
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer, _PeerConnection
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


async def _end_session(url: str, session_id: str) -> None:
    async with httpx.AsyncClient() as raw:
        response = await raw.delete(url, headers={"Mcp-Session-Id": session_id})
    assert response.status_code in (200, 202, 204)


async def test_an_expired_session_is_renewed_and_the_call_sent_again() -> None:
    """The server forgets the session; the next call still succeeds, over a second initialize and a new session."""
    server = HttpPeer(ScriptedPeer(era="legacy"))
    policy = TimeoutPolicy(idle=5, maximum=10)
    async with server.serving() as url, Client(http(url), protocol="2025-11-25", timeout=policy) as client:
        assert text_of(await client.call_tool("echo", {"text": "before"})) == "before"
        (first_session,) = server.stats.sessions_created
        await _end_session(url, first_session)

        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
        async with client.tool_call("echo", {"text": "handle"}) as call:
            assert text_of(await call.result()) == "handle"

    assert len(server.stats.sessions_created) == 2
    assert server.stats.sessions_created[1] != first_session
    initializes = server.stats.posts("initialize")
    assert len(initializes) == 2
    assert "Mcp-Session-Id" not in initializes[1].headers


async def test_a_handle_keeps_its_progress_across_a_renewal() -> None:
    """The handle's progress iterator and callback carry on after the session was renewed under the call (they
    used to be closed with the first, expired attempt, so nothing after the renewal reached them)."""
    server = HttpPeer(ScriptedPeer(era="legacy"))
    policy = TimeoutPolicy(idle=5, maximum=10)
    async with server.serving() as url, Client(http(url), protocol="2025-11-25", timeout=policy) as client:
        (first_session,) = server.stats.sessions_created
        await _end_session(url, first_session)
        called_back: list[float] = []
        arguments = {"seconds": 0.3, "progress_every": 0.1}
        async with client.tool_call("slow", arguments, on_progress=lambda p: called_back.append(p.progress)) as call:
            iterated = [update.progress async for update in call.progress()]
            assert text_of(await call.result()) == "done"

    assert len(server.stats.sessions_created) == 2  # the call really ran on a renewed session
    assert iterated[-1:] == [3]
    assert called_back[-1:] == [3]


async def test_a_renewal_behind_a_slow_initialize_ends_by_the_calls_maximum(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team: the renewal a call waits for counts against the call's one maximum (it used to be bounded only by
    the connect timeout, so a 1 s call ended at the new ``initialize``'s 3 s and was sent past its maximum)."""
    slow_initialize = anyio.Event()
    route = _PeerConnection._route

    async def slow_route(self: _PeerConnection, request_id: RequestId, method: str, params: JsonObject) -> Any:
        if method == "initialize" and slow_initialize.is_set():
            await anyio.sleep(3)
        return await route(self, request_id, method, params)

    monkeypatch.setattr(_PeerConnection, "_route", slow_route)
    server = HttpPeer(ScriptedPeer(era="legacy"))
    policy = TimeoutPolicy(idle=None, maximum=1, connect=10)
    async with server.serving() as url, Client(http(url), protocol="2025-11-25", timeout=policy) as client:
        (first_session,) = server.stats.sessions_created
        await _end_session(url, first_session)
        slow_initialize.set()
        started = anyio.current_time()
        with pytest.raises(SessionExpired) as caught:
            await client.call_tool("echo", {"text": "late"})
        assert anyio.current_time() - started < 2
    assert caught.value.may_have_run is False  # it never reached a session that served
    assert len(server.stats.posts("tools/call")) == 1  # the one that met the ended session, never again


async def test_a_renewal_cut_short_by_one_caller_still_serves_the_next_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team: the renewal is the link's, shared, not the caller's: a caller that stops waiting for it (its
    maximum, or its own cancel scope) does not cut the new ``initialize`` off half-way, which used to leave the
    client with no session id for good (every later call: "missing Mcp-Session-Id header")."""
    slow_initialize = anyio.Event()
    route = _PeerConnection._route

    async def slow_route(self: _PeerConnection, request_id: RequestId, method: str, params: JsonObject) -> Any:
        if method == "initialize" and slow_initialize.is_set():
            await anyio.sleep(1)
        return await route(self, request_id, method, params)

    monkeypatch.setattr(_PeerConnection, "_route", slow_route)
    server = HttpPeer(ScriptedPeer(era="legacy"))
    policy = TimeoutPolicy(idle=None, maximum=5, connect=10)
    async with server.serving() as url, Client(http(url), protocol="2025-11-25", timeout=policy) as client:
        (first_session,) = server.stats.sessions_created
        await _end_session(url, first_session)
        slow_initialize.set()
        with anyio.move_on_after(0.3):  # the caller's own scope, mid-renewal
            await client.call_tool("echo", {"text": "cut"})
        with pytest.raises(MaxTimeout) as caught:  # a call made mid-renewal waits for it, inside its maximum
            await client.call_tool("echo", {"text": "short"}, timeout=0.3)
        assert caught.value.may_have_run is False
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
    assert len(server.stats.sessions_created) == 2
    assert [post.message and post.message["params"]["arguments"] for post in server.stats.posts("tools/call")] == [
        {"text": "cut"},
        {"text": "after"},
    ]  # the call made mid-renewal never went out without a session


async def test_a_handle_cancelled_while_the_session_is_renewed_ends_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team: a call waiting for a renewal hears its handle's cancel (and the client's close) at once; it used
    to wait for the renewal, so a client closing with such calls took its whole cancel timeout."""
    slow_initialize = anyio.Event()
    route = _PeerConnection._route

    async def slow_route(self: _PeerConnection, request_id: RequestId, method: str, params: JsonObject) -> Any:
        if method == "initialize" and slow_initialize.is_set():
            await anyio.sleep(3)
        return await route(self, request_id, method, params)

    monkeypatch.setattr(_PeerConnection, "_route", slow_route)
    server = HttpPeer(ScriptedPeer(era="legacy"))
    policy = TimeoutPolicy(idle=None, maximum=10, connect=10)
    async with server.serving() as url, Client(http(url), protocol="2025-11-25", timeout=policy) as client:
        (first_session,) = server.stats.sessions_created
        await _end_session(url, first_session)
        slow_initialize.set()
        for _ in range(2):  # the first call meets the ended session; the second one finds the renewal under way
            async with client.tool_call("echo", {"text": "cancelled"}) as call:
                await anyio.sleep(0.2)
                started = anyio.current_time()
                call.cancel()
                with pytest.raises(RequestCancelled):
                    await call.result()
                assert anyio.current_time() - started < 1


async def test_a_renewal_met_by_the_listing_a_call_needs_ends_by_the_calls_maximum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Red team: the task-support listing a 2025-11-25 call needs met the ended session and waited for the renewal
    behind a slow ``initialize`` under the listing's own budget (the client default), not the call's: a tool whose
    rule gave it a 1 s maximum ended after 3 s."""
    slow_initialize = anyio.Event()
    route = _PeerConnection._route

    async def slow_route(self: _PeerConnection, request_id: RequestId, method: str, params: JsonObject) -> Any:
        if method == "initialize" and slow_initialize.is_set():
            await anyio.sleep(3)
        return await route(self, request_id, method, params)

    monkeypatch.setattr(_PeerConnection, "_route", slow_route)
    server = HttpPeer(ScriptedPeer(era="legacy", tasks=True))
    policy = TimeoutPolicy(idle=None, maximum=10, connect=10)
    rules = PolicyRegistry(tools={"echo": PolicyLayer.of(timeout=PartialTimeout(maximum=1))})
    async with (
        server.serving() as url,
        Client(http(url), protocol="2025-11-25", timeout=policy, policies=rules, cache=False) as client,
    ):
        (first_session,) = server.stats.sessions_created
        await _end_session(url, first_session)
        slow_initialize.set()
        started = anyio.current_time()
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("echo", {"text": "late"})
        assert anyio.current_time() - started < 2
    assert caught.value.may_have_run is False  # the tool was never called
    assert len(server.stats.posts("tools/call")) == 0
