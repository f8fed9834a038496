"""Durable MCP calls on a real Temporal service: progress as the heartbeat, cancellation to the server, failures
typed end to end, the maximum passing, and a workflow that imports the workflow side through the plugin's sandbox
passthrough alone. (Worker kills at every point of a call are ``test_kills.py``'s.)

The Temporal CLI's dev server, the mcp 2.3.0 server (plain tools) and the fastmcp-tasks server (a task-backed
tool) are real and outlive the workers; the servers count each run of a tool in an events file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client as TemporalClient, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from tests.interop.conftest import free_port, serve_http
from tests.temporal.conftest import EVENTS_ENV, HERE, Workers
from tests.temporal.observe import attempts, heartbeat, lines, new_tag, result_of, start, until
from tests.temporal.workflows import ToolCall

pytestmark = pytest.mark.anyio


async def test_a_long_call_with_progress_outlives_short_heartbeat_timeouts(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    tag = new_tag()
    workers.ensure(1)
    call = ToolCall("plain", "slow_progress", {"seconds": 6, "interval": 0.5, "tag": tag}, heartbeat_timeout=1)
    handle = await start(temporal, workers, call)
    assert await result_of(handle) == f"{tag} done"
    assert await attempts(handle) == [1]  # 6 s under a 1 s heartbeat timeout, in one attempt
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


async def _failure(handle: WorkflowHandle[Any, Any]) -> ApplicationError:
    with pytest.raises(WorkflowFailureError) as caught:
        await result_of(handle)
    activity_error = caught.value.cause
    assert isinstance(activity_error, ActivityError)
    failure = activity_error.cause
    assert isinstance(failure, ApplicationError)
    return failure


async def test_a_maximum_that_passes_after_the_write_is_typed_says_may_have_run_and_cancels_both_kinds(
    temporal_address: str, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    plain, task = new_tag(), new_tag()
    workers.ensure(1)
    handles = [
        await start(temporal, workers, ToolCall("plain", "count", {"seconds": 5, "tag": plain}, maximum=2)),
        await start(temporal, workers, ToolCall("tasks", "slow_task", {"seconds": 30, "tag": task}, maximum=2)),
    ]
    for handle in handles:
        failure = await _failure(handle)
        assert (failure.type, failure.non_retryable) == ("MaxTimeout", True)
        assert failure.details[0]["may_have_run"] == "maybe"
        assert "did not run" not in failure.message
        assert await attempts(handle) == [1]
    await until(lambda: "cancelled" in lines(events_path, plain), "the plain call was cancelled on its server")
    await until(lambda: "cancelled" in lines(events_path, task), "the task was cancelled on its server")
    assert lines(events_path, plain).count("started") == 1


def _serve(command: list[str], port: int, env: dict[str, str]) -> Generator[str, None, None]:
    """The plain server on ``port``; ``close()`` kills it."""
    yield from serve_http(command, port, env, "the MCP server that restarts")


async def test_a_call_that_never_left_while_its_server_restarts_is_sent_again_and_runs_once(
    temporal_address: str, tasks_url: str, events_path: Path
) -> None:
    port = free_port()
    command = [sys.executable, str(HERE / "servers" / "plain_server.py"), "--port", str(port)]
    env = {**os.environ, EVENTS_ENV: str(events_path)}
    server = _serve(command, port, env)
    url = next(server)
    pool = Workers([sys.executable, str(HERE / "worker.py")], temporal_address, [url, tasks_url])
    try:
        pool.start(1)
        temporal = await TemporalClient.connect(temporal_address)
        warm = new_tag()  # the worker's client connects and lists the tools while the server is up
        warm_handle = await start(temporal, pool, ToolCall("plain", "count", {"seconds": 0, "tag": warm}))
        assert await result_of(warm_handle) == f"{warm} done"
        server.close()  # the server is gone: the next request cannot leave
        tag = new_tag()
        handle = await start(temporal, pool, ToolCall("plain", "count", {"seconds": 0, "tag": tag}))

        async def retried() -> bool:
            pending = (await handle.describe()).raw_description.pending_activities
            return bool(pending) and pending[0].attempt >= 2

        await until(retried, "the first attempt failed as never sent")
        server = _serve(command, port, env)
        next(server)
        assert await result_of(handle) == f"{tag} done"  # not WorkerLost: "written" was withdrawn
        assert lines(events_path, tag) == ["started", "completed"]
    finally:
        pool.stop_all()
        server.close()
