"""The crash case of temporalio-mcp 0.2.0's README, measured on it and on us, for docs/temporal.md's table.

Same dev server, same mcp 2.3.0 server, same non-idempotent ``count`` tool, same SIGKILL of the worker that holds
the activity, a second worker standing by. temporalio-mcp's activity does not heartbeat, so it is noticed at its
start-to-close timeout (8 s here, for a 5 s tool) and retried: the tool runs a second time. Ours is noticed
within the heartbeat timeout and is not sent again (``test_durable_calls`` shows the ``WorkerLost`` failure).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client as TemporalClient, WorkflowFailureError

from tests.temporal.conftest import Workers
from tests.temporal.observe import heartbeat, lines, running_on, start, until
from tests.temporal.workflows import ToolCall

pytestmark = pytest.mark.anyio


async def test_their_worker_crash_runs_the_tool_twice_ours_once(
    temporal_address: str, their_workers: Workers, workers: Workers, events_path: Path
) -> None:
    temporal = await TemporalClient.connect(temporal_address)
    theirs, ours = uuid.uuid4().hex[:10], uuid.uuid4().hex[:10]
    their_workers.start(2)
    workers.ensure(2)
    their_handle = await temporal.start_workflow(
        "TheirCallWorkflow",
        args=["count", {"seconds": 5, "tag": theirs}],
        id=f"theirs-{theirs}",
        task_queue=their_workers.task_queue,
        result_type=str,
    )
    our_handle = await start(temporal, workers, ToolCall("plain", "count", {"seconds": 5, "tag": ours}))
    await until(lambda: "started" in lines(events_path, theirs), "their call reached the server")

    async def ours_written() -> bool:
        details = await heartbeat(temporal, our_handle)
        return bool(details) and details[0] == {"phase": "written"} and "started" in lines(events_path, ours)

    await until(ours_written, "our call reached the server and its checkpoint reached Temporal")
    their_workers.kill(their_workers.by_identity(await running_on(their_handle)))
    workers.kill(workers.by_identity(await running_on(our_handle)))
    with anyio.fail_after(90):
        their_result = await their_handle.result()
    assert their_result == f"{theirs} done"  # the workflow succeeded...
    assert lines(events_path, theirs).count("started") == 2  # ...by running the tool a second time
    with anyio.fail_after(60), pytest.raises(WorkflowFailureError):
        await our_handle.result()  # WorkerLost: it may have run, so it was not sent again
    assert lines(events_path, ours).count("started") == 1
