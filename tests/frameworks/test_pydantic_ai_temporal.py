"""A pydantic-ai agent under pydantic-ai's Temporal mode (``TemporalDurability``, ``PydanticAIWorkflow``,
``PydanticAIPlugin``) with :class:`MCPToolset` over an ``MCPWorkflowClient``: its tool calls are mcp_client's
activities, with their guarantees, on a real Temporal dev server and the mcp 2.3.0 server, which outlives the worker
processes; the worker is killed with SIGKILL in the middle of a call and the server counts the runs."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client as TemporalClient, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError
from temporalio.worker import Replayer

from mcp_client import Client, http
from mcp_client.integrations.temporal import MCPPlugin
from tests.frameworks.pydantic_ai_temporal import CountingAgentWorkflow, ShortMaximumAgentWorkflow
from tests.temporal.conftest import Workers
from tests.temporal.observe import attempts, heartbeat, lines, new_tag, result_of, running_on, until

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def agent_workers(temporal_address: str, plain_url: str) -> Iterator[Workers]:
    """Worker processes that run the agent's workflow, with pydantic-ai's plugin and mcp_client's."""
    pool = Workers([sys.executable, str(HERE / "pydantic_ai_temporal_worker.py")], temporal_address, [plain_url])
    try:
        pool.start(2)
        yield pool
    finally:
        pool.stop_all()


async def _start(
    temporal_address: str, workers: Workers, prompt: str
) -> tuple[TemporalClient, WorkflowHandle[Any, str]]:
    temporal = await TemporalClient.connect(temporal_address, plugins=[PydanticAIPlugin()])
    handle = await temporal.start_workflow(
        CountingAgentWorkflow.run, prompt, id=f"agent-{uuid.uuid4().hex}", task_queue=workers.task_queue
    )
    return temporal, handle


async def _activity_types(handle: WorkflowHandle[Any, Any]) -> list[str]:
    return [
        event.activity_task_scheduled_event_attributes.activity_type.name
        async for event in handle.fetch_history_events()
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


async def test_the_agents_tool_calls_are_mcp_client_activities(
    temporal_address: str, agent_workers: Workers, events_path: Path, plain_url: str
) -> None:
    agent_workers.ensure(1)
    tag = new_tag()
    _, handle = await _start(temporal_address, agent_workers, f"count_idempotent 0 {tag}")
    assert await result_of(handle) == f"The tool said: {{'result': '{tag} done'}}"  # its structured content
    scheduled = await _activity_types(handle)
    assert scheduled.count("mcp_client/plain/call_tool") == 1
    assert "mcp_client/plain/list_tools" in scheduled
    # The rest are pydantic-ai's model requests: no activity of its own wraps the toolset.
    assert [name for name in scheduled if not name.startswith("mcp_client/")] == [
        name for name in scheduled if "model" in name
    ]
    assert lines(events_path, tag) == ["started", "completed"]
    # The workflow's history names the server by the plugin's name only, never by its URL.
    history = await handle.fetch_history()
    assert plain_url.split("//", 1)[1] not in history.to_json()
    # Replayed from its history alone (no server: the plugin's factory is never called), the workflow makes the same
    # decisions: the tools' listing is an activity's recorded result, whatever the server lists now.
    plugins = [PydanticAIPlugin(), MCPPlugin({"plain": lambda: Client(http(plain_url))})]
    await Replayer(workflows=[CountingAgentWorkflow], plugins=plugins).replay_workflow(history)


async def test_a_worker_killed_during_the_agents_call_does_not_run_the_tool_twice(
    temporal_address: str, agent_workers: Workers, events_path: Path
) -> None:
    agent_workers.ensure(2)  # one to kill, one for the next attempt
    tag = new_tag()
    temporal, handle = await _start(temporal_address, agent_workers, f"count 3 {tag}")

    async def written_and_started() -> bool:
        details = await heartbeat(temporal, handle)
        return bool(details) and details[0] == {"phase": "written"} and "started" in lines(events_path, tag)

    await until(written_and_started, "the call's checkpoint is in Temporal and the server runs the tool")
    Workers.kill(agent_workers.by_identity(await running_on(handle)))
    output = await result_of(handle)
    assert lines(events_path, tag).count("started") == 1  # never sent twice
    # The next attempt refused to call again; the model reads that the tool may have run.
    assert output.startswith("The tool said: ")
    assert "may have run" in output


async def test_cancelling_the_agents_workflow_cancels_the_call_on_the_server(
    temporal_address: str, agent_workers: Workers, events_path: Path
) -> None:
    agent_workers.ensure(1)
    tag = new_tag()
    _, handle = await _start(temporal_address, agent_workers, f"count 30 {tag}")
    await until(lambda: "started" in lines(events_path, tag), "the server runs the tool")
    await handle.cancel()
    await until(lambda: "cancelled" in lines(events_path, tag), "the call was cancelled on the server")
    # The cancellation is the caller's own: not a tool failure for the model, so the run ends cancelled.
    with pytest.raises(WorkflowFailureError) as failed:
        await result_of(handle)
    assert isinstance(failed.value.cause, CancelledError)
    assert "completed" not in lines(events_path, tag)


async def test_the_maximum_passing_inside_the_activity_reaches_the_model_typed_and_truthful(
    temporal_address: str, agent_workers: Workers, events_path: Path
) -> None:
    """A call that the server runs past its 2 s maximum fails inside the activity with ``MaxTimeout``: the activity's
    failure is that typed error, not retried (the tool is not safe to repeat and its request was written), and the
    model reads that the tool may have run, never an exception group, a lost worker or "did not run"."""
    agent_workers.ensure(1)
    tag = new_tag()
    temporal = await TemporalClient.connect(temporal_address, plugins=[PydanticAIPlugin()])
    handle = await temporal.start_workflow(
        ShortMaximumAgentWorkflow.run,
        f"count 6 {tag}",
        id=f"agent-{uuid.uuid4().hex}",
        task_queue=agent_workers.task_queue,
    )
    output = await result_of(handle)
    assert lines(events_path, tag).count("started") == 1
    assert "did not finish within its time limit" in output
    assert "may have run" in output
    assert "did not run" not in output
    failures = [
        event.activity_task_failed_event_attributes.failure
        async for event in handle.fetch_history_events()
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED
    ]
    assert [failure.application_failure_info.type for failure in failures] == ["MaxTimeout"]
    assert await attempts(handle) == [1]
