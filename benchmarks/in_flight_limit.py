"""What ``max_in_flight`` costs when it is not reached: client CPU per call with and without the limit, in one run.

Usage::

    python -m benchmarks.in_flight_limit [--calls N] [--concurrency N] [--repeats N]

Three clients call ``echo`` on the benchmark server over stdio, each with ``concurrency`` calls in flight (the
throughput loop of :mod:`benchmarks.measure`): mcp_client with no limit, mcp_client with
``max_in_flight = 4 * concurrency`` (a limit that is never reached, so every call takes the fast path: a
comparison and an increment), and the reference client (mcp 2.3.0). For scale, mcp_client with
``max_in_flight = concurrency / 5`` as well, where four calls in five wait in line. The repeats are interleaved
and rotated, the figures are the median of the process's CPU per call, and what counts is the ratios of the same
run: the limit not reached over no limit (it should stay at 1.00 within noise), and each against the reference.
Not part of ``python -m benchmarks``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio

from benchmarks.clients import Driver, _CancelClock, _Ours, open_driver, server_command
from benchmarks.measure import throughput

__all__ = ["main", "measure"]


@asynccontextmanager
async def _ours_limited(max_in_flight: int | None) -> AsyncIterator[Driver]:
    """mcp_client on the benchmark server as :mod:`benchmarks.clients` connects it, with ``max_in_flight``."""
    from mcp_client import Client, TimeoutPolicy, stdio

    command = server_command()
    policy = TimeoutPolicy(idle=60, maximum=600, connect=60)
    transport = stdio(command[0], command[1:])
    async with Client(transport, timeout=policy, probe_timeout=60, max_in_flight=max_in_flight) as client:
        yield _Ours(client, TimeoutPolicy, _CancelClock())


async def measure(calls: int, concurrency: int, repeats: int) -> dict[str, float]:
    """Median client CPU microseconds per call for each client, and the ratios of the same run."""
    opens: dict[str, Callable[[], AbstractAsyncContextManager[Driver]]] = {
        "no_limit": lambda: _ours_limited(None),
        "limit_not_reached": lambda: _ours_limited(4 * concurrency),
        "limit_reached": lambda: _ours_limited(max(1, concurrency // 5)),
        "reference": lambda: open_driver("reference", "stdio"),
    }
    samples: dict[str, list[float]] = {name: [] for name in opens}
    names = list(opens)
    for repeat in range(repeats):
        # Interleaved, so a machine that slows down slows every client, and rotated, so none always goes first.
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            async with opens[name]() as driver:
                result = await throughput(driver, calls=calls, concurrency=concurrency, warmup=20)
            cpu = result["throughput_cpu_per_call_us"]
            assert cpu is not None
            samples[name].append(cpu)
    figures = {f"{name}_cpu_per_call_us": statistics.median(values) for name, values in samples.items()}
    no_limit = figures["no_limit_cpu_per_call_us"]
    reference = figures["reference_cpu_per_call_us"]
    figures["limit_not_reached_over_no_limit"] = figures["limit_not_reached_cpu_per_call_us"] / no_limit
    figures["limit_not_reached_over_reference"] = figures["limit_not_reached_cpu_per_call_us"] / reference
    figures["no_limit_over_reference"] = no_limit / reference
    figures["limit_reached_over_no_limit"] = figures["limit_reached_cpu_per_call_us"] / no_limit
    return figures


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: print the figures as JSON and the ratios."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.in_flight_limit", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    result = anyio.run(measure, args.calls, args.concurrency, args.repeats)
    print(json.dumps(result))
    print(f"limit not reached / no limit: {result['limit_not_reached_over_no_limit']:.2f}x")
    print(f"limit not reached / reference: {result['limit_not_reached_over_reference']:.2f}x")
    print(f"no limit / reference: {result['no_limit_over_reference']:.2f}x")
    print(f"limit reached (1 in 5 at once) / no limit: {result['limit_reached_over_no_limit']:.2f}x")


if __name__ == "__main__":
    main()
