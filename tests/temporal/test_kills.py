"""Worker kills (SIGKILL) at every point of a call, for each kind of call, with and without an awaiting codec; the
MCP servers count the executions.

Points: ``before`` (the worker dies while the ``written`` checkpoint is encoded: nothing can have left), ``during``
(the server runs the tool; for a task, its reference is in Temporal), ``after`` (the tool ran; the worker dies
while its result is encoded, so Temporal never hears of it), ``random`` (a uniformly random moment in the first two
seconds of the attempt). Kinds: a plain call not safe to repeat (``count``), an idempotent one
(``count_idempotent``), a task-backed one (``slow_task``). Codecs (``codec.py``): one that returns at once, one
that awaits 50 ms on every payload. Each worker of these tests runs one activity at a time, so a kill hits one call.

The promise: a call not safe to repeat runs once, or is refused as "may have run" (``WorkerLost``) and never runs a
second time; only the idempotent tool may run again. docs/temporal.md's table is this test's expectations.
"""

from __future__ import annotations

import os
import random
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client as TemporalClient, WorkflowFailureError, WorkflowHandle
from temporalio.converter import DataConverter
from temporalio.exceptions import ActivityError, ApplicationError

from tests.temporal.codec import CODECS, KILL_DIR_ENV
from tests.temporal.conftest import HERE, Workers
from tests.temporal.observe import lines, start, until
from tests.temporal.workflows import ToolCall

pytestmark = pytest.mark.anyio

KINDS = {"plain": ("plain", "count"), "idempotent": ("plain", "count_idempotent"), "task": ("tasks", "slow_task")}
POINTS = ("before", "during", "after", "random")
SECONDS = 1.0
"""How long each tool runs."""
POOL = 4
"""Workers per codec: three busy, one spare, topped up after each kill."""

# (point, kind) -> (the workflow's outcome, how many times the server started the tool); None: the random point,
# where the invariant is checked instead.
EXPECTED: dict[tuple[str, str], tuple[str, int] | None] = {
    ("before", "plain"): ("done", 1),
    ("before", "idempotent"): ("done", 1),
    ("before", "task"): ("done", 1),
    ("during", "plain"): ("WorkerLost", 1),
    ("during", "idempotent"): ("done", 2),
    ("during", "task"): ("done", 1),
    ("after", "plain"): ("WorkerLost", 1),
    ("after", "idempotent"): ("done", 2),
    ("after", "task"): ("done", 1),
}


@pytest.fixture
def codec_pools(temporal_address: str, plain_url: str, tasks_url: str, tmp_path: Path) -> Iterator[dict[str, Workers]]:
    """A pool of workers per codec, one activity each; the kill markers in a directory of the test."""
    env = {**os.environ, KILL_DIR_ENV: str(tmp_path)}
    command = [sys.executable, str(HERE / "worker.py")]
    pools = {codec: Workers(command, temporal_address, [plain_url, tasks_url, codec], env=env) for codec in CODECS}
    try:
        for pool in pools.values():
            pool.start(POOL, wait=False)
        for pool in pools.values():
            pool.ensure(POOL)
        yield pools
    finally:
        for pool in pools.values():
            pool.stop_all()


async def _decoded_heartbeat(temporal: TemporalClient, handle: WorkflowHandle[Any, Any]) -> list[Any]:
    description = await handle.describe()
    for pending in description.raw_description.pending_activities:
        if pending.heartbeat_details.payloads:
            return await temporal.data_converter.decode(pending.heartbeat_details.payloads)
    return []


async def _worker_of(handle: WorkflowHandle[Any, Any]) -> str | None:
    for pending in (await handle.describe()).raw_description.pending_activities:
        if pending.last_worker_identity:
            return str(pending.last_worker_identity)
    return None


async def _kill_when_due(
    temporal: TemporalClient,
    workers: Workers,
    events: Path,
    handle: WorkflowHandle[Any, Any],
    point: str,
    kind: str,
    tag: str,
) -> None:
    """The test's own kills (``during``, ``random``); the codec does ``before`` and ``after`` in the worker."""
    if point == "during":

        async def due() -> bool:
            if "started" not in lines(events, tag):
                return False
            if kind != "task":
                return True
            details = await _decoded_heartbeat(temporal, handle)
            return bool(details) and details[0].get("phase") == "task"

        await until(due, "the tool runs (and its task is in Temporal)")
    elif point == "random":
        await until(lambda: _worker_of(handle), "the attempt started")
        await anyio.sleep(random.uniform(0, 2.0))  # a real process: there is no clock to fake
    else:  # the codec kills the worker itself: wait until it did
        await until(lambda: _worker_of(handle), "the attempt started")
        identity = await _worker_of(handle)
        assert identity is not None
        process = workers.by_identity(identity)
        await until(lambda: process.poll() is not None, "the codec killed its worker")
        return
    identity = await _worker_of(handle)
    if identity is not None:
        workers.kill(workers.by_identity(identity))


async def _outcome(handle: WorkflowHandle[Any, Any]) -> tuple[str, dict[str, Any] | None]:
    try:
        with anyio.fail_after(60):
            result: str = await handle.result()
        return ("done" if result.endswith(" done") else result), None
    except WorkflowFailureError as exc:
        activity_error = exc.cause
        assert isinstance(activity_error, ActivityError)
        failure = activity_error.cause
        assert isinstance(failure, ApplicationError)
        return str(failure.type), failure.details[0]


async def _wave(
    temporal: TemporalClient, workers: Workers, events_path: Path, codec: str, point: str
) -> dict[tuple[str, str, str], tuple[str, int]]:
    """The three kinds at once, each on a worker of its own, killed at ``point``; then the pool topped up."""
    await anyio.to_thread.run_sync(workers.ensure, POOL)
    tags = {kind: f"{point}-{uuid.uuid4().hex[:10]}" for kind in KINDS}
    handles = {
        kind: await start(
            temporal,
            workers,
            ToolCall(server, tool, {"seconds": SECONDS, "tag": tags[kind]}, heartbeat_timeout=1, retry_after=0.2),
        )
        for kind, (server, tool) in KINDS.items()
    }
    async with anyio.create_task_group() as group:
        for kind, handle in handles.items():
            group.start_soon(_kill_when_due, temporal, workers, events_path, handle, point, kind, tags[kind])
    seen: dict[tuple[str, str, str], tuple[str, int]] = {}
    async with anyio.create_task_group() as group:
        group.start_soon(anyio.to_thread.run_sync, workers.ensure, POOL)  # replacements start while Temporal waits
        for kind, handle in handles.items():
            outcome, details = await _outcome(handle)
            runs = lines(events_path, tags[kind]).count("started")
            seen[codec, point, kind] = (outcome, runs)
            if outcome == "WorkerLost":
                assert details is not None
                assert details["may_have_run"] == "maybe"
                assert details["tool"] == KINDS[kind][1]
    return seen


async def test_a_killed_worker_never_runs_a_call_twice_that_is_not_safe_to_repeat(
    temporal_address: str, codec_pools: dict[str, Workers], events_path: Path
) -> None:
    seen: dict[tuple[str, str, str], tuple[str, int]] = {}

    async def run(codec: str) -> None:
        converter = DataConverter(payload_codec=CODECS[codec]())
        temporal = await TemporalClient.connect(temporal_address, data_converter=converter)
        for point in POINTS:
            seen.update(await _wave(temporal, codec_pools[codec], events_path, codec, point))

    async with anyio.create_task_group() as group:  # the two codecs side by side
        for codec in CODECS:
            group.start_soon(run, codec)
    print(f"\n{seen}")  # the table of docs/temporal.md, for a reader of -s
    assert len(seen) == len(CODECS) * len(POINTS) * len(KINDS)
    wrong = {case: got for case, got in sorted(seen.items()) if not _as_promised(case[1], case[2], *got)}
    assert not wrong


def _as_promised(point: str, kind: str, outcome: str, runs: int) -> bool:
    expected = EXPECTED.get((point, kind))
    if expected is not None:
        return (outcome, runs) == expected
    if kind == "idempotent":
        return outcome == "done" and 1 <= runs <= 2
    # Not safe to repeat: once, or refused as "may have run"; never twice.
    return (outcome == "done" and runs == 1) or (outcome == "WorkerLost" and runs <= 1)
