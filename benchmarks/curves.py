"""How mcp_client's costs grow: the measured curves of the scale section of ``docs/benchmarks.md``.

Usage::

    python -m benchmarks.curves [--quick]

Three curves, each point in a fresh worker process (the same workers ``python -m benchmarks`` runs):

* **calls in flight**: client CPU per call (rounds of N concurrent ``hold`` calls that the server answers
  together, each with its own idle and maximum timers) and memory per call in flight (N slow ``sleep`` calls out,
  tracemalloc), for N from 1 to 10,000;
* **servers per process**: a ``ClientGroup`` of N stdio servers (:mod:`benchmarks.tiny_server`, which waits
  0.5 s before answering): its start time against the slowest of N single starts, for N from 1 to 20;
* **progress rate**: client CPU per progress notification for bursts of N notifications sent back to back by
  the server, for N from 100 to 20,000 (the rate is the server's fastest; the figure is per notification).

It prints one Markdown table per curve. Numbers move with the machine's load; the shape is the point.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

from benchmarks.plan import Job
from benchmarks.runner import REPO_ROOT, run_worker

__all__ = ["main"]


def _in_flight(points: list[int]) -> list[tuple[int, float, float]]:
    rows = []
    for n in points:
        rounds = max(1, min(50, 2000 // n))
        scale = Job("scale", "scale", {"in_flight": n, "rounds": rounds, "max_seconds": 300.0}, ("ours",))
        memory = Job("memory", "memory", {"in_flight": n, "hold": 600.0, "settle": 20.0}, ("ours",))
        cpu = run_worker("ours", "stdio", [scale], None, 900.0)["scale"]["cpu_per_call_us"]
        held = run_worker("ours", "stdio", [memory], None, 900.0)["memory"]["memory_per_call_bytes"]
        print(f"  in flight {n}: {cpu:.0f} us, {held:.0f} B", file=sys.stderr, flush=True)
        rows.append((n, cpu, held))
    return rows


def _servers(points: list[int]) -> list[tuple[int, float, float]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    rows = []
    for n in points:
        command = [sys.executable, "-m", "benchmarks.process", "group", "--servers", str(n), "--delay", "0.5"]
        done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600, check=True)
        values: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"  servers {n}: {values}", file=sys.stderr, flush=True)
        rows.append((n, values["slowest_single_ms"], values["group_ms"]))
    return rows


def _progress(points: list[int]) -> list[tuple[int, float, float]]:
    rows = []
    for n in points:
        job = Job("progress", "progress", {"notifications": n, "repeats": 1, "warmup": 5}, ("ours",))
        values = run_worker("ours", "stdio", [job], None, 900.0)["progress"]
        print(f"  progress {n}: {values}", file=sys.stderr, flush=True)
        rows.append((n, values["cpu_per_progress_us"], n / (values["burst_wall_ms"] / 1e3)))
    return rows


def main(argv: list[str] | None = None) -> None:
    """Measure the three curves and print them as Markdown tables."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.curves", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two small points per curve (keeps the code working)")
    args = parser.parse_args(argv)
    if args.quick:
        flight, servers, progress = [1, 10], [1, 2], [50, 100]
    else:
        flight, servers, progress = [1, 10, 100, 1000, 10_000], [1, 2, 5, 10, 20], [100, 1000, 5000, 10_000, 20_000]
    print("| calls in flight | client CPU per call | memory per call in flight |\n|---:|---:|---:|")
    for n, cpu, held in _in_flight(flight):
        print(f"| {n:,} | {cpu:,.0f} us | {held:,.0f} B |")
    print("\n| stdio servers | slowest single start | ClientGroup start | group / slowest |\n|---:|---:|---:|---:|")
    for n, single, group in _servers(servers):
        print(f"| {n} | {single:,.0f} ms | {group:,.0f} ms | {group / single:.2f}x |")
    print("\n| notifications in the burst | client CPU per notification | rate the server sent them at |")
    print("|---:|---:|---:|")
    for n, per, rate in _progress(progress):
        print(f"| {n:,} | {per:.1f} us | {rate:,.0f} /s |")


if __name__ == "__main__":
    main()
