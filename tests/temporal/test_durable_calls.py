"""Durable MCP calls on a real Temporal service, with worker processes killed (SIGKILL) in the middle of a call.

The Temporal CLI's dev server, the mcp 2.3.0 server (plain tools) and the fastmcp-tasks server (a task-backed
tool) are real and outlive the workers; the servers count each run of a tool in an events file. Heartbeat timeouts
are 2 s, so a dead worker is noticed within 2 s and the next attempt starts about a second later.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client as TemporalClient, WorkflowFailureError
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from tests.temporal.conftest import Workers
from tests.temporal.observe import attempts, heartbeat, lines, new_tag, result_of, running_on, start, until
from tests.temporal.workflows import ToolCall

pytestmark = pytest.mark.anyio


async def test_a_task_backed_tool_runs_once_across_a_worker_crash(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = new_tag()
    workers.ensure(2)  # one to kill, one for the next attempt
    handle = await start(temporal, workers, ToolCall("tasks", "slow_task", {"seconds": 6, "tag": tag}))

    async def task_heartbeated() -> bool:
        details = await heartbeat(temporal, handle)
        return bool(details) and details[0].get("phase") == "task"

    await until(task_heartbeated, "the task id reached Temporal in a heartbeat")
    (checkpoint,) = await heartbeat(temporal, handle)
    assert checkpoint["task"]["protocol"] == "2026-07-28"
    assert "127.0.0.1" not in str(checkpoint)  # no URL in what Temporal keeps
    workers.kill(workers.by_identity(await running_on(handle)))
    assert await result_of(handle) == f"{tag} done"
    assert lines(events_path, tag) == ["started", "completed"]  # the tool ran once
    assert await attempts(handle) == [2]  # the second attempt resumed the task


async def test_a_plain_tool_that_may_have_run_is_not_called_again(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = new_tag()
    workers.ensure(2)  # one to kill, one for the next attempt
    handle = await start(temporal, workers, ToolCall("plain", "count", {"seconds": 5, "tag": tag}))

    async def written() -> bool:
        details = await heartbeat(temporal, handle)
        return bool(details) and details[0] == {"phase": "written"} and "started" in lines(events_path, tag)

    await until(written, "the call was written and heartbeated")
    workers.kill(workers.by_identity(await running_on(handle)))
    with pytest.raises(WorkflowFailureError) as caught:
        await result_of(handle)
    activity_error = caught.value.cause
    assert isinstance(activity_error, ActivityError)
    failure = activity_error.cause
    assert isinstance(failure, ApplicationError)
    assert (failure.type, failure.non_retryable) == ("WorkerLost", True)
    assert "may have run" in failure.message
    assert "'count'" in failure.message
    assert failure.details[0]["may_have_run"] == "maybe"
    assert lines(events_path, tag).count("started") == 1  # never sent twice
    assert await attempts(handle) == [2]


async def test_an_idempotent_tool_is_called_again_and_succeeds(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = new_tag()
    workers.ensure(2)  # one to kill, one for the next attempt
    handle = await start(temporal, workers, ToolCall("plain", "count_idempotent", {"seconds": 4, "tag": tag}))
    await until(lambda: "started" in lines(events_path, tag), "the first attempt reached the server")
    workers.kill(workers.by_identity(await running_on(handle)))
    assert await result_of(handle) == f"{tag} done"
    assert lines(events_path, tag).count("started") == 2
    assert await attempts(handle) == [2]


async def test_a_long_call_with_progress_outlives_short_heartbeat_timeouts(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = new_tag()
    workers.ensure(1)
    call = ToolCall("plain", "slow_progress", {"seconds": 10, "interval": 0.5, "tag": tag}, heartbeat_timeout=2)
    handle = await start(temporal, workers, call)
    assert await result_of(handle) == f"{tag} done"
    assert await attempts(handle) == [1]  # 10 s under a 2 s heartbeat timeout, in one attempt
    assert lines(events_path, tag) == ["started", "completed"]


async def test_cancelling_the_workflow_cancels_both_kinds_of_call_on_their_servers(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    plain, task = new_tag(), new_tag()
    workers.ensure(1)
    plain_handle = await start(
        temporal, workers, ToolCall("plain", "slow_progress", {"seconds": 30, "interval": 0.5, "tag": plain})
    )
    task_handle = await start(temporal, workers, ToolCall("tasks", "slow_task", {"seconds": 30, "tag": task}))

    async def both_running() -> bool:
        details = await heartbeat(temporal, task_handle)
        task_made = bool(details) and details[0].get("phase") == "task"
        return task_made and "started" in lines(events_path, plain)

    await until(both_running, "both calls are under way")
    await plain_handle.cancel()
    await task_handle.cancel()
    for handle in (plain_handle, task_handle):
        with pytest.raises(WorkflowFailureError) as caught:
            await result_of(handle)
        assert isinstance(caught.value.cause, CancelledError)
    await until(lambda: "cancelled" in lines(events_path, plain), "the plain call was cancelled on its server")
    await until(lambda: "cancelled" in lines(events_path, task), "the task was cancelled on its server")
    assert "completed" not in lines(events_path, plain) + lines(events_path, task)
