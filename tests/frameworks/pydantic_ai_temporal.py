"""A pydantic-ai agent under pydantic-ai's Temporal mode whose MCP tools run as mcp_client's activities.

``TemporalDurability`` makes the model requests pydantic-ai's activities; the toolset, an :class:`MCPToolset` over
an ``MCPWorkflowClient``, makes each tool call the worker's ``mcp_client/plain/call_tool`` activity. The model is
the scripted ``FunctionModel`` of :mod:`tests.frameworks.scripted_agent`.
Imported by the tests (to start the workflow) and by the worker process (to run it).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.temporal import PydanticAIWorkflow, TemporalDurability
    from pydantic_ai.models.function import FunctionModel

    from mcp_client import TimeoutPolicy
    from mcp_client.integrations.pydantic_ai import MCPToolset
    from mcp_client.integrations.temporal import MCPWorkflowClient
    from tests.frameworks.scripted_agent import scripted_model


plain = MCPWorkflowClient("plain", heartbeat_timeout=timedelta(seconds=2), timeout=TimeoutPolicy(idle=20, maximum=60))
agent = Agent(
    FunctionModel(scripted_model),
    name="counter",
    toolsets=[MCPToolset(plain, id="plain")],
    capabilities=[TemporalDurability()],
)


@workflow.defn
class CountingAgentWorkflow(PydanticAIWorkflow):
    """Run the agent on the prompt; return its answer."""

    __pydantic_ai_agents__ = (agent,)

    @workflow.run
    async def run(self, prompt: str) -> str:
        return (await agent.run(prompt)).output


short = MCPWorkflowClient("plain", heartbeat_timeout=timedelta(seconds=2), timeout=TimeoutPolicy(idle=20, maximum=2))
short_agent = Agent(
    FunctionModel(scripted_model),
    name="short",
    toolsets=[MCPToolset(short, id="plain")],
    capabilities=[TemporalDurability()],
)


@workflow.defn
class ShortMaximumAgentWorkflow(PydanticAIWorkflow):
    """The same agent, its calls under a 2 s maximum."""

    __pydantic_ai_agents__ = (short_agent,)

    @workflow.run
    async def run(self, prompt: str) -> str:
        return (await short_agent.run(prompt)).output
