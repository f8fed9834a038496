"""The measurements, each written once against :class:`~benchmarks.clients.Driver` so every client runs the same loop.

Each function runs inside a worker process (see :mod:`benchmarks.worker`) with one connected driver and returns a
flat ``{field: number}`` dict. CPU is ``resource.getrusage(RUSAGE_SELF)`` user + system time of the worker, so it
is the client's alone: the server is another process. Times are in microseconds (``_us``), milliseconds (``_ms``)
or seconds (``_s``) as the field name says.
"""

from __future__ import annotations

import contextlib
import gc
import resource
import statistics
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from benchmarks.clients import Driver

__all__ = ["KINDS", "Measurement", "Runner", "cpu_seconds", "percentile"]

Measurement = dict[str, float | None]
Runner = Callable[..., Awaitable[Measurement]]


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (all its threads; not its children)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


async def _warm_up(driver: Driver, calls: int) -> None:
    for _ in range(calls):
        await driver.call("echo", {"text": "warm-up"})


async def latency(driver: Driver, *, calls: int, warmup: int) -> Measurement:
    """Sequential ``echo`` calls: client CPU per call, and p50/p99 of the wall time of one call."""
    await _warm_up(driver, warmup)
    durations: list[float] = []
    gc.collect()
    cpu_before = cpu_seconds()
    for index in range(calls):
        started = time.perf_counter()
        text = await driver.call("echo", {"text": f"hello {index}"})
        durations.append(time.perf_counter() - started)
        if index == 0 and text != "hello 0":
            raise RuntimeError(f"echo answered {text!r}")
    cpu = cpu_seconds() - cpu_before
    return {
        "cpu_per_call_us": cpu / calls * 1e6,
        "latency_p50_us": percentile(durations, 0.50) * 1e6,
        "latency_p99_us": percentile(durations, 0.99) * 1e6,
        "calls": calls,
    }


async def throughput(driver: Driver, *, calls: int, concurrency: int, warmup: int) -> Measurement:
    """``calls`` echo calls with at most ``concurrency`` in flight (a task group and a semaphore)."""
    await _warm_up(driver, warmup)
    limit = anyio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with limit:
            await driver.call("echo", {"text": f"hello {index}"})

    gc.collect()
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    async with anyio.create_task_group() as task_group:
        for index in range(calls):
            task_group.start_soon(one, index)
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds() - cpu_before
    return {
        "throughput_calls_per_s": calls / elapsed,
        "throughput_cpu_per_call_us": cpu / calls * 1e6,
        "calls": calls,
        "concurrency": concurrency,
    }


async def progress(driver: Driver, *, notifications: int, repeats: int, warmup: int) -> Measurement:
    """Client CPU per progress notification: (CPU of ``burst(n)`` - CPU of ``burst(0)``) / n, callback counting;
    and the wall time of the ``burst(n)`` call (the server's pace, which the client's reading can slow down)."""
    await _warm_up(driver, warmup)
    delivered = 0

    def tick() -> None:
        nonlocal delivered
        delivered += 1

    walls: list[float] = []

    async def cpu_of(n: int) -> float:
        gc.collect()
        before = cpu_seconds()
        started = time.perf_counter()
        await driver.call("burst", {"n": n}, on_progress=tick)
        if n == notifications:
            walls.append(time.perf_counter() - started)
        return cpu_seconds() - before

    await cpu_of(0)  # warms the progress path
    plain: list[float] = []
    bursts: list[float] = []
    counts: list[int] = []
    for _ in range(repeats):
        plain.append(await cpu_of(0))
        delivered = 0
        bursts.append(await cpu_of(notifications))
        counts.append(delivered)
    extra = statistics.median(bursts) - statistics.median(plain)
    return {
        "cpu_per_progress_us": extra / notifications * 1e6,
        "plain_call_cpu_us": statistics.median(plain) * 1e6,
        "burst_call_cpu_us": statistics.median(bursts) * 1e6,
        "burst_wall_ms": statistics.median(walls) * 1e3,
        "notifications": notifications,
        "callbacks_run": statistics.median(counts),
    }


async def timeout(driver: Driver, *, trials: int, limit: float, sleep: float, wait: float) -> Measurement:
    """``sleep(sleep)`` under a ``limit`` s timeout: how late after the deadline the error reaches the caller, and
    when the server's tool saw the cancellation (its ``finally`` writes ``time.time()`` to a file), both in ms."""
    await _warm_up(driver, 3)
    error_delays: list[float] = []
    cancel_delays: list[float] = []
    written_delays: list[float] = []
    reactions: list[float] = []
    never = 0
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as folder:
        warm_up = Path(folder) / "warm-up.txt"
        with contextlib.suppress(Exception):  # one unmeasured timeout first: the error path runs warm, as calls do
            await driver.call("sleep", {"seconds": sleep, "record_to": str(warm_up)}, timeout=limit)
        await _recorded_cancel(warm_up, wait)
        for trial in range(trials):
            record = Path(folder) / f"trial-{trial}.txt"
            written_before = getattr(driver, "cancel_written_at", None)
            deadline = time.time() + limit
            try:
                await driver.call("sleep", {"seconds": sleep, "record_to": str(record)}, timeout=limit)
            except Exception:
                error_delays.append((time.time() - deadline) * 1e3)
            else:
                raise RuntimeError(f"sleep({sleep}) did not time out after {limit} s")
            seen = await _recorded_cancel(record, wait)
            written = getattr(driver, "cancel_written_at", None)
            if written is not None and written != written_before:  # only mcp_client's driver can tell
                written_delays.append((written - deadline) * 1e3)
            else:
                written = None
            if seen is None:
                never += 1
            else:
                cancel_delays.append((seen - deadline) * 1e3)
                if written is not None:
                    reactions.append((seen - written) * 1e3)
            await anyio.sleep(0.05)
    return {
        "timeout_error_delay_ms": statistics.median(error_delays),
        "timeout_error_delay_max_ms": max(error_delays),
        "cancel_seen_delay_ms": statistics.median(cancel_delays) if cancel_delays else None,
        "cancel_never_seen": never,
        "cancel_written_delay_ms": statistics.median(written_delays) if written_delays else None,
        "server_reaction_ms": statistics.median(reactions) if reactions else None,
        "trials": trials,
    }


async def _recorded_cancel(record: Path, wait: float) -> float | None:
    """The ``time.time()`` at which the server's tool was cancelled, or None if it did not say so within ``wait``."""
    with anyio.move_on_after(wait):
        while True:
            # A few bytes from a local file: read in place, not in a thread that would add noise to the client.
            text = record.read_text(encoding="utf-8") if record.exists() else ""  # noqa: ASYNC240
            if text.endswith("\n"):
                outcome, _, at = text.strip().partition(" ")
                return float(at) if outcome == "cancelled" else None
            await anyio.sleep(0.005)
    return None


async def memory(driver: Driver, *, in_flight: int, hold: float, settle: float) -> Measurement:
    """Bytes per call in flight: tracemalloc's current size with ``in_flight`` slow calls out, minus before, minus
    what the harness's own tasks cost (measured the same way with tasks that only wait), divided by the count."""
    await _warm_up(driver, 3)
    tag = f"memory-{uuid.uuid4().hex}"
    released = anyio.Event()

    async def idle_task() -> None:
        await released.wait()

    async def slow_call() -> None:
        await driver.call("sleep", {"seconds": hold, "tag": tag})

    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        async with anyio.create_task_group() as task_group:
            for _ in range(in_flight):
                task_group.start_soon(idle_task)
            await anyio.sleep(0.1)
            gc.collect()
            harness = tracemalloc.get_traced_memory()[0] - baseline
            released.set()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        async with anyio.create_task_group() as task_group:
            for _ in range(in_flight):
                task_group.start_soon(slow_call)
            reached = await _wait_active(driver, tag, in_flight, settle)
            gc.collect()
            during = tracemalloc.get_traced_memory()[0]
            task_group.cancel_scope.cancel()
    finally:
        tracemalloc.stop()
    return {
        "memory_per_call_bytes": (during - before - harness) / in_flight,
        "memory_gross_per_call_bytes": (during - before) / in_flight,
        "harness_per_task_bytes": harness / in_flight,
        "in_flight": in_flight,
        "server_saw_in_flight": reached,
    }


async def _wait_active(driver: Driver, tag: str, target: int, settle: float) -> int:
    """Poll the server until ``target`` calls of ``tag`` run (or the count stops growing for ``settle`` s)."""
    best, best_at = -1, time.monotonic()
    while True:
        count = int(await driver.call("active", {"tag": tag}))
        if count >= target:
            return count
        now = time.monotonic()
        if count > best:
            best, best_at = count, now
        elif now - best_at > settle:
            return count
        await anyio.sleep(0.1)


async def scale(driver: Driver, *, in_flight: int, rounds: int, max_seconds: float) -> Measurement:
    """Client CPU per call with ``in_flight`` calls out at once: ``rounds`` rounds of ``in_flight`` concurrent
    ``hold`` calls, which the server answers together once all of them are running (each with its own timers)."""
    await _warm_up(driver, 10)
    released = 0

    async def one(tag: str) -> None:
        nonlocal released
        if await driver.call("hold", {"tag": tag, "n": in_flight, "max_seconds": max_seconds}) == "released":
            released += 1

    gc.collect()
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    for round_index in range(rounds):
        tag = f"scale-{uuid.uuid4().hex}-{round_index}"
        async with anyio.create_task_group() as task_group:
            for _ in range(in_flight):
                task_group.start_soon(one, tag)
    cpu = cpu_seconds() - cpu_before
    calls = in_flight * rounds
    return {
        "cpu_per_call_us": cpu / calls * 1e6,
        "wall_s": time.perf_counter() - started,
        "calls": calls,
        "in_flight": in_flight,
        "released_together": released / calls,
    }


KINDS: dict[str, Runner] = {
    "latency": latency,
    "throughput": throughput,
    "progress": progress,
    "timeout": timeout,
    "memory": memory,
    "scale": scale,
}
"""Measurement kinds by name, as the worker runs them."""
