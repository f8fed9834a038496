"""Run the stress scenarios on each backend and transport, print the counts, and exit 1 on any failure.

Each backend runs in a process of its own (``--backend`` runs one, for that), so one backend's leftovers cannot
be counted against the other, and ``tracemalloc`` (``--trace-memory``) only slows the run that asked for it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from benchmarks.stress.rooms import cache_churn, subscriptions_cut, supervised_listen
from benchmarks.stress.scenarios import Tally, TransportName, cancel_race, hostile, soak
from benchmarks.stress.task_scenarios import supervised_task_kills, task_storm

__all__ = ["main"]

TRANSPORTS: tuple[TransportName, ...] = ("memory", "stdio", "http")
BACKENDS = ("asyncio", "trio")


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stress", description=__doc__)
    parser.add_argument("--short", action="store_true", help="the CI form: seconds, not minutes")
    parser.add_argument("--soak-seconds", type=float, default=None, help="seconds of soak per transport")
    parser.add_argument("--hostile-rounds", type=int, default=None, help="rounds of every hostile kind")
    parser.add_argument("--race-rounds", type=int, default=None, help="raced calls per transport")
    parser.add_argument("--task-rounds", type=int, default=None, help="rounds of misbehaving task servers")
    parser.add_argument("--kill-rounds", type=int, default=None, help="kills of a supervised server mid-task")
    parser.add_argument("--backend", choices=BACKENDS, help="run one backend in this process")
    parser.add_argument("--transport", choices=TRANSPORTS, action="append", help="only these (repeatable)")
    parser.add_argument("--soak-transport", choices=TRANSPORTS, action="append", help="soak only these")
    parser.add_argument(
        "--no-rooms", dest="rooms", action="store_false", help="skip subscriptions, the cache and the supervisor"
    )
    parser.add_argument("--rooms-only", action="store_true", help="only subscriptions, the cache and the supervisor")
    parser.add_argument("--trace-memory", action="store_true", help="run tracemalloc (slower) for the soak figures")
    parser.add_argument("--json", type=Path, help="write the report here as JSON")
    return parser.parse_args(argv)


async def _one_backend(options: argparse.Namespace) -> list[Tally]:
    short = options.short
    soak_seconds = options.soak_seconds if options.soak_seconds is not None else (3.0 if short else 120.0)
    hostile_rounds = options.hostile_rounds if options.hostile_rounds is not None else (1 if short else 20)
    race_rounds = options.race_rounds if options.race_rounds is not None else (200 if short else 5000)
    transports: list[TransportName] = options.transport or list(TRANSPORTS)
    soaked: list[TransportName] = options.soak_transport or (["stdio"] if short else transports)
    tallies: list[Tally] = []
    if not options.rooms_only:
        tallies += [await hostile(transport, hostile_rounds) for transport in transports]
        tallies += [await cancel_race(transport, race_rounds) for transport in transports]
        tallies += [await soak(transport, soak_seconds) for transport in transports if transport in soaked]
        task_rounds = options.task_rounds if options.task_rounds is not None else (2 if short else 40)
        kill_rounds = options.kill_rounds if options.kill_rounds is not None else (2 if short else 25)
        tallies += [await task_storm(transport, task_rounds) for transport in transports if transport != "stdio"]
        if "stdio" in transports:
            tallies.append(await supervised_task_kills(kill_rounds))
    if options.rooms:
        tallies += await _rooms(short, transports)
    return tallies


async def _rooms(short: bool, transports: list[TransportName]) -> list[Tally]:
    """The rooms beside the call path: subscriptions with cut streams, the cache under identity churn, a
    supervised server killed during a listen."""
    subscriptions, cuts = (8, 3) if short else (64, 20)
    tallies = [await subscriptions_cut(t, subscriptions, cuts) for t in transports if t in ("memory", "http")]
    tallies.append(await cache_churn(40 if short else 200))
    tallies += [await supervised_listen(era, 2 if short else 10) for era in ("modern", "legacy")]
    return tallies


def _run_backend(options: argparse.Namespace) -> dict[str, Any]:
    if options.trace_memory:
        tracemalloc.start()
    started = time.monotonic()
    tallies = anyio.run(_one_backend, options, backend=options.backend)
    return {
        "backend": options.backend,
        "seconds": round(time.monotonic() - started, 1),
        "tallies": [tally.as_dict() for tally in tallies],
    }


def _child(argv: Sequence[str], backend: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.stress", *argv, "--backend", backend, "--json", "-"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        failure = {"name": "run", "counts": {"failure:crash": 1}, "failures": [done.stderr[-4000:]], "figures": {}}
        return {"backend": backend, "seconds": 0, "tallies": [failure]}
    report: dict[str, Any] = json.loads(done.stdout.rsplit("\n@@report@@\n", 1)[-1])
    return report


def _print(reports: list[dict[str, Any]]) -> int:
    failures = 0
    for report in reports:
        print(f"== {report['backend']} ({report['seconds']} s)")
        for tally in report["tallies"]:
            counts = ", ".join(f"{k}={v}" for k, v in sorted(tally["counts"].items()))
            print(f"  {tally['name']:<22} {counts}")
            if tally["figures"]:
                figures = ", ".join(f"{k}={v:.1f}" for k, v in sorted(tally["figures"].items()))
                print(f"  {'':<22} {figures}")
            for failure in tally["failures"]:
                print(f"  {'':<22} FAILED {failure}")
            failures += sum(v for k, v in tally["counts"].items() if k.startswith("failure:"))
    print("all passed" if not failures else f"{failures} failures")
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (1 if anything failed)."""
    raw = list(sys.argv[1:] if argv is None else argv)
    options = _arguments(raw)
    if options.backend is not None:
        report = _run_backend(options)
        failed = any(k.startswith("failure:") for t in report["tallies"] for k in t["counts"])
        if options.json is not None and str(options.json) == "-":
            print("\n@@report@@\n" + json.dumps(report))
            return 1 if failed else 0
        if options.json is not None:
            options.json.write_text(json.dumps([report], indent=2))
        return _print([report])
    forwarded = [arg for arg in raw if arg != "--json" and not arg.endswith(".json")]
    reports = [_child(forwarded, backend) for backend in BACKENDS]
    if options.json is not None:
        options.json.write_text(json.dumps(reports, indent=2))
    return _print(reports)
