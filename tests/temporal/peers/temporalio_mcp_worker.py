"""The same crash case on temporalio-mcp 0.2.0, Temporal's own MCP integration, for the side-by-side in the docs.

Runs in a virtualenv of its own (``temporalio-mcp-requirements.txt``, built by the tests under ``.venv-peers/``):
``python temporalio_mcp_worker.py ADDRESS TASK_QUEUE PLAIN_URL``. Registers ``TheirCallWorkflow`` (one
``call_tool`` through ``TemporalMCPClient("plain")``, a start-to-close timeout of 8 s since it does not heartbeat)
and prints ``ready`` once it polls.

(It is not type-checked with the project: its imports exist only in its own virtualenv.)
"""

# mypy: ignore-errors

import asyncio
import sys
from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client as TemporalClient
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from mcp import Client
    from mcp.types import TextContent
    from temporalio.mcp import MCPPlugin, TemporalMCPClient


@workflow.defn
class TheirCallWorkflow:
    @workflow.run
    async def run(self, tool: str, arguments: dict) -> str:
        plain = TemporalMCPClient("plain", activity_config={"start_to_close_timeout": timedelta(seconds=8)})
        result = await plain.call_tool(tool, arguments)
        return " ".join(block.text for block in result.content if isinstance(block, TextContent))


async def main(address: str, task_queue: str, plain_url: str) -> None:
    plugin = MCPPlugin({"plain": lambda: Client(plain_url)})
    temporal = await TemporalClient.connect(address)
    worker = Worker(
        temporal, task_queue=task_queue, workflows=[TheirCallWorkflow], plugins=[plugin], max_cached_workflows=0
    )
    async with worker:
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
