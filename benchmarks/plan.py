"""What a run measures: the jobs (worker runs) of each transport, and the metrics the report derives from them.

A :class:`Job` is one measurement kind with its parameters, the clients it applies to and how many times it is
repeated; the runner runs it once per repetition per client, interleaved (ours, reference, raw, ours, ...), each
in a fresh worker process. A :class:`Metric` is one row of the report: a field of a job's results, with the
target mcp_client should meet, if any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from benchmarks.clients import ClientName, TransportName

__all__ = ["Job", "Metric", "Target", "jobs_for", "metrics_for"]

BOTH: tuple[ClientName, ...] = ("ours", "reference")
ALL: tuple[ClientName, ...] = ("ours", "reference", "raw")
OURS: tuple[ClientName, ...] = ("ours",)


@dataclass(frozen=True, slots=True)
class Job:
    """One measurement: run ``kind`` with ``params`` for each of ``clients``, ``reps`` times, interleaved."""

    name: str
    kind: str
    params: dict[str, Any]
    clients: tuple[ClientName, ...]
    reps: int = 1


def jobs_for(transport: TransportName, *, quick: bool) -> list[Job]:
    """The jobs of one transport, full-size or quick (a few iterations of everything, to keep the suite working)."""
    stdio = transport == "stdio"
    # Floors over HTTP only for memory (the raw stdio driver does one call at a time) and progress (its reads through
    # anyio's process stream cost more per line than mcp_client's pipe protocol: no floor for us there).
    floored = BOTH if stdio else ALL
    if quick:
        jobs = [
            Job("latency", "latency", {"calls": 30, "warmup": 5}, ALL),
            Job("throughput", "throughput", {"calls": 100, "concurrency": 10, "warmup": 2}, BOTH),
            Job("progress", "progress", {"notifications": 200, "repeats": 1, "warmup": 2}, floored),
            Job("timeout", "timeout", {"trials": 2, "limit": 0.2, "sleep": 10.0, "wait": 3.0}, BOTH),
            Job("memory", "memory", {"in_flight": 50, "hold": 60.0, "settle": 5.0}, floored),
        ]
        if stdio:
            jobs += [
                Job("memory_10k", "memory", {"in_flight": 200, "hold": 60.0, "settle": 5.0}, OURS),
                Job("scale_100", "scale", {"in_flight": 10, "rounds": 3, "max_seconds": 30.0}, OURS),
                Job("scale_10000", "scale", {"in_flight": 200, "rounds": 1, "max_seconds": 30.0}, OURS),
                Job("tasks", "tasks", _TASKS | {"cpu_seconds_of_task": 0.3, "trials": 2}, OURS),
            ]
        return jobs
    # Sized for about 9 minutes on 2 cores; the server (not the clients) sets most of the wall time.
    # Repetitions: the reference's CPU per call moves by a third from one worker to the next on a shared VM, so a
    # median over five interleaved workers is what makes a ratio worth reading.
    calls, warmup = (1000, 50) if stdio else (300, 30)
    jobs = [
        Job("latency", "latency", {"calls": calls, "warmup": warmup}, ALL, reps=5),
        Job("throughput", "throughput", {"calls": 1000, "concurrency": 50, "warmup": 20}, BOTH, reps=3),
        Job("progress", "progress", {"notifications": 5000, "repeats": 1, "warmup": 5}, floored, reps=3),
        Job("timeout", "timeout", {"trials": 10, "limit": 0.2, "sleep": 10.0, "wait": 3.0}, BOTH, reps=3),
        Job("memory", "memory", {"in_flight": 1000, "hold": 600.0, "settle": 15.0}, floored),
    ]
    if stdio:
        jobs += [
            Job("memory_10k", "memory", {"in_flight": 10_000, "hold": 600.0, "settle": 20.0}, OURS),
            Job("scale_100", "scale", {"in_flight": 100, "rounds": 30, "max_seconds": 120.0}, OURS, reps=3),
            Job("scale_10000", "scale", {"in_flight": 10_000, "rounds": 1, "max_seconds": 300.0}, OURS, reps=3),
            Job("tasks", "tasks", _TASKS | {"cpu_seconds_of_task": 3.0, "trials": 10}, OURS, reps=3),
        ]
    return jobs


_TASKS = {"task_seconds": 0.5, "poll_interval_ms": 100}
"""The completion-to-return trials: half-second tasks at the server's 100 ms interval (see benchmarks/tasks.py)."""


@dataclass(frozen=True, slots=True)
class Target:
    """mcp_client's goal for a metric: ``ours / <against> <= limit`` (``against``: reference, floor or a baseline
    metric of ours)."""

    against: Literal["reference", "floor", "baseline"]
    limit: float

    def describe(self) -> str:
        """E.g. ``"<= 0.33x reference"``."""
        return f"<= {self.limit:g}x {self.against}"


@dataclass(frozen=True, slots=True)
class Metric:
    """One row of the report."""

    key: str
    label: str
    """Row label; ``{name}`` fields are filled from the job's parameters (``{in_flight:,}``, ``{calls}``...)."""
    unit: str
    job: str
    field: str
    clients: tuple[ClientName, ...]
    higher_is_better: bool = False
    target: Target | None = None
    baseline: str | None = None
    """For ``Target(against="baseline")``: the key of the metric (of ours) this one is divided by."""


def metrics_for(transport: TransportName) -> list[Metric]:
    """The report rows of one transport, in order."""
    stdio = transport == "stdio"
    metrics = [
        Metric(
            "cpu_per_call_us",
            "client CPU per echo call (sequential)",
            "us",
            "latency",
            "cpu_per_call_us",
            ALL,
            target=Target("reference", 0.33 if stdio else 0.6),
        ),
        Metric(
            "latency_p50_us",
            "latency p50 (sequential echo)",
            "us",
            "latency",
            "latency_p50_us",
            ALL,
            target=Target("floor", 1.15),
        ),
        Metric("latency_p99_us", "latency p99 (sequential echo)", "us", "latency", "latency_p99_us", ALL),
        Metric(
            "throughput_calls_per_s",
            "throughput, {calls:,} calls at {concurrency:,} in flight",
            "calls/s",
            "throughput",
            "throughput_calls_per_s",
            BOTH,
            higher_is_better=True,
        ),
        Metric(
            "throughput_cpu_per_call_us",
            "client CPU per call at {concurrency:,} in flight",
            "us",
            "throughput",
            "throughput_cpu_per_call_us",
            BOTH,
        ),
        Metric(
            "cpu_per_progress_us",
            "client CPU per progress notification",
            "us",
            "progress",
            "cpu_per_progress_us",
            BOTH if stdio else ALL,
            target=Target("reference", 0.25),
        ),
        Metric(
            "timeout_error_delay_ms",
            "timeout: error after the deadline",
            "ms",
            "timeout",
            "timeout_error_delay_ms",
            BOTH,
            target=Target("reference", 0.4),
        ),
        Metric(
            "cancel_seen_delay_ms",
            "timeout: server sees the cancel after the deadline",
            "ms",
            "timeout",
            "cancel_seen_delay_ms",
            BOTH,
            target=Target("reference", 0.5),
        ),
        Metric(
            "cancel_written_delay_ms",
            "timeout: our cancel written after the deadline",
            "ms",
            "timeout",
            "cancel_written_delay_ms",
            OURS,
        ),
        Metric(
            "server_reaction_ms",
            "timeout: the server's reaction (cancel written to its finally)",
            "ms",
            "timeout",
            "server_reaction_ms",
            OURS,
        ),
        Metric(
            "memory_per_call_bytes",
            "memory per call, {in_flight:,} in flight",
            "B",
            "memory",
            "memory_per_call_bytes",
            BOTH if stdio else ALL,
            target=Target("reference", 0.25 if stdio else 0.4),
        ),
    ]
    if stdio:
        metrics += [
            Metric(
                "memory_per_call_10k_bytes",
                "memory per call, {in_flight:,} in flight",
                "B",
                "memory_10k",
                "memory_per_call_bytes",
                OURS,
            ),
            Metric(
                "scale_cpu_per_call_100_us",
                "client CPU per call, {in_flight:,} in flight",
                "us",
                "scale_100",
                "cpu_per_call_us",
                OURS,
            ),
            Metric("task_cpu_per_poll_us", "task: client CPU per poll", "us", "tasks", "cpu_per_poll_us", OURS),
            Metric(
                "task_cpu_per_echo_us",
                "task: client CPU per echo call, same peer (for scale)",
                "us",
                "tasks",
                "cpu_per_echo_call_us",
                OURS,
            ),
            Metric(
                "task_return_delay_p50_ms",
                "task: completion to return, p50 ({poll_interval_ms:g} ms pollIntervalMs)",
                "ms",
                "tasks",
                "return_delay_p50_ms",
                OURS,
            ),
            Metric(
                "task_return_delay_max_ms",
                "task: completion to return, max ({poll_interval_ms:g} ms pollIntervalMs)",
                "ms",
                "tasks",
                "return_delay_max_ms",
                OURS,
            ),
            Metric(
                "scale_cpu_per_call_10000_us",
                "client CPU per call, {in_flight:,} in flight",
                "us",
                "scale_10000",
                "cpu_per_call_us",
                OURS,
                target=Target("baseline", 1.5),
                baseline="scale_cpu_per_call_100_us",
            ),
        ]
    return metrics
