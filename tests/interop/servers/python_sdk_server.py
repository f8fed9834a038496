"""Interop peer: a small MCP server built with the official Python SDK (``mcp==2.3.0``).

Usage::

    python python_sdk_server.py                                  # stdio (default)
    python python_sdk_server.py --http --port 8765 [--json-response]   # Streamable HTTP at /mcp
    python python_sdk_server.py --sse --port 8765                       # HTTP+SSE (2024-11-05) at /sse

Tools: ``echo``, ``slow_progress`` (progress every ``interval`` s), ``silent`` (no progress) and
``greet_asking`` (elicits a name, then answers "<greeting> <name>").
``slow_progress`` and ``silent`` append ``"<tag> completed"`` / ``"<tag> cancelled"`` / ``"<tag> failed"``
to the file named by ``MCP_TEST_EVENTS_FILE`` (when set), so tests can see a cancellation land.
"""

import argparse
import math
import os
from collections.abc import Awaitable, Callable
from typing import Annotated

import anyio
import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, Resolve
from pydantic import BaseModel

EVENTS_ENV = "MCP_TEST_EVENTS_FILE"

mcp: MCPServer = MCPServer("mcp-client-interop-python-sdk", version="1.0.0")


def _record(line: str) -> None:
    """Append one line to the events file, if the test asked for one."""
    path = os.environ.get(EVENTS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as events:
            events.write(line + "\n")


async def _recorded(tag: str, work: Callable[[], Awaitable[None]]) -> str:
    """Run ``work`` and record how it ended: completed, cancelled or failed."""
    outcome = "failed"
    try:
        await work()
        outcome = "completed"
    except anyio.get_cancelled_exc_class():
        outcome = "cancelled"
        raise
    finally:
        _record(f"{tag} {outcome}")
    return "done"


@mcp.tool()
async def echo(text: str) -> str:
    """Return ``text`` unchanged."""
    return text


@mcp.tool()
async def slow_progress(seconds: float, interval: float, ctx: Context, tag: str = "slow_progress") -> str:
    """Report progress every ``interval`` seconds until ``seconds`` have passed, then return "done"."""

    async def work() -> None:
        steps = max(1, math.ceil(seconds / interval))
        for step in range(1, steps + 1):
            await anyio.sleep(min(interval, seconds - (step - 1) * interval))
            done = min(round(step * interval, 6), seconds)
            await ctx.report_progress(done, seconds, f"{done:g}/{seconds:g}s")

    return await _recorded(tag, work)


@mcp.tool()
async def silent(seconds: float, tag: str = "silent") -> str:
    """Sleep ``seconds`` without any progress, then return "done"."""
    return await _recorded(tag, lambda: anyio.sleep(seconds))


class NameForm(BaseModel):
    """What ``greet_asking`` asks the user for."""

    name: str = "anon"


async def _ask_name() -> Elicit[NameForm]:
    return Elicit("Your name?", NameForm)


@mcp.tool()
async def greet_asking(name: Annotated[NameForm, Resolve(_ask_name)], greeting: str = "hello") -> str:
    """Ask the client for a name (elicitation: an ``input_required`` round at 2026-07-28, an
    ``elicitation/create`` request before), then greet it."""
    return f"{greeting} {name.name}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--sse", action="store_true", help="serve HTTP+SSE (GET /sse, POST /messages/) instead")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port on 127.0.0.1 (with --http or --sse)")
    parser.add_argument("--json-response", action="store_true", help="answer POSTs with JSON, not SSE")
    args = parser.parse_args()
    if args.sse:
        uvicorn.run(mcp.sse_app(), host="127.0.0.1", port=args.port, log_level="warning")
        return
    if not args.http:
        mcp.run()
        return
    app = mcp.streamable_http_app(json_response=args.json_response)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
