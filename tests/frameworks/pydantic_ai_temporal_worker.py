"""A Temporal worker process for the pydantic-ai agent tests: ``python pydantic_ai_temporal_worker.py ADDRESS
TASK_QUEUE PLAIN_URL``.

Runs ``CountingAgentWorkflow`` and ``ShortMaximumAgentWorkflow`` with pydantic-ai's plugin (its model activities)
and mcp_client's ``MCPPlugin`` (the ``plain`` server's activities) until killed; prints ``ready`` once it polls.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.client import Client as TemporalClient
from temporalio.worker import Worker

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_client import Client, TimeoutPolicy, http
from mcp_client.integrations.temporal import MCPPlugin
from tests.frameworks.pydantic_ai_temporal import CountingAgentWorkflow, ShortMaximumAgentWorkflow


async def main(address: str, task_queue: str, plain_url: str) -> None:
    connect = TimeoutPolicy(connect=30)
    mcp = MCPPlugin({"plain": lambda: Client(http(plain_url), timeout=connect, probe_timeout=30)})
    temporal = await TemporalClient.connect(address, plugins=[PydanticAIPlugin(), mcp])
    # No workflow cache: after a kill, the next workflow task goes to a live worker at once.
    worker = Worker(
        temporal,
        task_queue=task_queue,
        workflows=[CountingAgentWorkflow, ShortMaximumAgentWorkflow],
        max_cached_workflows=0,
    )
    async with worker:
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
