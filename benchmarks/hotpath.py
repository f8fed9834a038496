"""Where a client spends its CPU on ``echo`` calls: a cProfile of the calling loop, on CPU time.

Usage::

    python -m benchmarks.hotpath [ours|reference|raw] [--transport stdio|http] [--calls N] [--in-flight N] [--top K]

Calls are sequential by default; ``--in-flight N`` keeps ``N`` calls in flight at once (a task group and a
semaphore, as the ``throughput`` measurement does) and counts the TCP connections the client opened during the run.

The profiler's clock is ``time.process_time``, so waiting for the server does not count; only this process's
own work does (profiling overhead inflates every figure by a similar factor, so read the shares, not the
microseconds). For HTTP a server is started for the run. Not part of ``python -m benchmarks``.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import pstats
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import anyio

from benchmarks.clients import CLIENTS, ClientName, TransportName, open_driver
from benchmarks.runner import http_server


async def profile_calls(
    client: ClientName, transport: TransportName, url: str | None, calls: int, in_flight: int = 1
) -> cProfile.Profile:
    """Connect, warm up, then profile ``calls`` echo calls, ``in_flight`` at a time (1: sequential)."""
    profiler = cProfile.Profile(time.process_time)
    async with open_driver(client, transport, url) as driver:
        for _ in range(50):
            await driver.call("echo", {"text": "warm-up"})
        if in_flight <= 1:
            profiler.enable()
            for index in range(calls):
                await driver.call("echo", {"text": f"hello {index}"})
            profiler.disable()
            return profiler
        limit = anyio.Semaphore(in_flight)

        async def one(index: int) -> None:
            async with limit:
                await driver.call("echo", {"text": f"hello {index}"})

        profiler.enable()
        async with anyio.create_task_group() as task_group:
            for index in range(calls):
                task_group.start_soon(one, index)
        profiler.disable()
    return profiler


class ConnectionCounter:
    """Counts TCP connections opened by httpcore and httpcore2 (the pools under httpx and httpx2) and by the network
    backend of mcp_client's engine over httpcore2, by wrapping their ``connect_tcp``."""

    def __init__(self) -> None:
        self.opened = 0
        self._undo: list[tuple[Any, Callable[..., Any]]] = []

    def __enter__(self) -> ConnectionCounter:
        for module, name in (
            ("httpcore._backends.anyio", "AnyIOBackend"),
            ("httpcore2._backends.anyio", "AnyIOBackend"),
            ("mcp_client.transports.http._network", "NetworkBackend"),
        ):
            try:
                backend: Any = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError):
                continue
            original = backend.connect_tcp
            self._undo.append((backend, original))

            async def connect_tcp(self_: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                self.opened += 1
                return await _original(self_, *args, **kwargs)

            backend.connect_tcp = connect_tcp
        return self

    def __exit__(self, *exc: object) -> None:
        for backend, original in self._undo:
            backend.connect_tcp = original


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: print the top functions by own time and by cumulative time."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hotpath", description=__doc__.splitlines()[0])
    parser.add_argument("client", choices=CLIENTS, nargs="?", default="ours")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=1, help="calls in flight at once (default 1: sequential)")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    client = cast(ClientName, args.client)
    transport = cast(TransportName, args.transport)
    in_flight = max(1, args.in_flight)
    with ConnectionCounter() as counter:
        if transport == "http":
            with http_server() as url:
                profiler = anyio.run(profile_calls, client, transport, url, args.calls, in_flight)
        else:
            profiler = anyio.run(profile_calls, client, transport, None, args.calls, in_flight)
    mode = "sequential" if in_flight == 1 else f"{in_flight} in flight"
    if transport == "http":
        print(f"== {client} {transport}: {counter.opened} TCP connections opened (warm-up and calls) ==")
    print(f"== {client} {transport}: own CPU time by package ==")
    for package, seconds, share in by_package(profiler)[: args.top]:
        print(f"{share:6.1%}  {seconds * 1e6 / args.calls:8.1f} us/call  {package}")
    for order, only in (("tottime", ""), ("tottime", "mcp_client/"), ("cumulative", "")):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats(order).print_stats(*([only] if only else []), args.top)
        where = f" in {only}" if only else ""
        print(f"== {client} {transport}: {args.calls} echo calls {mode}, top {args.top}{where} by {order} ==")
        print(_shorten(out.getvalue().split("ncalls", 1)[-1].join(["ncalls", ""]).rstrip()))


def by_package(profiler: cProfile.Profile) -> list[tuple[str, float, float]]:
    """Own (``tottime``) CPU seconds summed by top-level package or stdlib module, largest first, with shares."""
    stats = pstats.Stats(profiler)
    totals: dict[str, float] = {}
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, object]] = stats.stats  # type: ignore[attr-defined]
    for (filename, _line, function), (_cc, _nc, tottime, _ct, _callers) in raw.items():
        name = _shorten(filename)
        if name == "~":  # a C function: "{method 'poll' of 'select.epoll' objects}", "{built-in method posix.write}"
            owner = function.split(" of '", 1)[1].split("'", 1)[0] if " of '" in function else function.split()[-1]
            key = "C: " + owner.strip("{}<>").split(".")[0]
        else:
            key = name.split("/")[0].removesuffix(".py")
        totals[key] = totals.get(key, 0.0) + tottime
    everything = sum(totals.values()) or 1.0
    return [(key, value, value / everything) for key, value in sorted(totals.items(), key=lambda item: -item[1])]


def _shorten(text: str) -> str:
    """Paths relative to site-packages, the standard library and the repository."""
    for root in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"], str(Path(__file__).parents[1])):
        text = text.replace(root + "/", "")
    return text


if __name__ == "__main__":
    main()
