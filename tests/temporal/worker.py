"""A Temporal worker process for the tests: ``python worker.py ADDRESS TASK_QUEUE PLAIN_URL TASKS_URL [CODEC]``.

Runs ``CallToolWorkflow`` with ``MCPPlugin`` over the two MCP servers (``plain`` and ``tasks``) until killed; prints
``ready`` once it polls. The tests SIGKILL it in the middle of a call and start another. ``CODEC`` (``instant`` or
``awaiting``, see ``codec.py``) gives its Temporal client that payload codec, and then the worker runs one activity
at a time, so that a kill hits one call only.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from temporalio.client import Client as TemporalClient
from temporalio.converter import DataConverter
from temporalio.worker import Worker

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_client import Client, TimeoutPolicy, http
from mcp_client.integrations.temporal import MCPPlugin
from tests.temporal.codec import CODECS
from tests.temporal.workflows import CallToolWorkflow

CONNECT = TimeoutPolicy(connect=30)


async def main(address: str, task_queue: str, plain_url: str, tasks_url: str, codec: str | None = None) -> None:
    plugin = MCPPlugin(
        {
            "plain": lambda: Client(http(plain_url), timeout=CONNECT, probe_timeout=30),
            "tasks": lambda: Client(http(tasks_url), timeout=CONNECT, probe_timeout=30),
        }
    )
    options: dict[str, Any] = {}
    if codec is not None:
        options["data_converter"] = DataConverter(payload_codec=CODECS[codec]())
    temporal = await TemporalClient.connect(address, plugins=[plugin], **options)
    # No workflow cache, hence no sticky queue: after a kill, the next workflow task goes to a live worker at once
    # instead of waiting out the dead one's sticky schedule-to-start timeout.
    worker = Worker(
        temporal,
        task_queue=task_queue,
        workflows=[CallToolWorkflow],
        max_cached_workflows=0,
        max_concurrent_activities=1 if codec is not None else 100,
    )
    async with worker:
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
