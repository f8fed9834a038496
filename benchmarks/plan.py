"""What a run measures: the jobs (worker runs) of each transport, and the metrics the report derives from them.

A :class:`Job` is one measurement kind with its parameters, the clients it applies to and how many times it is
repeated; the runner runs it once per repetition per client, interleaved (ours, reference, raw, ours, ...), each
in a fresh worker process. A :class:`Metric` is one row of the report: a field of a job's results, with the
target mcp_client should meet, if any.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from benchmarks.clients import ClientName, TransportName

__all__ = [
    "Job",
    "Metric",
    "Target",
    "can_hold_on_one_cpu",
    "jobs_for",
    "metrics_for",
    "process_jobs",
    "process_metrics",
]

BOTH: tuple[ClientName, ...] = ("ours", "reference")
ALL: tuple[ClientName, ...] = ("ours", "reference", "raw")
OURS: tuple[ClientName, ...] = ("ours",)
HTTP_BOTH: tuple[ClientName, ...] = ("ours", "ours_httpx", "reference")
"""Over HTTP mcp_client runs twice: on the client ``http()`` makes (httpx2) and on a caller's httpx 0.28 client."""
HTTP_ALL: tuple[ClientName, ...] = ("ours", "ours_httpx", "reference", "raw", "raw_httpx")
"""... and the floor on each line."""


@dataclass(frozen=True, slots=True)
class Job:
    """One measurement: run ``kind`` with ``params`` for each of ``clients``, ``reps`` times, interleaved."""

    name: str
    kind: str
    params: dict[str, Any]
    clients: tuple[ClientName, ...]
    reps: int = 1
    server_args: tuple[str, ...] = ()
    """Extra command-line arguments of the stdio benchmark server its workers spawn (``--one-cpu``)."""


def jobs_for(transport: TransportName, *, quick: bool) -> list[Job]:
    """The jobs of one transport, full-size or quick (a few iterations of everything, to keep the suite working)."""
    stdio = transport == "stdio"
    # The stdio memory floor is left out (the raw stdio driver does one call at a time), and so is the stdio floor of
    # CPU per progress notification (its reads through anyio's process stream cost more per line than mcp_client's
    # pipe protocol): over stdio the raw reader runs the progress job for the burst's wall time alone.
    floored = BOTH if stdio else HTTP_ALL
    every = ALL if stdio else HTTP_ALL
    both = BOTH if stdio else HTTP_BOTH
    # The burst's wall time is the server's pace, and over stdio that depends on where the server's own threads run
    # (docs/benchmarks.md, "The burst, measured"): the raw reader shows it for the floor, and the same burst with
    # the server held on one CPU takes the server's thread placement out of the comparison.
    one_cpu = stdio and can_hold_on_one_cpu()
    if quick:
        jobs = [
            Job("latency", "latency", {"calls": 30, "warmup": 5}, every),
            Job("throughput", "throughput", {"calls": 100, "concurrency": 10, "warmup": 2}, both),
            Job("progress", "progress", {"notifications": 200, "repeats": 1, "warmup": 2}, every),
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
        if one_cpu:
            jobs.append(Job("progress_one_cpu", "progress", _QUICK_BURST, ALL, server_args=("--one-cpu",)))
        return jobs
    # Sized for about 9 minutes on 2 cores; the server (not the clients) sets most of the wall time.
    # Repetitions: the reference's CPU per call moves by a third from one worker to the next on a shared VM, so a
    # median over five interleaved workers is what makes a ratio worth reading.
    calls, warmup = (1000, 50) if stdio else (300, 30)
    jobs = [
        Job("latency", "latency", {"calls": calls, "warmup": warmup}, every, reps=5),
        Job("throughput", "throughput", {"calls": 1000, "concurrency": 50, "warmup": 20}, both, reps=3),
        Job("progress", "progress", _BURST, every, reps=3),
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
    if one_cpu:
        jobs.append(Job("progress_one_cpu", "progress", _BURST, ALL, reps=3, server_args=("--one-cpu",)))
    return jobs


_BURST = {"notifications": 5000, "repeats": 1, "warmup": 5}
_QUICK_BURST = {"notifications": 200, "repeats": 1, "warmup": 2}


def can_hold_on_one_cpu() -> bool:
    """Whether the stdio server can be held on one CPU here (Linux's affinity call, two CPUs or more to choose)."""
    return hasattr(os, "sched_getaffinity") and len(os.sched_getaffinity(0)) >= 2


_TASKS = {"task_seconds": 0.5, "poll_interval_ms": 100}
"""The completion-to-return trials: half-second tasks at the server's 100 ms interval (see benchmarks/tasks.py)."""


@dataclass(frozen=True, slots=True)
class Target:
    """mcp_client's goal for a metric: ``ours / <against> <= limit`` (``>=`` when ``at_least``). ``against``: the
    reference, the floor, a baseline metric of ours, or ``absolute`` (``ours`` itself, in the metric's unit)."""

    against: Literal["reference", "floor", "baseline", "absolute"]
    limit: float
    at_least: bool = False

    def describe(self, unit: str = "") -> str:
        """E.g. ``"<= 0.33x reference"``, ``">= 1.2x reference"``, ``"<= 200,000 B"``."""
        sign = ">=" if self.at_least else "<="
        if self.against == "absolute":
            return f"{sign} {self.limit:,g} {unit}".rstrip()
        return f"{sign} {self.limit:g}x {self.against}"

    def met_by(self, value: float) -> bool:
        """Whether ``value`` (the ratio, or the figure itself for ``absolute``) meets the target."""
        return value >= self.limit if self.at_least else value <= self.limit


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
    targets: tuple[Target, ...] = ()
    baseline: str | None = None
    """For ``Target(against="baseline")``: the key of the metric (of ours) this one is divided by."""


def metrics_for(transport: TransportName) -> list[Metric]:
    """The report rows of one transport, in order. Over HTTP ``ALL``/``BOTH`` rows also measure mcp_client on a
    caller's httpx client against the httpx floor (the report shows those as rows of their own, without targets)."""
    stdio = transport == "stdio"
    every = ALL if stdio else HTTP_ALL
    both = BOTH if stdio else HTTP_BOTH
    metrics = [
        Metric(
            "cpu_per_call_us",
            "client CPU per echo call (sequential)",
            "us",
            "latency",
            "cpu_per_call_us",
            every,
            targets=(Target("floor", 1.1),) if stdio else (Target("reference", 0.55),),
        ),
        Metric(
            "latency_p50_us",
            "latency p50 (sequential echo)",
            "us",
            "latency",
            "latency_p50_us",
            every,
            targets=(Target("floor", 1.15),),
        ),
        Metric(
            "latency_p99_us",
            "latency p99 (sequential echo)",
            "us",
            "latency",
            "latency_p99_us",
            every,
            targets=(Target("floor", 1.5),),
        ),
        Metric(
            "throughput_calls_per_s",
            "throughput, {calls:,} calls at {concurrency:,} in flight",
            "calls/s",
            "throughput",
            "throughput_calls_per_s",
            both,
            higher_is_better=True,
            targets=(Target("reference", 1.2, at_least=True),),
        ),
        Metric(
            "throughput_cpu_per_call_us",
            "client CPU per call at {concurrency:,} in flight",
            "us",
            "throughput",
            "throughput_cpu_per_call_us",
            both,
            targets=(Target("reference", 0.40 if stdio else 0.60),),
        ),
        Metric(
            "cpu_per_progress_us",
            "client CPU per progress notification",
            "us",
            "progress",
            "cpu_per_progress_us",
            BOTH if stdio else HTTP_ALL,
            targets=(Target("reference", 0.25),),
        ),
        Metric(
            "progress_burst_wall_ms",
            "wall time of the call that sends the {notifications:,} progress notifications",
            "ms",
            "progress",
            "burst_wall_ms",
            every,
            targets=(Target("reference", 1.0),) if stdio else (),
        ),
        Metric(
            "timeout_error_delay_ms",
            "timeout: error after the deadline",
            "ms",
            "timeout",
            "timeout_error_delay_ms",
            BOTH,
            targets=(Target("reference", 0.4),),
        ),
        Metric(
            "cancel_seen_delay_ms",
            "timeout: server sees the cancel after the deadline",
            "ms",
            "timeout",
            "cancel_seen_delay_ms",
            BOTH,
            targets=(Target("reference", 0.5),),
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
            BOTH if stdio else HTTP_ALL,
            targets=(Target("reference", 0.25 if stdio else 0.50),),
        ),
    ]
    if stdio and can_hold_on_one_cpu():
        metrics.append(
            Metric(
                "progress_burst_wall_one_cpu_ms",
                "wall time of the {notifications:,}-notification call, the server held on one CPU",
                "ms",
                "progress_one_cpu",
                "burst_wall_ms",
                ALL,
            )
        )
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
                targets=(Target("baseline", 1.5),),
                baseline="scale_cpu_per_call_100_us",
            ),
        ]
    return metrics


def process_jobs(*, quick: bool) -> list[Job]:
    """The jobs of the process section (:mod:`benchmarks.process`): each repetition a fresh interpreter."""
    package = {"ours": "import mcp_client", "reference": "import mcp"}
    program = {"ours": "from mcp_client import Client, stdio", "reference": "from mcp import Client"}
    if quick:
        return [
            Job("import", "import", package, BOTH, reps=1),
            Job("import_client", "import", program, BOTH, reps=1),
            Job("group", "group", {"servers": 5, "delay": 0.2}, OURS),
            Job("idle", "idle", {}, OURS),
        ]
    return [
        Job("import", "import", package, BOTH, reps=11),
        Job("import_client", "import", program, BOTH, reps=7),
        Job("group", "group", {"servers": 20, "delay": 0.5}, OURS, reps=3),
        Job("idle", "idle", {}, OURS, reps=3),
    ]


def process_metrics() -> list[Metric]:
    """The rows of the process section."""
    return [
        Metric(
            "import_ms",
            "import mcp_client in a fresh process (reference: import mcp)",
            "ms",
            "import",
            "import_ms",
            BOTH,
            targets=(Target("reference", 0.35),),
        ),
        Metric(
            "import_client_ms",
            "from mcp_client import Client, stdio (reference: from mcp import Client)",
            "ms",
            "import_client",
            "import_ms",
            BOTH,
        ),
        Metric(
            "group_single_slowest_ms",
            "slowest of {servers} single stdio starts (server waits {delay:g} s)",
            "ms",
            "group",
            "slowest_single_ms",
            OURS,
        ),
        Metric(
            "group_start_ms",
            "ClientGroup of {servers} stdio servers: start",
            "ms",
            "group",
            "group_ms",
            OURS,
            targets=(Target("baseline", 1.3),),
            baseline="group_single_slowest_ms",
        ),
        Metric(
            "group_bare_together_ms",
            "the same {servers} servers spawned together with no client (each answers one request)",
            "ms",
            "group",
            "bare_together_ms",
            OURS,
        ),
        Metric(
            "group_lazy_start_ms",
            "ClientGroup of {servers} lazy stdio servers: start (no server starts)",
            "ms",
            "group",
            "lazy_group_ms",
            OURS,
        ),
        Metric(
            "group_lazy_first_call_ms",
            "the lazy group's first call (starts the one server it needs)",
            "ms",
            "group",
            "lazy_first_call_ms",
            OURS,
        ),
        Metric(
            "group_client_cpu_ms",
            "ClientGroup start: this process's CPU (the rest is the servers')",
            "ms",
            "group",
            "group_client_cpu_ms",
            OURS,
        ),
        Metric(
            "idle_client_bytes",
            "memory of an idle connected client (stdio)",
            "B",
            "idle",
            "idle_bytes",
            OURS,
            targets=(Target("absolute", 200_000),),
        ),
    ]
