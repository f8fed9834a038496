"""A plain MCP server (the official Python SDK, ``mcp==2.3.0``) over Streamable HTTP for the Temporal tests.

Usage: ``python plain_server.py --port N`` (serves ``http://127.0.0.1:N/mcp``). Tools:

* ``count(seconds, tag)``: not idempotent (a side effect per run); sleeps ``seconds``, then counts one run.
* ``count_idempotent(seconds, tag)``: the same, annotated ``idempotentHint``.
* ``slow_progress(seconds, interval, tag)``: reports progress every ``interval`` s for ``seconds``.

Each appends ``"<tag> started"`` when it starts and ``"<tag> completed"`` or ``"<tag> cancelled"`` when it ends to
the file named by ``MCP_TEST_EVENTS_FILE``, so a test counts runs and sees cancellations land.
"""

import argparse
import math
import os
from collections.abc import Awaitable, Callable

import anyio
import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

mcp: MCPServer = MCPServer("mcp-client-temporal-plain", version="1.0.0")


def _record(line: str) -> None:
    path = os.environ.get("MCP_TEST_EVENTS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as events:
            events.write(line + "\n")


async def _run(tag: str, work: Callable[[], Awaitable[None]]) -> str:
    _record(f"{tag} started")
    try:
        await work()
    except anyio.get_cancelled_exc_class():
        _record(f"{tag} cancelled")
        raise
    _record(f"{tag} completed")
    return f"{tag} done"


@mcp.tool(annotations=ToolAnnotations(idempotent_hint=False, destructive_hint=True))
async def count(seconds: float, tag: str) -> str:
    """Count one run after ``seconds`` (not safe to repeat)."""
    return await _run(tag, lambda: anyio.sleep(seconds))


@mcp.tool(annotations=ToolAnnotations(idempotent_hint=True))
async def count_idempotent(seconds: float, tag: str) -> str:
    """Count one run after ``seconds`` (safe to repeat)."""
    return await _run(tag, lambda: anyio.sleep(seconds))


@mcp.tool()
async def slow_progress(seconds: float, interval: float, tag: str, ctx: Context) -> str:
    """Report progress every ``interval`` seconds until ``seconds`` have passed."""

    async def work() -> None:
        steps = max(1, math.ceil(seconds / interval))
        for step in range(1, steps + 1):
            await anyio.sleep(interval)
            await ctx.report_progress(min(step * interval, seconds), seconds)

    return await _run(tag, work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
