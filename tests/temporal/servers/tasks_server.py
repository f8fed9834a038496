"""A FastMCP server whose tool always runs as a 2026-07-28 task (``fastmcp-tasks==4.1.4``), for the Temporal tests.

It runs in the fastmcp-tasks peer's own virtualenv (``tests/interop/servers/fastmcp-tasks-requirements.txt``).
Usage: ``python tasks_server.py --port N`` (Streamable HTTP at ``http://127.0.0.1:N/mcp``). Tool:

* ``slow_task(seconds, tag)``: a task (``mode="required"``) that sleeps ``seconds`` and returns ``"<tag> done"``;
  appends ``"<tag> started"`` and ``"<tag> completed"`` / ``"<tag> cancelled"`` to ``MCP_TEST_EVENTS_FILE``.

(It is not type-checked with the project: its imports exist only in its own virtualenv.)
"""

# mypy: ignore-errors

import argparse
import asyncio
import os
from datetime import timedelta

from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("mcp-client-temporal-tasks")
mcp.add_extension(TasksExtension())


def _record(line: str) -> None:
    path = os.environ.get("MCP_TEST_EVENTS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as events:
            events.write(line + "\n")


@mcp.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100)))
async def slow_task(seconds: float, tag: str) -> str:
    """Sleep ``seconds`` as a task, then return ``"<tag> done"``."""
    _record(f"{tag} started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _record(f"{tag} cancelled")
        raise
    _record(f"{tag} completed")
    return f"{tag} done"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    mcp.run(transport="streamable-http", host="127.0.0.1", port=port, path="/mcp", show_banner=False)


if __name__ == "__main__":
    main()
