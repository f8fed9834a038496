"""The one owner of a client's connection (``client/link.py``) and its healing kind (``client/supervisor.py``): the
runner of calls is one object for the client's life, which the link alone moves to a new session; a call moved to
the next process is one call of the runner's one retry loop (one ``RequestFinished``, its attempts on both
processes, a fresh id of the new session); the supervised link never imports the client. On the test's clock.
"""

from __future__ import annotations

import ast
from pathlib import Path

import anyio
import pytest
from anyio.abc import ByteReceiveStream, ByteSendStream

import mcp_client
from mcp_client import (
    Client,
    ConnectError,
    Event,
    RequestCancelled,
    RequestFinished,
    RequestSent,
    RestartPolicy,
    RetryPolicy,
    RetryScheduled,
    ServerRestarted,
    TimeoutPolicy,
    TransportError,
)
from mcp_client.client.link import Link
from mcp_client.client.supervisor import SupervisedLink
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of
from tests.integration.test_supervisor import RestartableMemory

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

POLICY = TimeoutPolicy(idle=None, maximum=100, connect=30)
PACKAGE = Path(mcp_client.__file__).parent


async def test_the_link_alone_moves_the_one_runner_to_the_new_process() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(initial_backoff=1, max_backoff=1)
    async with Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY) as client:
        assert isinstance(client._link, SupervisedLink)
        runner, first = client._calls_runner, client.session
        first_pid = client.server_process_id
        with pytest.raises(TransportError):
            await client.call_tool("die")
        assert text_of(await client.call_tool("echo", {"text": "back"})) == "back"
        assert client._calls_runner is runner  # the same runner of calls...
        assert client.session is runner.session is not first  # ...on the new process's session
        assert client._link.identity is not None
        assert first_pid == client.server_process_id  # (in memory: no process ids)


async def test_a_plain_client_has_a_plain_link() -> None:
    async with Client(RestartableMemory(ScriptedPeer(era="modern").serve), timeout=POLICY) as client:
        assert type(client._link) is Link
        assert not client._calls_runner.heals
        assert await client._calls_runner.session_after(client.session) is None


async def test_a_call_moved_to_the_next_process_is_one_call_with_fresh_ids() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(initial_backoff=2, max_backoff=2)
    events: list[Event] = []
    async with (
        Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY, on_event=events.append) as client,
        anyio.create_task_group() as tg,
    ):
        outcome: list[str] = []
        seen: list[float] = []

        async def moved() -> None:
            arguments = {"seconds": 3, "progress_every": 0.5}
            result = await client.call_tool(
                "slow", arguments, retry=RetryPolicy(idempotent=True), on_progress=lambda p: seen.append(p.progress)
            )
            outcome.append(text_of(result))

        tg.start_soon(moved)
        await anyio.sleep(1.2)
        with pytest.raises(TransportError):
            await client.call_tool("die")
    assert outcome == ["done"]
    sent = [e for e in events if isinstance(e, RequestSent) and e.target == "slow"]
    # A fresh id of the new process's session (each session numbers its own), sent as the call's second attempt.
    assert [(e.attempt, e.previous_request_id) for e in sent] == [(1, None), (2, sent[0].request_id)]
    [scheduled] = [e for e in events if isinstance(e, RetryScheduled)]
    assert (scheduled.request_id, scheduled.attempt, scheduled.delay) == (sent[0].request_id, 2, 0.0)
    restarted = next(i for i, e in enumerate(events) if isinstance(e, ServerRestarted))
    assert events.index(scheduled) > restarted  # sent again once the new process serves
    finished = [e for e in events if isinstance(e, RequestFinished) and e.method == "tools/call"]
    # One end for each call: "die" (its error), and the moved call (its result), not one per process.
    assert [e.error is None for e in finished] == [False, True]
    assert finished[-1].request_id == sent[1].request_id
    assert seen[-1] == 6  # the sync callback saw the new process's progress to its end (it starts again from 1)


async def test_a_call_that_failed_after_moving_lists_its_attempts_on_both_processes() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(initial_backoff=1, max_backoff=1)
    async with (
        Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY) as client,
        anyio.create_task_group() as tg,
    ):
        errors: list[TransportError] = []

        async def moved_twice() -> None:
            with pytest.raises(TransportError) as caught:
                await client.call_tool("slow", {"seconds": 30}, retry=RetryPolicy(idempotent=True, attempts=2))
            errors.append(caught.value)

        tg.start_soon(moved_twice)
        for _ in range(2):  # the call moves after the first death; the second one ends it (two attempts at most)
            await anyio.sleep(2)
            with pytest.raises(TransportError):
                await client.call_tool("die")
    [error] = errors
    assert len(error.attempts) == 2
    assert len(error.request_ids) == 2  # one request on each process
    assert error.may_have_run


async def test_a_call_past_the_cap_of_restarts_fails_at_once_without_moving() -> None:
    peer = ScriptedPeer(era="modern")
    policy = RestartPolicy(max_restarts=0, window=100)
    events: list[Event] = []
    async with Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY, on_event=events.append) as c:
        with pytest.raises(TransportError):
            await c.call_tool("die")
        started = anyio.current_time()
        with pytest.raises(TransportError) as caught:
            await c.call_tool("echo", {"text": "never"}, retry=RetryPolicy(idempotent=True))
        assert anyio.current_time() == started
    assert caught.value.written is False
    assert not any(isinstance(e, RetryScheduled) for e in events)


def test_the_links_never_import_the_client() -> None:
    for name in ("link.py", "supervisor.py"):
        tree = ast.parse((PACKAGE / "client" / name).read_text())
        imported = {
            node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module is not None
        }
        assert "mcp_client.client.client" not in imported, name
        assert "mcp_client" not in imported, name


async def test_a_task_stays_with_the_process_that_made_it() -> None:
    """A restarted server does not know the tasks of the one that died: the task's drive never polls it, and the
    call ends with the death (a ``TransportError`` that says it may have run), not with the new one's answer."""
    peer = ScriptedPeer(era="modern", tasks=True)  # (in memory its tasks would outlive a "process": one peer)
    policy = RestartPolicy(initial_backoff=0.05, max_backoff=0.2)
    events: list[Event] = []
    async with Client(RestartableMemory(peer.serve, restart=policy), timeout=POLICY, on_event=events.append) as c:
        errors: list[TransportError] = []

        async def task_call() -> None:
            with pytest.raises(TransportError) as caught:
                await c.call_tool("task_work", {"seconds": 30})
            errors.append(caught.value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(task_call)
            await anyio.sleep(2.5)  # a few polls on the first process
            with pytest.raises(TransportError):
                await c.call_tool("die")
    [error] = errors
    assert error.may_have_run
    restarted = next(i for i, e in enumerate(events) if isinstance(e, ServerRestarted))
    assert not any(isinstance(e, RequestSent) and e.method == "tasks/get" for e in events[restarted:])
    assert any(isinstance(e, RequestSent) and e.method == "tasks/get" for e in events[:restarted])


async def test_a_handle_cancelled_while_its_call_waits_for_the_restart_ends_at_once() -> None:
    """Red team: a call waiting for the next process hears its handle's cancel at once (it used to wait for the
    restart, or for its maximum), and says it never ran when it never was written."""
    peer = ScriptedPeer(era="auto", discover="silent")  # every handshake waits out the 20 s probe first
    policy = RestartPolicy(initial_backoff=0, max_backoff=0)
    transport = RestartableMemory(peer.serve, restart=policy)
    async with Client(transport, timeout=POLICY, probe_timeout=20) as client:
        with pytest.raises(TransportError):
            await client.call_tool("die")
        async with client.tool_call("echo", {"text": "never"}) as call:  # never written: it waits for the restart
            await anyio.sleep(1)
            started = anyio.current_time()
            call.cancel()
            with pytest.raises(RequestCancelled) as caught:
                await call.result()
            assert anyio.current_time() - started < 1
        assert caught.value.may_have_run is False


async def test_a_supervised_client_whose_first_start_fails_raises_a_connect_error_and_may_be_entered_again() -> None:
    """Red team: the supervised link's first start fails inside the transport's task group; the client raised that
    exception group, not the typed ``ConnectError`` a plain client raises. Entered again, it serves and heals."""
    peer = ScriptedPeer(era="modern")
    starts = 0

    async def serve(receive: ByteReceiveStream, send: ByteSendStream) -> None:
        nonlocal starts
        starts += 1
        if starts == 1:  # the first "process" exits at once
            await send.aclose()
            await receive.aclose()
            return
        await peer.serve(receive, send)

    policy = RestartPolicy(initial_backoff=1, max_backoff=1)
    client = Client(RestartableMemory(serve, restart=policy), timeout=POLICY)
    with pytest.raises(ConnectError):
        await client.__aenter__()
    async with client:
        assert text_of(await client.call_tool("echo", {"text": "second"})) == "second"
        with pytest.raises(TransportError):
            await client.call_tool("die")
        assert text_of(await client.call_tool("echo", {"text": "healed"})) == "healed"
    assert starts == 3


async def test_a_call_cancelled_while_waiting_for_the_restart_does_not_claim_a_cancel_went_out() -> None:
    peer = ScriptedPeer(era="auto", discover="silent")  # every handshake waits out the 20 s probe first
    policy = RestartPolicy(initial_backoff=0, max_backoff=0)
    transport = RestartableMemory(peer.serve, restart=policy)
    async with (
        Client(transport, timeout=POLICY, probe_timeout=20) as client,
        client.tool_call("slow", {"seconds": 50}, retry=RetryPolicy(idempotent=True)) as call,
    ):
        await anyio.sleep(1)  # written on the first process
        with pytest.raises(TransportError):
            await client.call_tool("die")
        await anyio.sleep(1)  # waiting for the next process
        call.cancel()
        with pytest.raises(RequestCancelled) as caught:
            await call.result()
    assert caught.value.may_have_run
    assert not caught.value.cancel_sent
    assert "told the server to stop" not in caught.value.for_model
