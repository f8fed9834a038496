"""A DBOS application for the pydantic-ai agent tests: ``python pydantic_ai_dbos_app.py MODE PLAIN_URL WORKFLOW_ID
PROMPT...``, run in a folder of its own (DBOS's default system database, ``<app name>.sqlite``, is made there).

The agent has pydantic-ai's ``DBOSDurability`` and an :class:`MCPToolset` over a Client of the mcp 2.3.0 server (and,
when ``MCP_TEST_TASKS_URL`` names one, another over the fastmcp-tasks server, whose ``slow_task`` is a task); it
runs in the ``run_agent`` workflow, one per prompt (ids ``WORKFLOW_ID-0``, ``-1``...). ``MODE``: ``run`` starts
the workflows and waits for them; ``start`` starts them and waits to be killed; ``recover`` only launches DBOS,
which recovers the workflows a killed process left, and waits for them. ``run`` and ``recover`` print one JSON
line: for each workflow, the agent's output, the workflow's steps by name, and its events (the call step's
checkpoint).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.models.function import FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_client import Client, TimeoutPolicy, http
from mcp_client.integrations.pydantic_ai import MCPToolset
from tests.frameworks.scripted_agent import scripted_model

MODE, PLAIN_URL, WORKFLOW_ID, *PROMPTS = sys.argv[1:]

DBOS(config={"name": "mcp_client_agent"})  # DBOS's default system database: SQLite, in the working folder
POLICY = TimeoutPolicy(idle=20, maximum=60, connect=30)
TASKS_URL = os.environ.get("MCP_TEST_TASKS_URL")
client = Client(http(PLAIN_URL), timeout=POLICY, probe_timeout=30)
tasks_client = Client(http(TASKS_URL), timeout=POLICY, probe_timeout=30) if TASKS_URL else None
toolsets = [MCPToolset(client, id="plain")]
if tasks_client is not None:
    toolsets.append(MCPToolset(tasks_client, id="tasks"))
agent = Agent(FunctionModel(scripted_model), name="counter", toolsets=toolsets, capabilities=[DBOSDurability()])


@DBOS.workflow()
async def run_agent(prompt: str) -> str:
    return (await agent.run(prompt)).output


async def main() -> None:
    async with contextlib.AsyncExitStack() as clients:
        for each in (client, tasks_client):
            if each is not None:
                await clients.enter_async_context(each)
        DBOS.launch()  # in this loop: a recovered workflow runs here, where the client is connected
        ids = [f"{WORKFLOW_ID}-{index}" for index in range(len(PROMPTS))]
        reports = await asyncio.gather(
            *(_run(workflow_id, prompt) for workflow_id, prompt in zip(ids, PROMPTS, strict=True))
        )
        print(json.dumps(reports), flush=True)
    DBOS.destroy()


async def _run(workflow_id: str, prompt: str) -> dict[str, Any]:
    handle: WorkflowHandleAsync[str]
    if MODE == "recover":
        handle = await DBOS.retrieve_workflow_async(workflow_id)
    else:
        with SetWorkflowID(workflow_id):
            handle = await DBOS.start_workflow_async(run_agent, prompt)
    if MODE == "start":  # run until killed, the client open, whatever becomes of the workflow
        await asyncio.Event().wait()
    output = await handle.get_result()
    steps = await DBOS.list_workflow_steps_async(workflow_id)
    return {
        "output": output,
        "steps": [{"id": step["function_id"], "name": step["function_name"]} for step in steps],
        "events": await DBOS.get_all_events_async(workflow_id),
    }


if __name__ == "__main__":
    asyncio.run(main())
