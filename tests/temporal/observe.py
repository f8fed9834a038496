"""What the Temporal tests read from the service and the MCP servers: heartbeat details, attempts, which worker
runs an activity, and the servers' events file; and how they start the test workflow. Real time, bounded waits."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client as TemporalClient, WorkflowHandle

from tests.temporal.conftest import Workers
from tests.temporal.workflows import CallToolWorkflow, ToolCall


def new_tag() -> str:
    return uuid.uuid4().hex[:10]


def lines(events_path: Path, tag: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in events_path.read_text().splitlines() if line.startswith(tag + " ")]


async def until(condition: Callable[[], Any], what: str, within: float = 20) -> None:
    with anyio.fail_after(within):
        while not await value(condition()):
            await anyio.sleep(0.05)  # a real service and real processes: there is no clock to fake
    assert True, what


async def value(value: Any) -> Any:
    return await value if hasattr(value, "__await__") else value


async def running_on(handle: WorkflowHandle[Any, Any]) -> str:
    """The identity of the worker that runs the workflow's pending activity."""
    (pending,) = (await handle.describe()).raw_description.pending_activities
    identity: str = pending.last_worker_identity
    return identity


async def heartbeat(temporal: TemporalClient, handle: WorkflowHandle[Any, Any]) -> list[Any]:
    """The heartbeat details of the workflow's pending activity as the service holds them (empty: none yet)."""
    description = await handle.describe()
    for pending in description.raw_description.pending_activities:
        if pending.heartbeat_details.payloads:
            return list(temporal.data_converter.payload_converter.from_payloads(pending.heartbeat_details.payloads))
    return []


async def attempts(handle: WorkflowHandle[Any, Any]) -> list[int]:
    """The attempt number of each tool call's activity start (``mcp_client/<server>/call_tool``) in the workflow's
    history (Temporal records the start of the attempt that ended the activity only: ``[2]`` means the first attempt
    was lost and the second ended it). The workflow's other activities (a listing, an agent's model requests) are
    not counted: the question is how many attempts the call took."""
    calls: set[int] = set()
    started: list[int] = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if event.activity_task_scheduled_event_attributes.activity_type.name.endswith("/call_tool"):
                calls.add(event.event_id)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attributes = event.activity_task_started_event_attributes
            if attributes.scheduled_event_id in calls:
                started.append(attributes.attempt)
    return started


async def start(temporal: TemporalClient, workers: Workers, call: ToolCall) -> WorkflowHandle[Any, str]:
    return await temporal.start_workflow(
        CallToolWorkflow.run, call, id=f"wf-{uuid.uuid4().hex}", task_queue=workers.task_queue
    )


async def result_of(handle: WorkflowHandle[Any, Any], within: float = 90) -> Any:
    """The workflow's result (or its failure), bounded: a run that hangs fails the test instead of the suite."""
    with anyio.fail_after(within):
        return await handle.result()
