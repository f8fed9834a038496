"""The retry engine end to end, against the scripted peer on trio's MockClock.

On an in-memory (stdio-framed) connection a dropped stream is the peer's death, which no retry survives; so the
scenarios are built on the causes retries do apply to:

* a request that never left (a transport wrapper whose write fails with ``TransportError(written=False)``), which
  is re-sent transparently, whatever the tool;
* a write that failed after the bytes may have left (``written=True``), which only an idempotent tool survives;
* an idle timeout, with ``RetryPolicy(retry_idle_timeout=True)``, for tools ``list_tools()`` showed idempotent (the
  peer's ``flaky_*`` tools are silent on their first call(s) and answer afterwards).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import pytest

from mcp_client import (
    CancelMethod,
    Client,
    Event,
    IdleTimeout,
    MaxTimeout,
    Progress,
    RequestSent,
    RetryPolicy,
    RetryScheduled,
    TimeoutPolicy,
    Transport,
    TransportError,
    memory,
)
from mcp_client._types import JSONObject, RequestId
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.base import Connection, MessageHandler
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]
Failure = Literal["unsent", "sent"] | None

RETRY_IDLE = RetryPolicy(attempts=3, retry_idle_timeout=True)
POLICY = TimeoutPolicy(idle=4, maximum=100, connect=30)


def tool_calls(peer: ScriptedPeer, name: str | None = None) -> list[JSONObject]:
    """The tools/call requests the peer received (of tool ``name``), in order."""
    return [
        m
        for m in peer.stats.received
        if m.get("method") == "tools/call" and (name is None or m["params"].get("name") == name)
    ]


def token_of(message: JSONObject) -> object:
    return message["params"].get("_meta", {}).get("progressToken")


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> Any:
    """Call a tool through the Call handle (which, unlike call_tool, is given the retry policy and idempotency)."""
    async with client.tool_call(name, arguments, **options) as handle:
        return await handle.result()


# -- a transport whose writes fail on demand -----------------------------------------------------------------


class FailingWrites(Transport):
    """``memory(serve)``, with ``decide(message)`` choosing the fate of each request write:

    ``None`` writes it; ``"unsent"`` raises ``TransportError(written=False)`` without writing a byte;
    ``"sent"`` writes it and then raises ``TransportError(written=True)`` (the write broke after the bytes left).
    """

    def __init__(self, peer: ScriptedPeer, decide: Callable[[JSONObject], Failure]) -> None:
        self._inner = memory(peer.serve)
        self._decide = decide
        self.failed: list[tuple[RequestId, Failure]] = []

    @property
    def description(self) -> str:
        return "failing writes"

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        async with self._inner.connect(handler) as connection:
            yield _FailingConnection(connection, self)

    def fate(self, message: JSONObject) -> Failure:
        failure = self._decide(message)
        if failure is not None:
            self.failed.append((message["id"], failure))
        return failure


class _FailingConnection(Connection):
    def __init__(self, inner: Connection, transport: FailingWrites) -> None:
        self._inner = inner
        self._transport = transport

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        failure = self._transport.fate(message)
        if failure == "unsent":
            raise TransportError("the write failed before any byte left", written=False)
        await self._inner.send_request(message, headers=headers)
        if failure == "sent":
            raise TransportError("the write broke after the request left", written=True)

    async def send_notification(self, message: JSONObject) -> None:
        await self._inner.send_notification(message)

    async def send_response(self, message: JSONObject) -> None:
        await self._inner.send_response(message)

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        return await self._inner.cancel(request_id, reason)

    def release(self, request_id: RequestId) -> None:
        self._inner.release(request_id)


def first_n_calls(n: int, fate: Failure = "unsent", tool: str | None = None) -> Callable[[JSONObject], Failure]:
    """Fail the first ``n`` tools/call writes (of ``tool``, if given) with ``fate``."""
    seen = itertools.count(1)

    def decide(message: JSONObject) -> Failure:
        if message.get("method") != "tools/call":
            return None
        if tool is not None and message["params"].get("name") != tool:
            return None
        return fate if next(seen) <= n else None

    return decide


def client_on(transport: Transport, events: list[Event], **options: Any) -> Client:
    options.setdefault("timeout", POLICY)
    return Client(transport, on_event=events.append, **options)


# -- (a) a request that never left -------------------------------------------------------------------------


async def test_a_request_that_never_left_is_resent_with_a_fresh_id(events: list[Event]) -> None:
    """A write that failed before any byte left is re-sent transparently (fresh id and token) and succeeds."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(1))
    async with client_on(transport, events) as client:
        result = await client.call_tool("echo", {"text": "hi"})

    assert text_of(result) == "hi"
    assert len(transport.failed) == 1
    failed_id = transport.failed[0][0]
    received = tool_calls(peer)
    assert len(received) == 1  # the failed write never reached the peer
    assert received[0]["id"] != failed_id
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1
    assert retries[0].request_id == failed_id
    assert retries[0].attempt == 2
    assert isinstance(retries[0].cause, TransportError)
    assert retries[0].cause.written is False
    sent = [e for e in events if isinstance(e, RequestSent) and e.method == "tools/call"]
    assert [(e.request_id, e.attempt) for e in sent] == [(received[0]["id"], 2)]
    assert sent[0].progress_token == token_of(received[0])


async def test_a_never_written_call_of_a_non_idempotent_tool_is_resent_and_runs_once(events: list[Event]) -> None:
    """Never written means never run: even a non-idempotent tool is re-sent, and it runs exactly once."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(2))
    async with client_on(transport, events) as client:
        await client.list_tools()
        result = await client.call_tool("increment")

    assert text_of(result) == "1"
    assert peer.counter == 1
    assert len(tool_calls(peer)) == 1
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [2, 3]


async def test_attempts_of_a_call_that_gave_up_are_recorded(events: list[Event]) -> None:
    """A call whose every write fails gives up after `attempts`; its error lists each attempt, oldest first."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(100))
    async with client_on(transport, events, retry=RetryPolicy(attempts=3)) as client:
        with pytest.raises(TransportError) as caught:
            await client.call_tool("echo", {"text": "hi"})

    error = caught.value
    failed_ids = [request_id for request_id, _ in transport.failed]
    assert len(failed_ids) == 3
    assert len(set(failed_ids)) == 3
    assert error.written is False
    assert error.request_ids == tuple(failed_ids)
    assert [a.request_id for a in error.attempts] == failed_ids
    assert all(isinstance(a.cause, TransportError) and a.cause.written is False for a in error.attempts)
    assert all(a.started <= a.ended for a in error.attempts)
    assert all(a.ended <= b.started for a, b in itertools.pairwise(error.attempts))
    assert tool_calls(peer) == []


# -- (b) an idempotent tool after an idle timeout ------------------------------------------------------------


async def test_idempotent_tool_is_retried_after_an_idle_timeout_and_succeeds(events: list[Event]) -> None:
    """flaky_silent (idempotent) is silent once: the retry has a new id and token, the first attempt was cancelled
    on the wire before it, and the call ends inside its maximum."""
    peer = ScriptedPeer(era="modern")
    policy = TimeoutPolicy(idle=4, maximum=20)
    async with client_on(memory(peer.serve), events, timeout=policy, retry=RETRY_IDLE) as client:
        await client.list_tools()
        assert client.is_idempotent("flaky_silent")
        start = anyio.current_time()
        result = await call(client, "flaky_silent")
        elapsed = anyio.current_time() - start

    assert text_of(result) == "answered on call 2"
    assert 4 <= elapsed <= 20
    first, second = tool_calls(peer, "flaky_silent")
    assert first["id"] != second["id"]
    assert token_of(first) is not None
    assert token_of(second) is not None
    assert token_of(first) != token_of(second)
    assert peer.stats.cancelled_request_ids == [first["id"]]
    order = [m.get("id") if m.get("method") == "tools/call" else "cancel" for m in peer.stats.received]
    assert order.index("cancel") < order.index(second["id"])
    assert peer.stats.outcomes[first["id"]] == "cancelled"
    assert peer.stats.outcomes[second["id"]] == "completed"
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert [(e.request_id, e.attempt) for e in retries] == [(first["id"], 2)]
    assert isinstance(retries[0].cause, IdleTimeout)


async def test_call_tool_retries_an_idempotent_tool_after_an_idle_timeout(events: list[Event]) -> None:
    """call_tool follows the same rules as the handle: list_tools() showed flaky_silent idempotent, so it retries."""
    peer = ScriptedPeer(era="modern")
    async with client_on(memory(peer.serve), events, retry=RETRY_IDLE) as client:
        await client.list_tools()
        result = await client.call_tool("flaky_silent")

    assert text_of(result) == "answered on call 2"
    assert len(tool_calls(peer, "flaky_silent")) == 2


# -- (c) a call that may have run, of a tool that is not idempotent ------------------------------------------


async def test_non_idempotent_tool_is_never_resent_after_an_idle_timeout(events: list[Event]) -> None:
    """flaky_increment may have run (it did: the counter moved): never re-sent; the error lists its one attempt."""
    peer = ScriptedPeer(era="modern")
    async with client_on(memory(peer.serve), events, retry=RETRY_IDLE) as client:
        await client.list_tools()
        assert not client.is_idempotent("flaky_increment")
        with pytest.raises(IdleTimeout) as caught:
            await call(client, "flaky_increment")

    assert peer.counter == 1
    assert len(tool_calls(peer, "flaky_increment")) == 1
    error = caught.value
    assert len(error.attempts) == 1
    assert error.attempts[0].request_id == error.request_ids[0] == tool_calls(peer)[0]["id"]
    assert error.attempts[0].cause is error
    assert not [e for e in events if isinstance(e, RetryScheduled)]


async def test_non_idempotent_tool_is_never_resent_after_a_write_that_may_have_left(events: list[Event]) -> None:
    """A write that broke after the request left (written=True) may have run: increment is not re-sent."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(1, "sent"))
    async with client_on(transport, events) as client:
        await client.list_tools()
        with pytest.raises(TransportError) as caught:
            await client.call_tool("increment")
        await anyio.sleep(1)

    assert peer.counter == 1
    assert len(tool_calls(peer, "increment")) == 1
    assert caught.value.written is True
    assert len(caught.value.attempts) == 1
    assert not [e for e in events if isinstance(e, RetryScheduled)]


async def test_idempotent_tool_is_resent_after_a_write_that_may_have_left(events: list[Event]) -> None:
    """The same broken write for an idempotent tool (echo) is retried, with a fresh id."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(1, "sent"))
    async with client_on(transport, events) as client:
        await client.list_tools()
        result = await call(client, "echo", {"text": "again"})

    assert text_of(result) == "again"
    first, second = tool_calls(peer, "echo")
    assert first["id"] != second["id"]


# -- (d) the retry budget ------------------------------------------------------------------------------------


async def test_budget_exhausted_stops_retries_and_successes_refill_it(events: list[Event]) -> None:
    """Many failing calls drain the client's budget: later calls make one attempt only; successes refill it."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(10_000, tool="echo"))
    attempts: list[int] = []
    async with client_on(transport, events) as client:
        for _ in range(6):
            with pytest.raises(TransportError) as caught:
                await client.call_tool("echo", {"text": "x"})
            attempts.append(len(caught.value.attempts))
        assert not client.retry_budget.allows_retry
        for _ in range(45):
            await client.call_tool("increment")  # succeeds: each success gives a tenth of a token back
        assert client.retry_budget.allows_retry
        with pytest.raises(TransportError) as caught:
            await client.call_tool("echo", {"text": "x"})
        attempts.append(len(caught.value.attempts))

    assert attempts[0] == 3
    assert attempts[2:6] == [1, 1, 1, 1]
    assert attempts[6] > 1


# -- (e) retry=None and retry_rules --------------------------------------------------------------------------


async def test_retry_none_on_a_call_turns_retries_off(events: list[Event]) -> None:
    """retry=None on one call: no retry even for a request that never left; other calls still retry."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(1))
    async with client_on(transport, events) as client:
        with pytest.raises(TransportError) as caught:
            await client.call_tool("echo", {"text": "x"}, retry=None)
        assert len(caught.value.attempts) == 1
        result = await client.call_tool("echo", {"text": "y"})

    assert text_of(result) == "y"
    assert not [e for e in events if isinstance(e, RetryScheduled)]


async def test_retry_none_on_a_call_handle_turns_retries_off(events: list[Event]) -> None:
    """The same through the Call handle."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(1))
    async with client_on(transport, events) as client:
        with pytest.raises(TransportError) as caught:
            await call(client, "echo", {"text": "x"}, retry=None)

    assert len(caught.value.attempts) == 1
    assert not [e for e in events if isinstance(e, RetryScheduled)]


async def test_retry_rules_by_exact_name_and_by_glob(events: list[Event]) -> None:
    """retry_rules: an exact name wins over an earlier glob; a glob applies to the tools it matches; the client's
    policy to the rest."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(10_000, tool=None))
    rules = {"ec*": RetryPolicy(attempts=5, initial_backoff=0.01), "echo": None, "inc*": RetryPolicy(attempts=2)}
    async with client_on(transport, events, retry=RetryPolicy(attempts=3), retry_rules=rules) as client:
        outcomes: dict[str, int] = {}
        for name in ("echo", "increment", "slow"):
            client.retry_budget.tokens = client.retry_budget.max_tokens  # keep the budget out of this test
            with pytest.raises(TransportError) as caught:
                await client.call_tool(name)
            outcomes[name] = len(caught.value.attempts)

    assert outcomes == {"echo": 1, "increment": 2, "slow": 3}


async def test_retry_rules_glob_matches_through_the_call_handle(events: list[Event]) -> None:
    """A glob rule reaches the Call handle too (and a call's own retry= beats any rule)."""
    peer = ScriptedPeer(era="modern")
    transport = FailingWrites(peer, first_n_calls(10_000))
    rules = {"e*": RetryPolicy(attempts=4, initial_backoff=0.01)}
    async with client_on(transport, events, retry_rules=rules) as client:
        with pytest.raises(TransportError) as caught:
            await call(client, "echo")
        assert len(caught.value.attempts) == 4
        client.retry_budget.tokens = client.retry_budget.max_tokens
        with pytest.raises(TransportError) as caught:
            await call(client, "echo", retry=RetryPolicy(attempts=2))
        assert len(caught.value.attempts) == 2


# -- (f) progress across attempts ----------------------------------------------------------------------------


async def test_progress_across_attempts_is_one_monotonic_stream(events: list[Event]) -> None:
    """flaky_progress reports 1,2,3 then goes silent; the retry reports 1..5 and answers: the callback sees
    1,2,3,4,5 once each, in order."""
    peer = ScriptedPeer(era="modern")
    seen: list[float] = []

    def on_progress(update: Progress) -> None:
        seen.append(update.progress)

    async with client_on(memory(peer.serve), events, retry=RETRY_IDLE) as client:
        await client.list_tools()
        result = await call(client, "flaky_progress", on_progress=on_progress)

    assert text_of(result) == "done"
    assert seen == [1, 2, 3, 4, 5]
    assert len(tool_calls(peer, "flaky_progress")) == 2


async def test_progress_across_attempts_via_call_tool(events: list[Event]) -> None:
    """The same through call_tool's on_progress."""
    peer = ScriptedPeer(era="modern")
    seen: list[float] = []
    async with client_on(memory(peer.serve), events, retry=RETRY_IDLE) as client:
        await client.list_tools()
        result = await client.call_tool("flaky_progress", on_progress=lambda p: seen.append(p.progress))

    assert text_of(result) == "done"
    assert seen == [1, 2, 3, 4, 5]


# -- (g) one maximum for all attempts ------------------------------------------------------------------------


async def test_all_attempts_share_one_maximum_which_ends_the_call_exactly(events: list[Event]) -> None:
    """Retries pending or not, the call ends by MaxTimeout at exactly its maximum; every attempt is listed."""
    peer = ScriptedPeer(era="modern")
    retry = RetryPolicy(attempts=10, retry_idle_timeout=True, max_backoff=0.5)
    policy = TimeoutPolicy(idle=4, maximum=10)
    async with client_on(memory(peer.serve), events, timeout=policy, retry=retry) as client:
        await client.list_tools()
        start = anyio.current_time()
        with pytest.raises(MaxTimeout) as caught:
            await call(client, "flaky_silent", {"fail_first": 1000})
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(10)
    error = caught.value
    assert error.elapsed == pytest.approx(10)
    assert len(error.attempts) == 3
    assert [type(a.cause) for a in error.attempts] == [IdleTimeout, IdleTimeout, MaxTimeout]
    assert error.attempts[-1].ended - start == pytest.approx(10)
    assert len(tool_calls(peer, "flaky_silent")) == 3


async def test_no_retry_when_the_wait_would_pass_the_maximum(events: list[Event]) -> None:
    """A retry whose backoff would end past the maximum is not scheduled: the call ends with its last error, early."""
    peer = ScriptedPeer(era="modern")
    retry = RetryPolicy(attempts=10, retry_idle_timeout=True, initial_backoff=5, max_backoff=5, multiplier=1)
    policy = TimeoutPolicy(idle=4, maximum=6)
    elapsed_runs: list[float] = []
    async with client_on(memory(peer.serve), events, timeout=policy, retry=retry) as client:
        await client.list_tools()
        for _ in range(5):
            start = anyio.current_time()
            with pytest.raises((IdleTimeout, MaxTimeout)):
                await call(client, "flaky_silent", {"fail_first": 1000})
            elapsed_runs.append(anyio.current_time() - start)

    assert all(elapsed <= 6 + 1e-9 for elapsed in elapsed_runs)
