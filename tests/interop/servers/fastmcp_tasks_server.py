"""Interop peer: a FastMCP server whose tools run as 2026-07-28 tasks (``fastmcp-tasks==4.1.4``, SEP-2663).

It runs in a virtualenv of its own (``fastmcp-tasks`` pins its own ``fastmcp``/``mcp``), built by the interop
fixtures under ``.venv-peers/``. Usage::

    python fastmcp_tasks_server.py                       # stdio (default)
    python fastmcp_tasks_server.py --http --port 8766    # Streamable HTTP on 127.0.0.1, at /mcp

Tools (all ``mode="required"``: always a task; a client without the extension is refused with -32021):

* ``slow_add(a, b, seconds, tag)``: sleeps ``seconds``, returns ``a + b``.
* ``ask_colour(tag)``: asks for a colour with an ``elicitation/create`` input request (answered through
  ``tasks/update``), then returns ``"colour: <answer>"``.

Both append ``"<tag> completed"`` / ``"<tag> cancelled"`` to the file named by ``MCP_TEST_EVENTS_FILE``.

(It is not type-checked with the project: its imports exist only in its own virtualenv.)
"""

# mypy: ignore-errors

import argparse
import asyncio
import os
from datetime import timedelta
from typing import Any

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

EVENTS_ENV = "MCP_TEST_EVENTS_FILE"

mcp = FastMCP("mcp-client-interop-fastmcp-tasks")
mcp.add_extension(TasksExtension())

_FAST_POLLS = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100))
"""Always a task, polled every 100 ms (the default is 5 s), so the tests take fractions of a second."""


def _record(line: str) -> None:
    path = os.environ.get(EVENTS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as events:
            events.write(line + "\n")


@mcp.tool(task=_FAST_POLLS)
async def slow_add(a: int, b: int, seconds: float = 1.0, tag: str = "slow_add") -> int:
    """Sleep ``seconds``, then return ``a + b``."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _record(f"{tag} cancelled")
        raise
    _record(f"{tag} completed")
    return a + b


@mcp.tool(task=_FAST_POLLS)
async def ask_colour(ctx: Context, tag: str = "ask_colour") -> Any:
    """Ask for a colour (an input request answered with ``tasks/update``), then report it."""
    responses = ctx.input_responses or {}
    answer = responses.get("colour")
    if answer is None:
        schema = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
        request = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message="Which colour?", requested_schema=schema)
        )
        return mcp_types.InputRequiredResult(input_requests={"colour": request})
    content = getattr(answer, "content", None) or {}
    _record(f"{tag} completed")
    return f"colour: {content.get('colour')}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=8766)
    arguments = parser.parse_args()
    if arguments.http:
        mcp.run(transport="streamable-http", host="127.0.0.1", port=arguments.port, path="/mcp", show_banner=False)
    else:
        mcp.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
