"""One benchmark process: connect one client, run the jobs it was given, print their results as JSON.

Usage::

    python -m benchmarks.worker <ours|reference|raw> <stdio|http> '<jobs>' [--url URL] [--server-arg=ARG ...]

``<jobs>`` is a JSON list of ``[name, kind, params]``: ``kind`` names a function of :mod:`benchmarks.measure`
and ``params`` are its keyword arguments. The worker prints one line, ``{"name": {field: number, ...}, ...}``,
on stdout. The runner starts a fresh worker per measurement so that no figure is polluted by another client or
by an earlier measurement (the quick mode batches all jobs of a client into one worker to save start-up time).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, cast

import anyio

from benchmarks.clients import CLIENTS, ClientName, TransportName, open_driver
from benchmarks.measure import KINDS, Measurement, Runner
from benchmarks.tasks import tasks

ALL_KINDS: dict[str, Runner] = {**KINDS, "tasks": tasks}
"""Every measurement kind by name: those of :mod:`benchmarks.measure` and the Tasks one."""

Job = tuple[str, str, dict[str, Any]]


async def run_jobs(
    client: ClientName,
    transport: TransportName,
    jobs: list[Job],
    url: str | None,
    server_args: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Connect once, run ``jobs`` in order, return their results by name."""
    results: dict[str, Measurement] = {}
    watch_cancels = any(kind == "timeout" for _, kind, _ in jobs)
    async with open_driver(client, transport, url, watch_cancels=watch_cancels, server_args=server_args) as driver:
        for name, kind, params in jobs:
            results[name] = await ALL_KINDS[kind](driver, **params)
    return results


def parse_jobs(text: str) -> list[Job]:
    """Read and check the ``<jobs>`` argument."""
    raw = json.loads(text)
    if not isinstance(raw, list):
        raise SystemExit("jobs must be a JSON list of [name, kind, params]")
    jobs: list[Job] = []
    for item in raw:
        name, kind, params = item
        if kind not in ALL_KINDS:
            raise SystemExit(f"unknown measurement kind {kind!r}; known: {sorted(ALL_KINDS)}")
        jobs.append((str(name), str(kind), dict(params)))
    return jobs


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.worker", description=__doc__.splitlines()[0])
    parser.add_argument("client", choices=CLIENTS)
    parser.add_argument("transport", choices=("stdio", "http"))
    parser.add_argument("jobs", help="JSON list of [name, kind, params]")
    parser.add_argument("--url", help="the server's Streamable HTTP endpoint (with http)")
    parser.add_argument(
        "--server-arg", action="append", default=[], help="an argument for the stdio server it spawns (repeatable)"
    )
    args = parser.parse_args(argv)
    jobs = parse_jobs(args.jobs)
    client = cast(ClientName, args.client)
    transport = cast(TransportName, args.transport)
    results = anyio.run(run_jobs, client, transport, jobs, args.url, tuple(args.server_arg))
    sys.stdout.write(json.dumps(results) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
