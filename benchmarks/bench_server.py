"""The benchmark's MCP server: the official Python SDK's ``MCPServer`` (mcp 2.3.0), on stdio or Streamable HTTP.

Usage::

    python -m benchmarks.bench_server                      # stdio (default)
    python -m benchmarks.bench_server --http --port 8765   # Streamable HTTP at http://127.0.0.1:8765/mcp

Tools:

* ``echo(text)`` returns ``text``.
* ``burst(n)`` sends ``n`` progress notifications as fast as it can (when the call has a progress token), then
  returns ``"done"``.
* ``sleep(seconds, record_to="", tag="")`` sleeps; its ``finally`` appends ``"<outcome> <time.time()>"``
  (outcome: ``completed`` or ``cancelled``) to the file ``record_to`` when given, so the benchmark can see when the
  server observed a cancellation.
* ``hold(tag, n, max_seconds)`` waits until ``n`` calls of ``tag`` are running at once (or ``max_seconds`` pass),
  then returns: a gate that puts exactly ``n`` calls in flight together.
* ``active(tag)`` returns how many ``sleep``/``hold`` calls of ``tag`` are running now.
"""

from __future__ import annotations

import argparse
import os
import time

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server: MCPServer = MCPServer("mcp-client-benchmark-server", version="1.0.0", log_level="WARNING")

_active: dict[str, int] = {}
_gates: dict[str, anyio.Event] = {}


@server.tool()
async def echo(text: str) -> str:
    """Return ``text`` unchanged."""
    return text


@server.tool()
async def burst(n: int, ctx: Context) -> str:
    """Send ``n`` progress notifications back to back, then return "done"."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n)
    return "done"


@server.tool()
async def sleep(seconds: float, record_to: str = "", tag: str = "") -> str:
    """Sleep ``seconds``; record how it ended (and when, as ``time.time()``) in ``record_to`` if given."""
    outcome = "failed"
    _active[tag] = _active.get(tag, 0) + 1
    try:
        await anyio.sleep(seconds)
        outcome = "completed"
    except anyio.get_cancelled_exc_class():
        outcome = "cancelled"
        raise
    finally:
        ended = time.time()
        _active[tag] -= 1
        if record_to:  # written synchronously: a cancelled task cannot await in its finally without a shield
            with open(record_to, "a", encoding="utf-8") as record:  # noqa: ASYNC230
                record.write(f"{outcome} {ended!r}\n")
    return "done"


@server.tool()
async def hold(tag: str, n: int, max_seconds: float = 60.0) -> str:
    """Return once ``n`` calls of ``tag`` are running at once ("released"), or after ``max_seconds`` ("expired")."""
    gate = _gates.setdefault(tag, anyio.Event())
    _active[tag] = _active.get(tag, 0) + 1
    try:
        if _active[tag] >= n:
            gate.set()
        with anyio.move_on_after(max_seconds):
            await gate.wait()
            return "released"
        return "expired"
    finally:
        _active[tag] -= 1
        if _active[tag] == 0:
            _gates.pop(tag, None)


@server.tool()
async def active(tag: str = "") -> int:
    """How many ``sleep``/``hold`` calls of ``tag`` are running now."""
    return _active.get(tag, 0)


def main() -> None:
    """Serve on stdio, or on Streamable HTTP with ``--http``."""
    parser = argparse.ArgumentParser(description="MCPServer for the mcp_client benchmarks")
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port on 127.0.0.1 (with --http)")
    parser.add_argument(
        "--one-cpu",
        action="store_true",
        help="run every thread of this process on one CPU, the last one it may use (Linux): its event loop and the "
        "worker thread that writes stdout then hand over to each other on one core",
    )
    args = parser.parse_args()
    if args.one_cpu:
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    if not args.http:
        server.run()
        return
    import uvicorn

    app = server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", backlog=16384)


if __name__ == "__main__":
    main()
