"""Is the client's RSS growth over a long stdio soak a leak, or the allocator keeping what it once used?

``python -m benchmarks.stress.rss_soak --calls 200000 [--backend asyncio] [--server peer|reference]
[--trace-memory]`` makes that many calls over stdio to the scripted peer or mcp 2.3.0's server (eight at a
time: echoes, and one call in ten cancelled at random), and samples the resident set size every ``--every``
calls. A leak grows at a steady rate for as long as calls run; memory the allocator keeps (pymalloc arenas and
glibc's heap, fragmented by bursts of short-lived objects) grows less and less and then stays. At the end
``malloc_trim(0)`` (glibc) returns the free heap to the system: what RSS drops by then was never live.
``--trace-memory`` also runs ``tracemalloc`` (which itself costs memory and time) to show what Python objects
hold.
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
from collections.abc import Sequence
from typing import Any

import anyio

from benchmarks.stress.accounting import snapshot
from mcp_client import Client, TimeoutPolicy, stdio

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


async def _soak(calls: int, every: int, workers: int, server: str) -> dict[str, Any]:
    samples: list[dict[str, float]] = []
    transport = stdio(sys.executable, SERVERS[server])
    done = 0
    next_sample = every
    async with Client(transport, timeout=TimeoutPolicy(idle=None, maximum=30, connect=30)) as client:

        async def worker(seed: int) -> None:
            nonlocal done, next_sample
            rng = random.Random(seed)
            while done < calls:
                done += 1
                if rng.random() < 0.1:
                    with anyio.move_on_after(rng.uniform(0, 0.002)):
                        await client.call_tool("echo", {"text": "cancelled"})
                else:
                    await client.call_tool("echo", {"text": f"call {done}"})
                if done >= next_sample:
                    next_sample += every
                    now = snapshot()
                    sample = {"calls": done, "rss_kib": now.rss_bytes / 1024, "traced_kib": now.traced_bytes / 1024}
                    samples.append(sample)

        async with anyio.create_task_group() as tg:
            for seed in range(workers):
                tg.start_soon(worker, seed)
        in_flight = client.session.in_flight
    gc.collect()
    before_trim = snapshot().rss_bytes / 1024
    trimmed = _malloc_trim()
    after_trim = snapshot().rss_bytes / 1024
    return {
        "calls": done,
        "samples": samples,
        "in_flight_after": in_flight,
        "rss_kib_after_close": before_trim,
        "rss_kib_after_malloc_trim": after_trim if trimmed else None,
    }


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
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    options = parser.parse_args(argv)
    if options.trace_memory:
        tracemalloc.start()
    soak = (options.calls, options.every, options.workers, options.server)
    result = anyio.run(_soak, *soak, backend=options.backend)
    result["windows"] = _windows(result["samples"], options.window, options.every)
    if options.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['calls']} calls to {options.server} on {options.backend}; in flight: {result['in_flight_after']}")
    first, last = result["samples"][0], result["samples"][-1]
    print(f"RSS {first['rss_kib']:.0f} KiB at {first['calls']:.0f} calls, {last['rss_kib']:.0f} KiB at the end")
    for row in result["windows"]:
        traced = f", traced {row['traced_kib_per_1000']:+.1f}" if "traced_kib_per_1000" in row else ""
        span = f"{row['from_calls']:>7.0f}-{row['to_calls']:<7.0f}"
        print(f"  calls {span} RSS {row['rss_kib_per_1000']:+7.1f}{traced} KiB/1000")
    trimmed = result["rss_kib_after_malloc_trim"]
    if trimmed is not None:
        print(f"after close {result['rss_kib_after_close']:.0f} KiB, after malloc_trim(0) {trimmed:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
