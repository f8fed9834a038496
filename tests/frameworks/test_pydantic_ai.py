"""pydantic-ai: an agent run on a scripted ``FunctionModel`` calls tools through ``MCPToolset``.

Against the bundled demo server and server-everything over stdio, and the scripted peer in memory for failures:
tools carry their JSON schemas, results come back to the model, failures come back as retry prompts with
``for_model``, and a call still running at ``notify_after`` is deferred and finished in a later run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types
import pytest
from pydantic_ai import Agent, DeferredToolRequests, ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from mcp_client import Client, ClientGroup, TimeoutPolicy, memory
from mcp_client.integrations.pydantic_ai import MCPToolset
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.stdio._transport import StdioTransport

pytestmark = pytest.mark.anyio

Step = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


class ScriptedModel:
    """A model that plays ``steps`` in order, and keeps what it was shown (tool definitions, returns, retries)."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.tools: list[Any] = []
        self.returns: list[ToolReturnPart] = []
        """Tool results that reached the model."""
        self.retries: list[ToolReturnPart | RetryPromptPart] = []
        """Retry prompts that reached the model (pydantic-ai marks them ``outcome='retried'``)."""
        self.model = FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools = info.function_tools
        last = messages[-1]
        for part in last.parts:
            if isinstance(part, RetryPromptPart) or (isinstance(part, ToolReturnPart) and part.outcome == "retried"):
                self.retries.append(part)
            elif isinstance(part, ToolReturnPart):
                self.returns.append(part)
        return self.steps.pop(0)(messages, info)


def call(tool: str, args: dict[str, Any], call_id: str = "call-1") -> Step:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id=call_id)])


def answer_with_last_return(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    parts = [part for part in messages[-1].parts if isinstance(part, ToolReturnPart | RetryPromptPart)]
    return ModelResponse(parts=[TextPart(str(parts[-1].content))])


async def test_an_agent_calls_a_demo_server_tool(demo_transport: StdioTransport) -> None:
    model = ScriptedModel(call("echo", {"text": "hello"}), answer_with_last_return)
    async with Client(demo_transport) as client:
        agent = Agent(model.model, toolsets=[MCPToolset(client)])
        result = await agent.run("say hello")

    assert result.output == "hello"
    echo = next(tool for tool in model.tools if tool.name == "echo")
    assert echo.parameters_json_schema["properties"]["text"]["type"] == "string"
    assert echo.metadata["annotations"]["readOnlyHint"] is True
    assert echo.timeout is None  # mcp_client's policy governs, not the framework's


async def test_an_agent_calls_server_everything(everything_transport: StdioTransport) -> None:
    model = ScriptedModel(call("echo", {"message": "from the agent"}), answer_with_last_return)
    async with Client(everything_transport) as client:
        agent = Agent(model.model, toolsets=[MCPToolset(client)])
        result = await agent.run("echo something")

    assert "from the agent" in result.output
    assert "echo" in {tool.name for tool in model.tools}


async def test_a_group_names_tools_by_server(demo_transport: StdioTransport) -> None:
    model = ScriptedModel(call("demo__echo", {"text": "grouped"}), answer_with_last_return)
    async with ClientGroup({"demo": demo_transport}) as group:
        agent = Agent(model.model, toolsets=[MCPToolset(group)])
        result = await agent.run("echo")

    assert result.output == "grouped"
    assert {tool.metadata["mcp_tool"] for tool in model.tools} >= {"demo/echo", "demo/reindex"}


async def test_timeouts_go_back_to_the_model_as_the_tools_result_and_do_not_end_the_run() -> None:
    """Two timeouts of one tool: each is an outcome the model reads, not a retry that counts against the tool
    (the agent's one retry would have ended the run with ``UnexpectedModelBehavior``)."""
    model = ScriptedModel(call("silent", {}, "call-1"), call("silent", {}, "call-2"), answer_with_last_return)
    # silent never answers: only the idle timeout ends it, whatever the clock's speed
    client = Client(memory(ScriptedPeer(era="modern").serve), timeout=TimeoutPolicy(idle=0.05, maximum=5))
    async with client:
        agent = Agent(model.model, toolsets=[MCPToolset(client)], retries=1)
        result = await agent.run("call silent")

    assert model.retries == []
    assert [part.tool_call_id for part in model.returns] == ["call-1", "call-2"]
    for returned in model.returns:
        assert returned.tool_name == "silent"
        assert str(returned.content).startswith("The tool 'silent' timed out")
        assert "The client told the server to stop it." in str(returned.content)
        assert "it is read-only, so calling it again is safe" in str(returned.content)
    assert result.output == model.returns[-1].content


async def test_a_tool_error_is_the_tools_result_and_the_model_may_try_again() -> None:
    model = ScriptedModel(
        call("tool_error", {}, "call-1"), call("echo", {"text": "second try"}, "call-2"), answer_with_last_return
    )
    async with Client(memory(ScriptedPeer(era="legacy").serve)) as client:
        agent = Agent(model.model, toolsets=[MCPToolset(client)])
        result = await agent.run("try")

    assert model.retries == []
    assert str(model.returns[0].content).startswith("The tool 'tool_error' ran and reported an error")
    assert result.output == "second try"


async def test_arguments_the_server_refuses_are_a_retry_prompt_the_model_can_act_on() -> None:
    model = ScriptedModel(
        call("echo", {"text": 5}, "call-1"), call("echo", {"text": "five"}, "call-2"), answer_with_last_return
    )
    async with Client(memory(ScriptedPeer(era="modern").serve)) as client:
        agent = Agent(model.model, toolsets=[MCPToolset(client)])
        result = await agent.run("echo five")

    [retry] = model.retries
    assert "must be a string" in str(retry.content)
    assert result.output == "five"


async def test_a_slow_call_is_deferred_and_its_result_reaches_the_next_run() -> None:
    gate = anyio.Event()

    async def answer_when_released(params: Any) -> mcp_types.ElicitResult:
        await gate.wait()  # the call cannot end before the test lets it
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    model = ScriptedModel(call("ask", {"rounds": 1}, "slow-1"), answer_with_last_return)
    policy = TimeoutPolicy(idle=30, maximum=60, notify_after=0.01)
    client = Client(memory(ScriptedPeer(era="modern").serve), timeout=policy, elicitation=answer_when_released)
    async with client:
        toolset = MCPToolset(client, defer_slow=True)
        agent = Agent(model.model, toolsets=[toolset], output_type=[str, DeferredToolRequests])
        first = await agent.run("ask for a name")
        assert isinstance(first.output, DeferredToolRequests)
        assert [part.tool_call_id for part in first.output.calls] == ["slow-1"]
        assert first.output.metadata["slow-1"] == {"mcp_tool": "ask", "reason": "slow"}
        assert toolset.pending == ["slow-1"]

        gate.set()
        results = await toolset.deferred_results(first.output)
        second = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)

    assert toolset.pending == []
    assert "Ada" in second.output
    assert [part.tool_call_id for part in model.returns] == ["slow-1"]


async def test_structured_content_reaches_the_model_as_data(demo_transport: StdioTransport) -> None:
    model = ScriptedModel(call("stats", {}), answer_with_last_return)
    async with Client(demo_transport) as client:
        agent = Agent(model.model, toolsets=[MCPToolset(client)])
        await agent.run("stats")

    [returned] = model.returns
    assert isinstance(returned.content, str | dict)
    assert "outcomes" in (returned.content if isinstance(returned.content, dict) else json.loads(returned.content))


async def test_a_deferrable_call_on_a_lazy_group_starts_its_server_first(tmp_path: Any) -> None:
    peer = ScriptedPeer(era="modern")
    async with ClientGroup({"s": memory(peer.serve)}, start="lazy", snapshot=tmp_path) as group:
        await group.list_tools()  # (no snapshot yet: started to list it, and the listing kept)
    model = ScriptedModel(call("s__echo", {"text": "lazy"}), answer_with_last_return)
    policy = TimeoutPolicy(idle=30, maximum=60, notify_after=30)
    async with ClientGroup({"s": memory(peer.serve)}, start="lazy", snapshot=tmp_path, timeout=policy) as group:
        toolset = MCPToolset(group, defer_slow=True)
        agent = Agent(model.model, toolsets=[toolset], output_type=[str, DeferredToolRequests])
        result = await agent.run("echo")  # the tools from the snapshot; the call's handle needs its server started
    assert result.output == "lazy"
    assert peer.stats.connections == 2
