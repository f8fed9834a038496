"""OpenAI Agents SDK: ``Agent(mcp_servers=[MCPClientServer(client)])`` runs on a scripted ``Model``.

Against the bundled demo server and server-everything over stdio, and the scripted peer in memory for failures:
the SDK lists the tools and calls them through mcp_client, and a failure reaches the model as a tool output with
the ``for_model`` text. Tracing is off, so nothing leaves the machine.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
from agents.items import TResponseInputItem
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from mcp_client import Client, TimeoutPolicy, memory
from mcp_client.integrations.openai_agents import MCPClientServer
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.stdio._transport import StdioTransport

pytestmark = pytest.mark.anyio

NO_TRACING = RunConfig(tracing_disabled=True)


class ScriptedModel(Model):
    """Calls one tool, then answers with the output the tool gave; keeps what it saw."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool = tool
        self.arguments = arguments
        self.tool_names: list[str] = []
        self.outputs: list[str] = []

    async def get_response(
        self, system_instructions: str | None, input: str | list[TResponseInputItem], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        tools = args[1] if len(args) > 1 else kwargs["tools"]
        self.tool_names = [tool.name for tool in tools]
        items: list[Any] = [] if isinstance(input, str) else list(input)
        outputs = [item for item in items if isinstance(item, dict) and item.get("type") == "function_call_output"]
        if not outputs:
            call = ResponseFunctionToolCall(
                type="function_call", call_id="call-1", name=self.tool, arguments=json.dumps(self.arguments)
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        self.outputs = [_text(output["output"]) for output in outputs]
        text = ResponseOutputText(type="output_text", text=self.outputs[-1], annotations=[])
        message = ResponseOutputMessage(
            id="msg-1", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests do not stream")


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return str(output.get("text", output))
    return " ".join(str(part.get("text", part)) for part in output)


async def test_an_agent_calls_a_demo_server_tool(demo_transport: StdioTransport) -> None:
    model = ScriptedModel("echo", {"text": "hello agents"})
    async with Client(demo_transport) as client:
        server = MCPClientServer(client)
        agent = Agent(name="assistant", model=model, mcp_servers=[server])
        result = await Runner.run(agent, "say hello", run_config=NO_TRACING)

    assert result.final_output == "hello agents"
    assert {"echo", "reindex"} <= set(model.tool_names)
    assert server.name == "mcp-client-scripted-peer"


async def test_an_agent_calls_server_everything(everything_transport: StdioTransport) -> None:
    model = ScriptedModel("echo", {"message": "from the sdk"})
    async with Client(everything_transport) as client:
        agent = Agent(name="assistant", model=model, mcp_servers=[MCPClientServer(client)])
        result = await Runner.run(agent, "echo", run_config=NO_TRACING)

    assert "from the sdk" in result.final_output


async def test_a_timeout_reaches_the_model_as_the_outcome() -> None:
    model = ScriptedModel("silent", {})
    client = Client(memory(ScriptedPeer(era="modern").serve), timeout=TimeoutPolicy(idle=0.05, maximum=5))
    async with client:
        agent = Agent(name="assistant", model=model, mcp_servers=[MCPClientServer(client, name="peer")])
        result = await Runner.run(agent, "call silent", run_config=NO_TRACING)

    assert result.final_output.startswith("The tool 'silent' timed out")
    assert "The client told the server to stop it." in result.final_output


async def test_a_tool_error_is_rendered_for_the_model() -> None:
    model = ScriptedModel("tool_error", {})
    async with Client(memory(ScriptedPeer(era="legacy").serve)) as client:
        agent = Agent(name="assistant", model=model, mcp_servers=[MCPClientServer(client)])
        result = await Runner.run(agent, "fail", run_config=NO_TRACING)

    assert result.final_output.startswith("The tool 'tool_error' ran and reported an error")


async def test_prompts_and_resources_go_through_the_client() -> None:
    async with Client(memory(ScriptedPeer(era="modern").serve)) as client:
        server = MCPClientServer(client)
        prompts = await server.list_prompts()
        prompt = await server.get_prompt("greet", {"name": "Ada"})
        resources = await server.list_resources()
        memo = await server.read_resource("memo://hello")

    assert [p.name for p in prompts.prompts] == ["greet"]
    assert "Ada" in json.dumps(prompt.model_dump(mode="json"))
    assert [str(r.uri) for r in resources.resources] == ["memo://hello"]
    assert "hello" in json.dumps(memo.model_dump(mode="json"))
