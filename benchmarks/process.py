"""Costs of a process rather than of a call: importing mcp_client, starting many stdio servers, an idle client.

Usage (the runner does this; each measurement runs in a fresh interpreter and prints one JSON line)::

    python -m benchmarks.process group --servers 20 --delay 0.5
    python -m benchmarks.process idle

* ``import``: wall time of an import statement (``import mcp_client``, or ``import mcp`` for the reference; then
  what a program writes, ``from mcp_client import Client, stdio`` against ``from mcp import Client``) in
  ``python -c`` with nothing imported before it (:func:`import_command` is the whole program); the runner
  interleaves the two and takes the median.
* ``group``: ``--servers`` stdio servers (:mod:`benchmarks.tiny_server`, which waits ``--delay`` s before it
  answers, as a server does that resolves packages first, and then costs next to nothing), started one after
  another, each by its own ``Client`` (the time from entering it to connected; the slowest is reported), then all
  of them together as one ``ClientGroup`` (the time to enter it, and this process's CPU meanwhile). The servers
  cost little, but twenty interpreters still start at once: the client's own CPU for the whole start is reported
  beside it, and so is the time the same servers take when they are spawned together with no client at all (one
  request and its answer each): what the servers' own start costs on this machine's cores. Then the same servers as
  a lazy group (``start="lazy"``, a fresh snapshot folder): the time to enter it (no server starts), and the time of
  its first call (which starts the one server it needs).
* ``idle``: bytes that tracemalloc sees for one connected, idle ``Client`` on a tiny server (another client has
  already loaded every module), after a garbage collection.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio

__all__ = ["TINY_SERVER", "import_command", "main"]

TINY_SERVER = Path(__file__).resolve().parent / "tiny_server.py"


def import_command(statement: str) -> list[str]:
    """A command that prints ``{"import_ms": ...}`` for running the import ``statement`` in a fresh interpreter."""
    if not statement.startswith(("import ", "from ")) or any(char in statement for char in ";\n\"'"):
        raise ValueError(f"not an import statement: {statement!r}")
    code = (
        "import time; started = time.perf_counter(); " + statement + "; "
        "print('{\"import_ms\": %r}' % ((time.perf_counter() - started) * 1e3))"
    )
    return [sys.executable, "-c", code]


def _tiny(delay: float) -> Any:
    from mcp_client import stdio

    return stdio(sys.executable, [str(TINY_SERVER), "--delay", str(delay)])


async def measure_group(servers: int, delay: float) -> dict[str, Any]:
    """The slowest of ``servers`` single starts, and the start of a ``ClientGroup`` of as many, in ms."""
    from mcp_client import Client, ClientGroup, TimeoutPolicy

    policy = TimeoutPolicy(idle=60, maximum=600, connect=60)
    singles: list[float] = []
    for _ in range(servers):
        started = time.perf_counter()
        async with Client(_tiny(delay), timeout=policy):
            singles.append(time.perf_counter() - started)
    bare = await _start_bare(servers, delay)
    group = ClientGroup({f"s{index}": _tiny(delay) for index in range(servers)}, timeout=policy)
    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    async with group:
        took = time.perf_counter() - started
        cpu = _cpu_seconds() - cpu_before
        failed = len(group.failures)
    if failed:
        raise RuntimeError(f"{failed} of {servers} servers of the group did not start")
    lazy_enter, lazy_first_call = await _lazy_group(servers, delay, policy)
    return {
        "slowest_single_ms": max(singles) * 1e3,
        "group_ms": took * 1e3,
        "group_client_cpu_ms": cpu * 1e3,
        "bare_together_ms": bare * 1e3,
        "lazy_group_ms": lazy_enter * 1e3,
        "lazy_first_call_ms": lazy_first_call * 1e3,
        "servers": servers,
        "delay_s": delay,
    }


async def _lazy_group(servers: int, delay: float, policy: Any) -> tuple[float, float]:
    """Seconds to enter a lazy group of ``servers`` tiny servers, and seconds of its first call (one start)."""
    import tempfile

    from mcp_client import ClientGroup

    with tempfile.TemporaryDirectory() as folder:
        group = ClientGroup(
            {f"s{index}": _tiny(delay) for index in range(servers)}, start="lazy", snapshot=folder, timeout=policy
        )
        started = time.perf_counter()
        async with group:
            entered = time.perf_counter() - started
            started = time.perf_counter()
            await group.call_tool("s0/echo", {"text": "hi"})
            first_call = time.perf_counter() - started
    return entered, first_call


async def _start_bare(servers: int, delay: float) -> float:
    """Seconds until ``servers`` tiny servers, spawned together with no client, have all answered one request."""
    request = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}\n'
    command = [sys.executable, str(TINY_SERVER), "--delay", str(delay)]
    started = time.perf_counter()
    slowest = 0.0

    async def one() -> None:
        nonlocal slowest
        async with await anyio.open_process(command) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            await process.stdin.send(request)
            answer = b""
            while not answer.endswith(b"\n"):
                answer += await process.stdout.receive()
            slowest = max(slowest, time.perf_counter() - started)
            await process.stdin.aclose()

    async with anyio.create_task_group() as group:
        for _ in range(servers):
            group.start_soon(one)
    return slowest


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure_idle() -> dict[str, Any]:
    """Traced bytes of one connected, idle client (after a first one loaded every module)."""
    from mcp_client import Client

    async with Client(_tiny(0.0)) as warm:
        await warm.list_tools()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        async with Client(_tiny(0.0)) as client:
            await client.list_tools()
            await anyio.sleep(0.2)
            gc.collect()
            during = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return {"idle_bytes": during - before}


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: run one measurement and print its JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.process", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    group = sub.add_parser("group")
    group.add_argument("--servers", type=int, default=20)
    group.add_argument("--delay", type=float, default=0.5)
    sub.add_parser("idle")
    args = parser.parse_args(argv)
    result = anyio.run(measure_group, args.servers, args.delay) if args.kind == "group" else anyio.run(measure_idle)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
