"""Retries over stdio framing: only when safe, each attempt with a fresh id and token after the abandoned one was
cancelled, all attempts inside one maximum, and a budget that stops retry storms.

On stdio the retryable cause a test can provoke is an idle timeout (``RetryPolicy(retry_idle_timeout=True)``), for
tools that ``list_tools()`` showed idempotent; the scripted peer's ``silent`` tool is annotated so. The retry
engine is exercised through the Call handle (``client.tool_call``); the last tests pin that ``call_tool`` applies
the same rules.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types
import pytest

from mcp_client import (
    CancelMethod,
    Client,
    Event,
    IdleTimeout,
    InternalError,
    RequestSent,
    RequestTimeout,
    RetryPolicy,
    RetryScheduled,
    TimeoutPolicy,
    Transport,
    memory,
)
from mcp_client._types import JSONObject, RequestId
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.base import Connection, MessageHandler

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]

RETRY_IDLE = RetryPolicy(attempts=3, retry_idle_timeout=True)


def tool_calls(peer: ScriptedPeer) -> list[dict[str, object]]:
    return [m for m in peer.stats.received if m.get("method") == "tools/call"]


def progress_token_of(message: dict[str, object]) -> object:
    params = message["params"]
    assert isinstance(params, dict)
    return params.get("_meta", {}).get("progressToken")


async def call(client: Client, name: str, **options: Any) -> mcp_types.CallToolResult:
    """Call a tool through the Call handle."""
    async with client.tool_call(name, **options) as handle:
        return await handle.result()


def wire_order(peer: ScriptedPeer) -> list[tuple[str, object]]:
    """The tools/call requests and cancel notifications the peer received, in order: ("call", id), ("cancel", id)."""
    order: list[tuple[str, object]] = []
    for message in peer.stats.received:
        if message.get("method") == "tools/call":
            order.append(("call", message["id"]))
        elif message.get("method") == "notifications/cancelled":
            order.append(("cancel", message["params"]["requestId"]))
    return order


async def test_each_attempt_gets_a_fresh_id_and_token_after_the_last_was_cancelled(
    connect: Connect, events: list[Event]
) -> None:
    """Each retry attempt: a fresh id and a fresh token; the abandoned attempt is cancelled on the wire first."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=100), retry=RETRY_IDLE) as client:
        await client.list_tools()
        with pytest.raises(IdleTimeout) as caught:
            await call(client, "silent")
        await anyio.sleep(1)

    calls = tool_calls(peer)
    ids = [m["id"] for m in calls]
    tokens = [progress_token_of(m) for m in calls]
    assert len(set(ids)) == len(ids) == 3
    assert len(set(tokens)) == len(tokens) == 3
    assert None not in tokens
    assert caught.value.request_ids == tuple(ids)
    assert [a.request_id for a in caught.value.attempts] == ids
    assert all(isinstance(a.cause, IdleTimeout) for a in caught.value.attempts)
    assert [a.ended - a.started for a in caught.value.attempts] == pytest.approx([4, 4, 4])
    assert all(a.ended <= b.started for a, b in itertools.pairwise(caught.value.attempts))
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [2, 3]
    assert [e.attempt for e in events if isinstance(e, RequestSent) and e.method == "tools/call"] == [1, 2, 3]
    assert wire_order(peer) == [(kind, request_id) for request_id in ids for kind in ("call", "cancel")]


class _SlowCancels(Transport):
    """``inner``, with every cancellation taking ``delay`` seconds to go out (a full pipe, a slow POST)."""

    def __init__(self, inner: Transport, delay: float) -> None:
        self._inner = inner
        self._delay = delay

    @property
    def description(self) -> str:
        return self._inner.description

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        async with self._inner.connect(handler) as connection:
            yield _SlowCancelConnection(connection, self._delay)


class _SlowCancelConnection(Connection):
    def __init__(self, inner: Connection, delay: float) -> None:
        self._inner = inner
        self._delay = delay

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        await self._inner.send_request(message, headers=headers)

    async def send_notification(self, message: JSONObject) -> None:
        await self._inner.send_notification(message)

    async def send_response(self, message: JSONObject) -> None:
        await self._inner.send_response(message)

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        await anyio.sleep(self._delay)
        return await self._inner.cancel(request_id, reason)

    def release(self, request_id: RequestId) -> None:
        self._inner.release(request_id)


async def test_a_retry_waits_for_the_cancel_of_the_abandoned_attempt(events: list[Event]) -> None:
    """The abandoned attempt is cancelled first, also when putting that cancel on the wire takes a while."""
    peer = ScriptedPeer(era="modern")
    transport = _SlowCancels(memory(peer.serve), delay=0.5)
    retry = RetryPolicy(attempts=2, retry_idle_timeout=True, initial_backoff=0)
    client = Client(transport, timeout=TimeoutPolicy(idle=4, maximum=100), retry=retry, on_event=events.append)
    async with client:
        await client.list_tools()
        with pytest.raises(IdleTimeout) as caught:
            await call(client, "silent")
        await anyio.sleep(5)

    first, second = caught.value.request_ids
    assert wire_order(peer) == [("call", first), ("cancel", first), ("call", second), ("cancel", second)]


async def test_all_attempts_share_one_maximum(connect: Connect) -> None:
    """All attempts share one maximum: retries never carry a call past it."""
    peer = ScriptedPeer(era="modern")
    retry = RetryPolicy(attempts=10, retry_idle_timeout=True)
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=10), retry=retry) as client:
        await client.list_tools()
        start = anyio.current_time()
        with pytest.raises(RequestTimeout):
            await call(client, "silent")
        elapsed = anyio.current_time() - start

    assert elapsed <= 10 + 1e-9
    assert 2 <= len(tool_calls(peer)) <= 3


async def test_a_call_that_may_have_run_is_not_resent_unless_idempotent(connect: Connect) -> None:
    """A tools/call that may have run is re-sent only for an idempotent tool: unknown or declared not, never."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=100), retry=RETRY_IDLE) as client:
        with pytest.raises(IdleTimeout):
            await call(client, "silent")  # tools/list not fetched yet: nothing says it is idempotent
        await client.list_tools()
        with pytest.raises(IdleTimeout):
            await call(client, "silent", retry=RETRY_IDLE.replace(idempotent=False))

    assert len(tool_calls(peer)) == 2


async def test_default_retry_policy_does_not_retry_idle_timeouts(connect: Connect) -> None:
    """By default an idle timeout is not retried, even for an idempotent tool."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=100)) as client:
        await client.list_tools()
        with pytest.raises(IdleTimeout):
            await call(client, "silent")

    assert len(tool_calls(peer)) == 1


async def test_server_errors_are_never_retried(connect: Connect) -> None:
    """A JSON-RPC error is the server's answer: never retried, whatever the tool and policy."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, retry=RETRY_IDLE) as client:
        await client.list_tools()
        with pytest.raises(InternalError) as caught:
            await call(client, "fail")

    assert len(tool_calls(peer)) == 1
    assert len(caught.value.request_ids) == 1


async def test_retry_budget_stops_a_retry_storm(connect: Connect) -> None:
    """A retry budget stops retry storms: once most attempts fail, calls stop being retried."""
    peer = ScriptedPeer(era="modern")
    attempts_per_call: list[int] = []
    async with connect(peer, timeout=TimeoutPolicy(idle=1, maximum=100), retry=RETRY_IDLE) as client:
        await client.list_tools()
        for _ in range(10):
            with pytest.raises(IdleTimeout) as caught:
                await call(client, "silent")
            attempts_per_call.append(len(caught.value.request_ids))

    assert attempts_per_call[0] == 3
    assert attempts_per_call[-5:] == [1] * 5
    assert sum(attempts_per_call) < 3 * 10


async def test_call_tool_retries_a_tool_that_list_tools_showed_idempotent(connect: Connect) -> None:
    """call_tool applies the retry rules like the handle: an idempotent tool (per tools/list) is retried."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=100), retry=RETRY_IDLE) as client:
        await client.list_tools()
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent")

    assert len(tool_calls(peer)) == 3
    assert len(caught.value.request_ids) == 3


async def test_call_tool_honours_its_retry_argument(connect: Connect) -> None:
    """call_tool(..., retry=policy) uses that policy, not the client's."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=4, maximum=100), retry=None) as client:
        with pytest.raises(IdleTimeout):
            await client.call_tool("silent", retry=RETRY_IDLE.replace(idempotent=True))

    assert len(tool_calls(peer)) == 3
