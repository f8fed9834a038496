"""Durable MCP calls on a real Temporal service, with worker processes killed (SIGKILL) in the middle of a call.

The Temporal CLI's dev server, the mcp 2.3.0 server (plain tools) and the fastmcp-tasks server (a task-backed
tool) are real and outlive the workers; the servers count each run of a tool in an events file. Heartbeat timeouts
are 2 s, so a dead worker is noticed within 2 s and the next attempt starts about a second later.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client as TemporalClient
from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from tests.temporal.conftest import Workers
from tests.temporal.workflows import CallToolWorkflow, ToolCall

pytestmark = pytest.mark.anyio


def _tag() -> str:
    return uuid.uuid4().hex[:10]


def _lines(events_path: Path, tag: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in events_path.read_text().splitlines() if line.startswith(tag + " ")]


async def _until(condition: Callable[[], Any], what: str, within: float = 20) -> None:
    with anyio.fail_after(within):
        while not await _value(condition()):
            await anyio.sleep(0.05)  # a real service and real processes: there is no clock to fake
    assert True, what


async def _value(value: Any) -> Any:
    return await value if hasattr(value, "__await__") else value


async def _running_on(handle: WorkflowHandle[Any, Any]) -> str:
    """The identity of the worker that runs the workflow's pending activity."""
    (pending,) = (await handle.describe()).raw_description.pending_activities
    identity: str = pending.last_worker_identity
    return identity


async def _heartbeat(temporal: TemporalClient, handle: WorkflowHandle[Any, Any]) -> list[Any]:
    """The heartbeat details of the workflow's pending activity as the service holds them (empty: none yet)."""
    description = await handle.describe()
    for pending in description.raw_description.pending_activities:
        if pending.heartbeat_details.payloads:
            return list(temporal.data_converter.payload_converter.from_payloads(pending.heartbeat_details.payloads))
    return []


async def _attempts(handle: WorkflowHandle[Any, Any]) -> list[int]:
    """The attempt number of each activity start in the workflow's history (Temporal records the start of the
    attempt that ended the activity only: ``[2]`` means the first attempt was lost and the second ended it)."""
    return [
        event.activity_task_started_event_attributes.attempt
        async for event in handle.fetch_history_events()
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    ]


async def _start(temporal: TemporalClient, workers: Workers, call: ToolCall) -> WorkflowHandle[Any, str]:
    return await temporal.start_workflow(
        CallToolWorkflow.run, call, id=f"wf-{uuid.uuid4().hex}", task_queue=workers.task_queue
    )


async def test_a_task_backed_tool_runs_once_across_a_worker_crash(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = _tag()
    workers.ensure(2)  # one to kill, one for the next attempt
    handle = await _start(temporal, workers, ToolCall("tasks", "slow_task", {"seconds": 4, "tag": tag}))

    async def task_heartbeated() -> bool:
        details = await _heartbeat(temporal, handle)
        return bool(details) and details[0].get("phase") == "task"

    await _until(task_heartbeated, "the task id reached Temporal in a heartbeat")
    (checkpoint,) = await _heartbeat(temporal, handle)
    assert checkpoint["task"]["protocol"] == "2026-07-28"
    assert "127.0.0.1" not in str(checkpoint)  # no URL in what Temporal keeps
    workers.kill(workers.by_identity(await _running_on(handle)))
    assert await handle.result() == f"{tag} done"
    assert _lines(events_path, tag) == ["started", "completed"]  # the tool ran once
    assert await _attempts(handle) == [2]  # the second attempt resumed the task


async def test_a_plain_tool_that_may_have_run_is_not_called_again(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = _tag()
    workers.ensure(2)  # one to kill, one for the next attempt
    handle = await _start(temporal, workers, ToolCall("plain", "count", {"seconds": 3, "tag": tag}))

    async def written() -> bool:
        details = await _heartbeat(temporal, handle)
        return bool(details) and details[0] == {"phase": "written"} and "started" in _lines(events_path, tag)

    await _until(written, "the call was written and heartbeated")
    workers.kill(workers.by_identity(await _running_on(handle)))
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()
    activity_error = caught.value.cause
    assert isinstance(activity_error, ActivityError)
    failure = activity_error.cause
    assert isinstance(failure, ApplicationError)
    assert (failure.type, failure.non_retryable) == ("WorkerLost", True)
    assert "may have run" in failure.message
    assert "'count'" in failure.message
    assert failure.details[0]["may_have_run"] == "maybe"
    assert _lines(events_path, tag).count("started") == 1  # never sent twice
    assert await _attempts(handle) == [2]


async def test_an_idempotent_tool_is_called_again_and_succeeds(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = _tag()
    workers.ensure(2)  # one to kill, one for the next attempt
    handle = await _start(temporal, workers, ToolCall("plain", "count_idempotent", {"seconds": 2, "tag": tag}))
    await _until(lambda: "started" in _lines(events_path, tag), "the first attempt reached the server")
    workers.kill(workers.by_identity(await _running_on(handle)))
    assert await handle.result() == f"{tag} done"
    assert _lines(events_path, tag).count("started") == 2
    assert await _attempts(handle) == [2]


async def test_a_long_call_with_progress_outlives_short_heartbeat_timeouts(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = _tag()
    workers.ensure(1)
    call = ToolCall("plain", "slow_progress", {"seconds": 10, "interval": 0.5, "tag": tag}, heartbeat_timeout=2)
    handle = await _start(temporal, workers, call)
    assert await handle.result() == f"{tag} done"
    assert await _attempts(handle) == [1]  # 10 s under a 2 s heartbeat timeout, in one attempt
    assert _lines(events_path, tag) == ["started", "completed"]


async def test_cancelling_the_workflow_cancels_both_kinds_of_call_on_their_servers(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    plain, task = _tag(), _tag()
    workers.ensure(1)
    plain_handle = await _start(
        temporal, workers, ToolCall("plain", "slow_progress", {"seconds": 30, "interval": 0.5, "tag": plain})
    )
    task_handle = await _start(temporal, workers, ToolCall("tasks", "slow_task", {"seconds": 30, "tag": task}))

    async def both_running() -> bool:
        details = await _heartbeat(temporal, task_handle)
        task_made = bool(details) and details[0].get("phase") == "task"
        return task_made and "started" in _lines(events_path, plain)

    await _until(both_running, "both calls are under way")
    await plain_handle.cancel()
    await task_handle.cancel()
    for handle in (plain_handle, task_handle):
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        assert isinstance(caught.value.cause, CancelledError)
    await _until(lambda: "cancelled" in _lines(events_path, plain), "the plain call was cancelled on its server")
    await _until(lambda: "cancelled" in _lines(events_path, task), "the task was cancelled on its server")
    assert "completed" not in _lines(events_path, plain) + _lines(events_path, task)
