"""Task-backed tool calls against the scripted peer, in both eras, on trio's MockClock (exact virtual time).

The peer's ``task_work`` tool always runs as a task; its arguments script what real servers will not do on demand
(expiry, a status that goes backwards, a huge ``pollIntervalMs``, input keys repeated across polls, a server that
ignores ``tasks/cancel``). The same policy governs the task as any call: one maximum over everything, cancellation
by ``tasks/cancel`` only, in the background, exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types
import pytest

from mcp_client import (
    Call,
    Client,
    Event,
    IdleTimeout,
    MaxTimeout,
    MissingClientCapability,
    RequestCancelled,
    RequestSent,
    TaskCancelSent,
    TaskCreated,
    TaskFailed,
    TaskNotFound,
    TaskStatus,
    TimeoutPolicy,
)
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]
ERAS = [("modern", "2026-07-28"), ("legacy", "2025-11-25")]
POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)


def sent(peer: ScriptedPeer, method: str) -> list[dict[str, Any]]:
    """The params of every request of ``method`` the peer received."""
    return [m.get("params") or {} for m in peer.stats.received if m.get("method") == method]


async def task_made(call: Call[Any]) -> str:
    """Wait (bounded) until the server made the call's task; its id."""
    with anyio.fail_after(5):
        while call.task_id is None:
            await anyio.sleep(0.01)
    return call.task_id


def only_task_cancels(peer: ScriptedPeer) -> None:
    """A task is cancelled with tasks/cancel and nothing else: no notifications/cancelled at all."""
    assert peer.stats.cancel_notifications == []


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_task_completes_through_polling(connect: Connect, events: list[Event], era: str, version: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        assert client.protocol_version == version
        start = anyio.current_time()
        result = await client.call_tool("task_work", {"seconds": 1.0, "text": "built"})
        elapsed = anyio.current_time() - start
    assert text_of(result) == "task done: built"
    # Polls start at the server's 100 ms and back off while nothing changes: the return follows the end closely.
    assert 1.0 <= elapsed <= 1.6
    (created,) = [e for e in events if isinstance(e, TaskCreated)]
    assert created.tool == "task_work"
    statuses = [e.status for e in events if isinstance(e, TaskStatus) and e.task_id == created.task_id]
    assert statuses == ["working", "completed"]
    task = peer.tasks.tasks[created.task_id]
    assert task.status == "completed"
    assert 3 <= task.polls <= 10
    if era == "legacy":
        assert sent(peer, "tools/call")[0]["task"] == {"ttl": 160_000}  # the call's maximum plus a minute
        assert [p["taskId"] for p in sent(peer, "tasks/result")] == [created.task_id]
        assert "extensions" not in sent(peer, "initialize")[0]["capabilities"]  # the modern extension only
    else:
        assert sent(peer, "tasks/result") == []
    only_task_cancels(peer)


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_every_poll_is_its_own_request_with_the_envelope(connect: Connect, era: str, version: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        await client.call_tool("task_work", {"seconds": 0.5})
    polls = [m for m in peer.stats.received if m.get("method") == "tasks/get"]
    assert len({m["id"] for m in polls}) == len(polls) >= 2
    for poll in polls:
        meta = poll["params"].get("_meta", {})
        if era == "modern":
            assert meta["io.modelcontextprotocol/protocolVersion"] == version
            assert "io.modelcontextprotocol/tasks" in meta["io.modelcontextprotocol/clientCapabilities"]["extensions"]
        assert "progressToken" not in meta


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_maximum_shorter_than_the_task_cancels_it_once_on_time(
    connect: Connect, events: list[Event], era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("task_work", {"seconds": 60}, timeout=TimeoutPolicy(idle=5, maximum=2.5))
        assert anyio.current_time() - start == pytest.approx(2.5, abs=1e-6)
        await anyio.sleep(1)
    (created,) = [e for e in events if isinstance(e, TaskCreated)]
    assert peer.tasks.tasks[created.task_id].status == "cancelled"
    assert [p["taskId"] for p in sent(peer, "tasks/cancel")] == [created.task_id]
    assert [(e.task_id, e.acknowledged) for e in events if isinstance(e, TaskCancelSent)] == [(created.task_id, True)]
    only_task_cancels(peer)


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_call_cancel_sends_tasks_cancel(connect: Connect, era: str, version: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        async with client.tool_call("task_work", {"seconds": 60}) as call:
            assert call.task_id is None
            task_id = await task_made(call)
            await anyio.sleep(1)
            call.cancel("user pressed stop")
            with pytest.raises(RequestCancelled) as caught:
                await call.result()
        assert caught.value.reason == "user pressed stop"
        await anyio.sleep(0.1)
    task = peer.tasks.tasks[task_id]
    assert task.status == "cancelled"
    assert task.cancel_requests == 1
    only_task_cancels(peer)


async def test_the_callers_cancellation_sends_tasks_cancel(connect: Connect, events: list[Event]) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        with anyio.move_on_after(1.5):
            await client.call_tool("task_work", {"seconds": 60})
        await anyio.sleep(0.1)
    (created,) = [e for e in events if isinstance(e, TaskCreated)]
    assert peer.tasks.tasks[created.task_id].cancel_requests == 1
    assert peer.tasks.tasks[created.task_id].status == "cancelled"
    only_task_cancels(peer)


async def test_a_task_that_expires_is_task_not_found_and_not_cancelled(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        start = anyio.current_time()
        with pytest.raises(TaskNotFound) as caught:
            await client.call_tool("task_work", {"seconds": 60, "expire_after": 2})
        assert 2 <= anyio.current_time() - start < 4
    assert caught.value.task_id == "task-1"
    assert sent(peer, "tasks/cancel") == []


async def test_a_server_that_never_answers_tasks_cancel_does_not_delay_the_error(
    connect: Connect, events: list[Event]
) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer, cancel_timeout=3) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("task_work", {"seconds": 60, "silent_cancel": True}, timeout=2)
        assert anyio.current_time() - start == pytest.approx(2, abs=1e-6)
        assert not any(isinstance(e, TaskCancelSent) for e in events)
        await anyio.sleep(5)
    assert [(e.task_id, e.acknowledged) for e in events if isinstance(e, TaskCancelSent)] == [("task-1", False)]
    assert len(sent(peer, "tasks/cancel")) == 1
    assert peer.tasks.tasks["task-1"].status == "working"  # it ignored us; we asked once and moved on
    only_task_cancels(peer)


async def test_a_server_that_ignores_tasks_cancel_is_asked_once(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        with pytest.raises(MaxTimeout):
            await client.call_tool("task_work", {"seconds": 4, "ignore_cancel": True}, timeout=1)
        await anyio.sleep(5)
    task = peer.tasks.tasks["task-1"]
    assert task.cancel_requests == 1
    assert task.polls < 10  # nobody polls a task the call gave up on


async def test_a_status_that_goes_backwards_is_reported_and_not_followed(connect: Connect, events: list[Event]) -> None:
    script = [
        {"status": "working", "message": "step 2", "updated": 2},
        {"status": "working", "message": "step 1", "updated": 1},  # older than what we saw: a stale replica
        {"status": "working", "message": "step 3", "updated": 3},
        {"status": "completed", "updated": 4},
    ]
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        result = await client.call_tool("task_work", {"script": script, "text": "ok"})
    assert text_of(result) == "task done: ok"
    reports = [(e.status_message, e.backwards) for e in events if isinstance(e, TaskStatus)]
    assert reports == [(None, False), ("step 2", False), ("step 1", True), ("step 3", False), (None, False)]


async def test_a_huge_poll_interval_is_capped_by_the_maximum(connect: Connect, events: list[Event]) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("task_work", {"seconds": 1, "poll_interval_ms": 10**12}, timeout=5)
        assert anyio.current_time() - start == pytest.approx(5, abs=1e-6)
        await anyio.sleep(0.1)
    assert sent(peer, "tasks/get") == []  # the server asked for ~30 years between polls: we honoured it
    assert len(sent(peer, "tasks/cancel")) == 1


async def test_input_keys_repeated_across_polls_are_answered_once(connect: Connect) -> None:
    ask = {
        "method": "elicitation/create",
        "params": {"message": "Colour?", "requestedSchema": {"type": "object", "properties": {}}},
    }
    script = [
        {"status": "input_required", "input": {"k1": ask}, "updated": 1},
        {"status": "input_required", "input": {"k1": ask}, "updated": 2},  # not yet seen by the server's worker
        {"status": "input_required", "input": {"k1": ask, "k2": ask}, "updated": 3},
        {"status": "working", "updated": 4},
        {"status": "completed", "updated": 5},
    ]
    asked: list[str] = []

    async def elicitation(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"colour": f"c{len(asked)}"})

    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer, elicitation=elicitation) as client:
        result = await client.call_tool("task_work", {"script": script})
    assert text_of(result) == "task done: ok"
    assert asked == ["Colour?", "Colour?"]
    updates = peer.tasks.tasks["task-1"].input_responses
    assert updates == [
        {"k1": {"action": "accept", "content": {"colour": "c1"}}},
        {"k2": {"action": "accept", "content": {"colour": "c2"}}},
    ]


async def test_input_without_a_handler_fails_clearly_and_cancels_the_task(connect: Connect) -> None:
    script = [{"status": "input_required", "input": {"k": {"method": "elicitation/create", "params": {}}}}]
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        with pytest.raises(Exception, match="did not offer"):
            await client.call_tool("task_work", {"script": script})
        await anyio.sleep(0.1)
    assert len(sent(peer, "tasks/cancel")) == 1


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_failed_task_is_task_failed_with_its_error(connect: Connect, era: str, version: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        with pytest.raises(TaskFailed) as caught:
            await client.call_tool("task_work", {"seconds": 0.5, "outcome": "failed"})
    assert caught.value.task_id == "task-1"
    assert caught.value.code == -32603
    assert "the work failed" in str(caught.value)
    assert sent(peer, "tasks/cancel") == []


async def test_a_task_cancelled_on_the_server_is_request_cancelled(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    script = [{"status": "working"}, {"status": "cancelled", "message": "operator stopped it"}]
    async with connect(peer) as client:
        with pytest.raises(RequestCancelled, match="operator stopped it"):
            await client.call_tool("task_work", {"script": script})
    assert sent(peer, "tasks/cancel") == []


async def test_without_tasks_a_server_that_requires_them_names_the_extension(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer, tasks=False) as client:
        with pytest.raises(MissingClientCapability, match=r"io\.modelcontextprotocol/tasks") as caught:
            await client.call_tool("task_work", {"seconds": 1})
    assert caught.value.code == -32021
    assert "tasks=False" in str(caught.value)
    (call,) = sent(peer, "tools/call")
    assert "extensions" not in call["_meta"]["io.modelcontextprotocol/clientCapabilities"]


async def test_legacy_without_tasks_does_not_ask_for_one(connect: Connect) -> None:
    peer = ScriptedPeer(era="legacy", tasks=True)
    async with connect(peer, tasks=False) as client:
        await client.list_tools()
        with pytest.raises(Exception, match="task augmentation"):
            await client.call_tool("task_work", {"seconds": 1})
    assert "task" not in sent(peer, "tools/call")[0]
    assert "extensions" not in sent(peer, "initialize")[0]["capabilities"]


async def test_detach_leaves_the_task_running_and_another_client_resumes_it(
    connect: Connect, events: list[Event]
) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client, client.tool_call("task_work", {"seconds": 10, "text": "later"}) as call:
        task_id = await task_made(call)
        call.detach()
    # The client closed while the detached call was still polling: nothing cancelled the task.
    assert sent(peer, "tasks/cancel") == []
    assert peer.tasks.tasks[task_id].status == "working"
    async with connect(peer) as resumed:
        task = await resumed.get_task(task_id)
        assert (task.task_id, task.status, task.terminal) == (task_id, "working", False)
        result = await resumed.task_result(task_id, timeout=TimeoutPolicy(maximum=60))
    assert text_of(result) == "task done: later"


async def test_cancel_task_and_unknown_ids(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        async with client.tool_call("task_work", {"seconds": 30}) as call:
            task_id = await task_made(call)
            call.detach()
        await client.cancel_task(task_id)
        assert (await client.get_task(task_id)).status == "cancelled"
        with pytest.raises(RequestCancelled):
            await call.result()
        with pytest.raises(TaskNotFound) as caught:
            await client.get_task("no-such-task")
        assert caught.value.task_id == "no-such-task"
        with pytest.raises(TaskNotFound):
            await client.task_result("no-such-task")
        with pytest.raises(TaskNotFound):
            await client.cancel_task("no-such-task")


async def test_a_poll_that_hangs_is_an_idle_timeout_and_only_the_task_is_cancelled(
    connect: Connect, events: list[Event]
) -> None:
    """Each poll has the call's idle limit; the abandoned poll is not cancelled on the wire, the task is."""
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        start = anyio.current_time()
        arguments = {"seconds": 60, "silent_polls_after": 2}
        with pytest.raises(IdleTimeout):
            await client.call_tool("task_work", arguments, timeout=TimeoutPolicy(idle=1, maximum=30))
        await anyio.sleep(0.1)
    assert 1 < anyio.current_time() - start < 3
    gets = [e for e in events if isinstance(e, RequestSent) and e.method == "tasks/get"]
    assert len(gets) == 3
    assert len(sent(peer, "tasks/cancel")) == 1
    only_task_cancels(peer)
