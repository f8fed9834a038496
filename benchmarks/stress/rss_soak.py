"""Is the client's RSS growth over a long stdio soak a leak, or the allocator keeping what it once used?

``python -m benchmarks.stress.rss_soak --calls 200000 [--backend asyncio] [--server peer|reference]
[--mix echo|mixed] [--workers 8] [--trace-memory]`` makes that many calls over stdio to the scripted peer or mcp
2.3.0's server and samples the resident set size every ``--every`` calls. The ``echo`` mix (eight callers by
default) is echoes with one call in ten cancelled at random; the ``mixed`` mix (run it with ``--workers 32``) is
the mix a host makes: echoes, progress tools under an idle limit, random cancels, and calls that end by their idle
or their maximum timeout (see :data:`MIXED`). A leak grows at a steady rate for as long as calls run; memory the
allocator keeps (pymalloc arenas and glibc's heap, fragmented by bursts of short-lived objects) grows less and
less and then stays. At the end ``malloc_trim(0)`` (glibc) returns the free heap to the system: what RSS drops by
then was never live.
``--trace-memory`` also runs ``tracemalloc`` (which itself costs memory and time) to show what Python objects
hold, and ``--top N`` prints the N source lines whose traced memory grew most between the first sample after the
warm-up (``--warmup`` calls) and the end.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import gc
import itertools
import json
import random
import sys
import tracemalloc
from collections import Counter
from collections.abc import Sequence
from typing import Any

import anyio

from benchmarks.stress.accounting import snapshot
from mcp_client import Client, MCPClientError, TimeoutPolicy, stdio
from mcp_client.session import session as session_module

__all__ = ["main"]


def _malloc_trim() -> bool:
    """Ask glibc to give free heap memory back to the system; False where there is no such call."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return False
    trim(0)
    return True


SERVERS = {
    "peer": ["-m", "mcp_client.testing.peer"],  # the scripted peer
    "reference": ["-m", "benchmarks.bench_server"],  # mcp 2.3.0's MCPServer
}


MIXES = ("echo", "mixed")
MIXED = (("echo", 0.40), ("progress", 0.15), ("cancelled", 0.15), ("idle_timeout", 0.15), ("max_timeout", 0.15))
"""The ``mixed`` mix: each call's kind and its share. ``progress``: a tool that reports progress, under an idle
limit that its progress keeps resetting; ``cancelled``: a sleeping tool cancelled by its caller at a random moment;
``idle_timeout`` and ``max_timeout``: a sleeping tool that outlasts a short idle limit or a short maximum."""
_TOOLS: dict[
    str, tuple[tuple[str, dict[str, Any]], tuple[str, str]]
] = {  # per server: (progress tool and arguments, sleeping tool's name and argument name)
    "peer": (("slow", {"seconds": 0.01, "progress_every": 0.002}), ("slow", "seconds")),
    "reference": (("burst", {"n": 5}), ("sleep", "seconds")),
}


def _pick(rng: random.Random) -> str:
    roll = rng.random()
    for kind, share in MIXED:
        if roll < share:
            return kind
        roll -= share
    return MIXED[-1][0]


async def _mixed_call(client: Client, server: str, kind: str, rng: random.Random, number: int) -> str:
    """One call of the mixed mix; returns how it ended (``ok``, ``cancelled``, ``IdleTimeout``, ...)."""
    (progress_tool, progress_arguments), (sleep_tool, seconds) = _TOOLS[server]
    try:
        if kind == "echo":
            await client.call_tool("echo", {"text": f"call {number}"})
        elif kind == "progress":
            await client.call_tool(progress_tool, progress_arguments, timeout=TimeoutPolicy(idle=5, maximum=30))
        elif kind == "cancelled":
            with anyio.move_on_after(rng.uniform(0, 0.01)) as scope:
                await client.call_tool(sleep_tool, {seconds: 0.01})
            return "cancelled" if scope.cancelled_caught else "ok"
        elif kind == "idle_timeout":
            idle = TimeoutPolicy(idle=rng.uniform(0.002, 0.02), maximum=30)
            await client.call_tool(sleep_tool, {seconds: 0.25}, timeout=idle)
        else:
            maximum = TimeoutPolicy(idle=None, maximum=rng.uniform(0.002, 0.02))
            await client.call_tool(sleep_tool, {seconds: 0.25}, timeout=maximum)
    except MCPClientError as exc:
        return type(exc).__name__
    return "ok"


async def _soak(calls: int, every: int, workers: int, server: str, mix: str, warmup: int, top: int) -> dict[str, Any]:
    samples: list[dict[str, float]] = []
    outcomes: Counter[str] = Counter()
    transport = stdio(sys.executable, SERVERS[server])
    done = 0
    next_sample = every
    warm: list[tracemalloc.Snapshot] = []
    # A generous probe: on a loaded machine the server may take longer than the default 5 s to start answering.
    policy = TimeoutPolicy(idle=None, maximum=30, connect=30)
    async with Client(transport, timeout=policy, probe_timeout=30) as client:
        busy = 0  # callers in the middle of a call
        paused: anyio.Event | None = None  # set while a sample is taken: callers wait for it before the next call
        quiet: anyio.Event | None = None  # set by the last caller to finish its call while a sample waits
        running = workers
        finished = anyio.Event()

        async def sample() -> None:
            """Measure with no call in flight (and every cancel written), so that a sample does not count the
            state of the calls that happen to be running at that moment."""
            nonlocal paused, quiet
            resume = paused = anyio.Event()
            if busy:
                quiet = anyio.Event()
                await quiet.wait()
                quiet = None
            await client.session.drain_cancels(5)
            now = snapshot()
            samples.append({"calls": done, "rss_kib": now.rss_bytes / 1024, "traced_kib": now.traced_bytes / 1024})
            if top and not warm and done >= warmup and tracemalloc.is_tracing():
                warm.append(tracemalloc.take_snapshot())
            paused = None
            resume.set()

        async def worker(seed: int) -> None:
            nonlocal done, next_sample, busy
            rng = random.Random(seed)
            while True:
                while paused is not None:
                    await paused.wait()
                if done >= calls:
                    break
                done += 1
                busy += 1
                try:
                    if mix == "mixed":
                        kind = _pick(rng)
                        outcomes[f"{kind}:{await _mixed_call(client, server, kind, rng, done)}"] += 1
                    elif rng.random() < 0.1:
                        with anyio.move_on_after(rng.uniform(0, 0.002)):
                            await client.call_tool("echo", {"text": "cancelled"})
                    else:
                        await client.call_tool("echo", {"text": f"call {done}"})
                finally:
                    busy -= 1
                    if not busy and quiet is not None:
                        quiet.set()
                if done >= next_sample and paused is None:
                    next_sample += every
                    await sample()
            nonlocal running
            running -= 1
            if not running:  # the last sample is taken with every caller still alive, as the others were
                finished.set()
            await finished.wait()

        async with anyio.create_task_group() as tg:
            for seed in range(workers):
                tg.start_soon(worker, seed)
        await client.session.drain_cancels(5)
        in_flight = client.session.in_flight
        grown = _grown(warm[0], top) if warm else []
    gc.collect()
    before_trim = snapshot().rss_bytes / 1024
    trimmed = _malloc_trim()
    after_trim = snapshot().rss_bytes / 1024
    return {
        "calls": done,
        "mix": mix,
        "workers": workers,
        "outcomes": dict(sorted(outcomes.items())),
        "samples": samples,
        "in_flight_after": in_flight,
        "grown_since_warmup": grown,
        "rss_kib_after_close": before_trim,
        "rss_kib_after_malloc_trim": after_trim if trimmed else None,
    }


def _grown(warm: tracemalloc.Snapshot, top: int) -> list[str]:
    """The ``top`` source lines whose traced memory grew most since ``warm`` (the client still open)."""
    gc.collect()
    ignore = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    ]
    now = tracemalloc.take_snapshot().filter_traces(ignore)
    diff = now.compare_to(warm.filter_traces(ignore), "traceback")
    lines: list[str] = []
    for stat in diff[:top]:
        where = " <- ".join(f"{frame.filename.rsplit('/', 2)[-1]}:{frame.lineno}" for frame in stat.traceback)
        lines.append(f"{stat.size_diff / 1024:+.1f} KiB, {stat.count_diff:+d} blocks: {where}")
    return lines


def _windows(samples: list[dict[str, float]], size: int, every: int) -> list[dict[str, float]]:
    """RSS and traced growth per 1,000 calls in consecutive windows of about ``size`` calls."""
    rows: list[dict[str, float]] = []
    marks = samples[:: max(1, size // every)]
    for first, last in itertools.pairwise(marks):
        span = (last["calls"] - first["calls"]) / 1000
        row = {
            "from_calls": first["calls"],
            "to_calls": last["calls"],
            "rss_kib_per_1000": (last["rss_kib"] - first["rss_kib"]) / span,
        }
        if first["traced_kib"] >= 0:
            row["traced_kib_per_1000"] = (last["traced_kib"] - first["traced_kib"]) / span
        rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the soak and print the growth by window (JSON with ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stress.rss_soak", description=__doc__)
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--every", type=int, default=5_000, help="sample RSS every this many calls")
    parser.add_argument("--window", type=int, default=25_000, help="report growth per window of this many calls")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--trace-memory", action="store_true")
    parser.add_argument("--server", choices=sorted(SERVERS), default="peer", help="the stdio server to call")
    parser.add_argument("--mix", choices=MIXES, default="echo", help="echoes, or the mixed load (see MIXED)")
    parser.add_argument("--warmup", type=int, default=5_000, help="calls before the --top reference snapshot")
    parser.add_argument("--top", type=int, default=0, help="with --trace-memory: the N sites grown most")
    parser.add_argument(
        "--recent-limit",
        type=int,
        help="shrink the session's tables of recently ended requests (4,096 entries) so that a short run is past"
        " their filling after its warm-up",
    )
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    options = parser.parse_args(argv)
    if options.recent_limit is not None:
        session_module._RECENT_LIMIT = options.recent_limit  # a private bound, patched for this measurement only
    if options.trace_memory:
        tracemalloc.start(10 if options.top else 1)
    soak = (options.calls, options.every, options.workers, options.server, options.mix, options.warmup, options.top)
    result = anyio.run(_soak, *soak, backend=options.backend)
    result["windows"] = _windows(result["samples"], options.window, options.every)
    if options.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"{result['calls']} calls ({options.mix}, {options.workers} callers) to {options.server} on"
        f" {options.backend}; in flight after: {result['in_flight_after']}"
    )
    if result["outcomes"]:
        print("  " + ", ".join(f"{kind}={n}" for kind, n in result["outcomes"].items()))
    first, last = result["samples"][0], result["samples"][-1]
    print(f"RSS {first['rss_kib']:.0f} KiB at {first['calls']:.0f} calls, {last['rss_kib']:.0f} KiB at the end")
    for row in result["windows"]:
        traced = f", traced {row['traced_kib_per_1000']:+.1f}" if "traced_kib_per_1000" in row else ""
        span = f"{row['from_calls']:>7.0f}-{row['to_calls']:<7.0f}"
        print(f"  calls {span} RSS {row['rss_kib_per_1000']:+7.1f}{traced} KiB/1000")
    for line in result["grown_since_warmup"]:
        print(f"  grown since the warm-up: {line}")
    trimmed = result["rss_kib_after_malloc_trim"]
    if trimmed is not None:
        print(f"after close {result['rss_kib_after_close']:.0f} KiB, after malloc_trim(0) {trimmed:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
