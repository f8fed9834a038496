"""The Tasks measurement: what polling a task costs the client, and how late the caller learns that it ended.

There is no task client in the reference (mcp 2.3.0) and no task tool on the benchmark server, so this is a figure
of ours alone, against the scripted peer (``python -m mcp_client.testing.peer --tasks``, a separate process, so the
worker's CPU is the client's). Two parts:

* **CPU per poll**: one task of ``cpu_seconds_of_task`` with a 5 ms ``pollIntervalMs`` and a poll policy without
  backoff or jitter, so it is polled many times; the worker's CPU over the call divided by its polls. For scale,
  the same client's CPU per plain ``echo`` call on the same peer (``echo_calls`` of them), in the same worker.
* **completion to return**: ``trials`` tasks of ``task_seconds`` at the server's ``poll_interval_ms`` under the
  default poll policy (backoff and jitter on). The delay is the caller's return minus the task's end, the end
  being the creation answer's arrival plus ``task_seconds`` (the peer makes the task as it answers). It is bounded
  by the wait between the last two polls: the interval, grown by the backoff while nothing changed.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from benchmarks.clients import Driver
from benchmarks.measure import Measurement, cpu_seconds
from mcp_client import Client, Event, PollPolicy, RequestSent, TaskCreated, TaskPolicy, TimeoutPolicy, stdio

__all__ = ["tasks"]

_PEER = [sys.executable, "-m", "mcp_client.testing.peer", "--era", "modern", "--tasks"]


def _client(on_event: Callable[[Event], None], poll: PollPolicy | None = None) -> Client:
    policy = TaskPolicy(poll=poll) if poll is not None else TaskPolicy()
    transport = stdio(_PEER[0], _PEER[1:])
    return Client(transport, timeout=TimeoutPolicy(idle=30, maximum=120), on_event=on_event, tasks=policy)


async def tasks(
    driver: Driver,
    *,
    cpu_seconds_of_task: float,
    task_seconds: float,
    poll_interval_ms: float,
    trials: int,
    echo_calls: int = 200,
) -> Measurement:
    """See the module docstring. ``driver`` (the benchmark server's connection) is not used."""
    del driver
    polls = 0

    def count(event: Event) -> None:
        nonlocal polls
        if isinstance(event, RequestSent) and event.method == "tasks/get":
            polls += 1

    fixed = PollPolicy(min_interval=0.005, default_interval=0.005, backoff=1.0, jitter=0.0)
    async with _client(count, fixed) as client:
        await client.call_tool("task_work", {"seconds": 0.05, "poll_interval_ms": 5})  # warm-up
        polls = 0
        before = cpu_seconds()
        await client.call_tool("task_work", {"seconds": cpu_seconds_of_task, "poll_interval_ms": 5})
        cpu = cpu_seconds() - before
        counted = polls
        before = cpu_seconds()
        for index in range(echo_calls):
            await client.call_tool("echo", {"text": f"hello {index}"})
        echo_cpu = cpu_seconds() - before

    created: list[float] = []

    def created_at(event: Event) -> None:
        if isinstance(event, TaskCreated):
            created.append(time.perf_counter())

    delays: list[float] = []
    async with _client(created_at) as client:
        for _ in range(trials):
            created.clear()
            await client.call_tool("task_work", {"seconds": task_seconds, "poll_interval_ms": poll_interval_ms})
            returned = time.perf_counter()
            delays.append(returned - (created[0] + task_seconds))
    return {
        "cpu_per_poll_us": cpu / counted * 1e6 if counted else None,
        "polls": float(counted),
        "cpu_per_echo_call_us": echo_cpu / echo_calls * 1e6,
        "return_delay_p50_ms": statistics.median(delays) * 1e3,
        "return_delay_max_ms": max(delays) * 1e3,
    }
