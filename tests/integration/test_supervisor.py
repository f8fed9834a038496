"""The supervisor on the test's clock: an in-process server that dies is started again after a jittered wait
within the policy's bounds, at most ``max_restarts`` times per window; calls fail or move over as the retry rule
says. (The same against real processes and servers nobody here wrote: ``tests/interop/test_restart_stdio.py``.)
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import pytest

from mcp_client import (
    Client,
    Event,
    ListenPolicy,
    MaxTimeout,
    RestartPolicy,
    RetryPolicy,
    ServerRestarted,
    SubscriptionLost,
    TimeoutPolicy,
    ToolsListChanged,
    TransportError,
)
from mcp_client.testing.peer import ListenScript, ScriptedPeer
from mcp_client.transports.memory import MemoryTransport
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

POLICY = TimeoutPolicy(idle=None, maximum=100, connect=30)


@dataclass(frozen=True, slots=True)
class RestartableMemory(MemoryTransport):
    """The in-memory transport with a restart policy, as ``stdio(..., restart=...)`` has: each connection is a new
    run of the peer (a new "process")."""

    restart: RestartPolicy | None = None


def restarts(events: list[Event]) -> list[ServerRestarted]:
    return [e for e in events if isinstance(e, ServerRestarted)]


async def test_a_dead_server_is_back_after_a_wait_within_the_bound() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(max_restarts=3, window=100, initial_backoff=2, max_backoff=8)
    events: list[Event] = []
    async with Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY, on_event=events.append) as c:
        with pytest.raises(TransportError) as caught:
            await c.call_tool("die")
        assert caught.value.written is True  # it ran: "die" is not idempotent, so it is not sent again
        died = anyio.current_time()
        assert text_of(await c.call_tool("echo", {"text": "back"})) == "back"  # never written: waits, then sent
        back = anyio.current_time()
    (restarted,) = restarts(events)
    assert 0 <= restarted.delay <= 2
    assert back - died == pytest.approx(restarted.delay, abs=1e-6)
    assert peer.stats.connections == 2


async def test_the_cap_per_window_leaves_the_server_down() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(max_restarts=2, window=1000, initial_backoff=1, max_backoff=1)
    events: list[Event] = []
    async with Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY, on_event=events.append) as c:
        for _ in range(2):
            with pytest.raises(TransportError):
                await c.call_tool("die")
            await c.call_tool("echo", {"text": "back"})
        with pytest.raises(TransportError):
            await c.call_tool("die")
        started = anyio.current_time()
        with pytest.raises(TransportError) as caught:
            await c.call_tool("echo", {"text": "never"})
        assert anyio.current_time() == started  # at once, not at the maximum
    assert caught.value.written is False
    assert [e.restarts for e in restarts(events)] == [1, 2]
    assert peer.stats.connections == 3


async def test_an_idempotent_call_moves_to_the_new_process_within_its_maximum() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(initial_backoff=5, max_backoff=5)
    events: list[Event] = []
    transport = RestartableMemory(peer.serve, restart=policy)
    async with Client(transport, timeout=POLICY, on_event=events.append) as client:
        async with anyio.create_task_group() as tg:
            outcome: list[str] = []

            async def slow() -> None:
                result = await client.call_tool("slow", {"seconds": 10}, retry=RetryPolicy(idempotent=True))
                outcome.append(text_of(result))

            tg.start_soon(slow)
            await anyio.sleep(1)
            with pytest.raises(TransportError):
                await client.call_tool("die")
        assert outcome == ["done"]
        safe = RetryPolicy(idempotent=True)
        too_short = TimeoutPolicy(idle=None, maximum=3)  # the slow tool needs 10 s on any process: past this maximum
        async with anyio.create_task_group() as tg:
            ended: list[tuple[float, Exception]] = []

            async def doomed() -> None:
                started = anyio.current_time()
                with pytest.raises((TransportError, MaxTimeout)) as caught:
                    await client.call_tool("slow", {"seconds": 10}, timeout=too_short, retry=safe)
                ended.append((anyio.current_time() - started, caught.value))

            tg.start_soon(doomed)
            await anyio.sleep(0.5)
            with pytest.raises(TransportError):
                await client.call_tool("die")
        ((elapsed, _),) = ended
        # Moved over or not, the call ends by its one maximum (to within the rounding of the clock's float sums).
        assert elapsed == pytest.approx(3) or elapsed < 3


async def test_closing_during_a_restarts_handshake_does_not_wait_for_it() -> None:
    peer = ScriptedPeer(era="auto", discover="silent")  # every handshake waits out the 5 s probe first
    policy = RestartPolicy(initial_backoff=0, max_backoff=0)
    async with Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY, probe_timeout=5) as client:
        with pytest.raises(TransportError):
            await client.call_tool("die")
        await anyio.sleep(1)  # the new process is in its handshake now
        closing = anyio.current_time()
    assert anyio.current_time() - closing < 1
    assert peer.stats.connections == 2


async def test_a_subscription_listens_again_once_per_restart_however_long_the_restart_takes() -> None:
    """It waits for the new process: no re-listen is spent (nor backoff grown) on the dead one."""
    peer = ScriptedPeer(era="modern", listen=ListenScript())
    policy = RestartPolicy(max_restarts=3, window=100, initial_backoff=8, max_backoff=8)
    listen = ListenPolicy(initial_backoff=0.01, max_backoff=0.05, healthy_after=0)
    async with (
        Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY) as client,
        client.listen(tools=True, policy=listen) as sub,
    ):
        with pytest.raises(TransportError):
            await client.call_tool("die")
        with anyio.fail_after(30):
            assert await sub.__anext__() == ToolsListChanged(after_relisten=True)
        assert sub.relistens == 1


@pytest.mark.parametrize("gives_up", [False, True])
async def test_a_2025_subscription_follows_the_server_to_its_new_process_or_is_lost(gives_up: bool) -> None:
    peer = ScriptedPeer(era="legacy")
    policy = RestartPolicy(max_restarts=0 if gives_up else 3, window=100, initial_backoff=1, max_backoff=1)
    async with (
        Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY) as client,
        client.listen(tools=True) as sub,
    ):
        for restart_number in (1, 2):
            with pytest.raises(TransportError):
                await client.call_tool("die")
            if gives_up:
                with pytest.raises(SubscriptionLost, match="connection is gone"), anyio.fail_after(30):
                    await sub.__anext__()
                return
            with anyio.fail_after(30):
                while sub.relistens < restart_number:  # the peer declares nothing: no change to wait on
                    await anyio.sleep(0.1)
            assert text_of(await client.call_tool("echo", {"text": "back"})) == "back"
            assert peer.stats.connections == restart_number + 1


async def test_a_call_moved_to_the_new_process_keeps_its_progress_stream() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(initial_backoff=1, max_backoff=1)
    transport = RestartableMemory(peer.serve, restart=policy)
    seen: list[tuple[float, float]] = []
    outcome: list[str] = []
    async with Client(transport, timeout=POLICY) as client, anyio.create_task_group() as tg:

        async def watched() -> None:
            arguments = {"seconds": 3, "progress_every": 0.5}
            async with client.tool_call("slow", arguments, retry=RetryPolicy(idempotent=True)) as call:
                async for update in call.progress():
                    seen.append((anyio.current_time(), update.progress))
                outcome.append(text_of(await call.result()))

        tg.start_soon(watched)
        await anyio.sleep(1.2)
        with pytest.raises(TransportError):
            await client.call_tool("die")
        died = anyio.current_time()
    assert outcome == ["done"]
    assert any(at < died for at, _ in seen)
    after = [progress for at, progress in seen if at > died]
    assert len(after) >= 3  # the new process's progress reaches the same iterator (it starts again from 1)
