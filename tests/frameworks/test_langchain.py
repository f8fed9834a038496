"""LangChain and LangGraph: a ReAct agent loop on a scripted chat model calls tools from ``load_tools``.

Against the bundled demo server and server-everything over stdio, and the scripted peer in memory for failures:
tools carry their JSON schemas, answer with content and artifact, forward progress to the run's callbacks, and a
failure reaches the model as a ``ToolMessage`` with ``status="error"`` and the ``for_model`` text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any
from uuid import UUID

import mcp_types
import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from mcp_client import Client, ClientGroup, TimeoutPolicy, memory
from mcp_client.integrations.langchain import PROGRESS_EVENT, load_tools
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.stdio._transport import StdioTransport

pytestmark = pytest.mark.anyio


class ScriptedChat(GenericFakeChatModel):
    """A chat model that answers with the given messages in order; binding tools keeps them for the test."""

    bound: list[Any] = []  # noqa: RUF012 (a pydantic field, copied per instance)

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[Any, AIMessage]:
        self.bound = list(tools)
        return self


def scripted(*replies: AIMessage) -> Iterator[AIMessage]:
    return iter(replies)


def tool_call(name: str, args: dict[str, Any], call_id: str = "call-1") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


class ProgressLog(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    async def on_custom_event(
        self, name: str, data: Any, *, run_id: UUID, tags: list[str] | None = None, **kwargs: Any
    ) -> None:
        self.events.append((name, data))


def create_react_agent(model: ScriptedChat, tools: Sequence[BaseTool]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The ReAct loop: the model answers or calls tools; a ToolNode runs them; back to the model."""
    bound = model.bind_tools(tools)

    async def think(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [message for message in state["messages"] if isinstance(message, ToolMessage)]


async def test_a_react_agent_calls_a_demo_server_tool_with_progress(demo_transport: StdioTransport) -> None:
    model = ScriptedChat(
        messages=scripted(
            tool_call("reindex", {"collection": "docs", "seconds": 0.3, "progress_every": 0.05}),
            AIMessage(content="reindexed"),
        )
    )
    progress = ProgressLog()
    async with Client(demo_transport) as client:
        tools = await load_tools(client)
        agent = create_react_agent(model, tools)
        state = await agent.ainvoke({"messages": [("user", "reindex docs")]}, config={"callbacks": [progress]})

    [message] = tool_messages(state)
    assert message.status == "success"
    assert str(message.content).startswith("reindexed 'docs' in ")
    assert isinstance(message.artifact, mcp_types.CallToolResult)
    assert state["messages"][-1].content == "reindexed"
    reindex = next(tool for tool in tools if tool.name == "reindex")
    assert reindex.args["collection"]["type"] == "string"
    assert progress.events
    assert {name for name, _ in progress.events} == {PROGRESS_EVENT}
    first = progress.events[0][1]
    assert first["tool"] == "reindex"
    assert first["progress"] == 1


async def test_a_react_agent_calls_server_everything(everything_transport: StdioTransport) -> None:
    model = ScriptedChat(messages=scripted(tool_call("echo", {"message": "from langgraph"}), AIMessage(content="ok")))
    async with Client(everything_transport) as client:
        agent = create_react_agent(model, await load_tools(client))
        state = await agent.ainvoke({"messages": [("user", "echo")]})

    [message] = tool_messages(state)
    assert "from langgraph" in str(message.content)
    assert message.status == "success"


async def test_a_timeout_reaches_the_model_as_an_error_tool_message() -> None:
    model = ScriptedChat(messages=scripted(tool_call("silent", {}), AIMessage(content="I will not retry")))
    client = Client(memory(ScriptedPeer(era="legacy").serve), timeout=TimeoutPolicy(idle=0.05, maximum=5))
    async with client:
        agent = create_react_agent(model, await load_tools(client))
        state = await agent.ainvoke({"messages": [("user", "call silent")]})

    [message] = tool_messages(state)
    assert message.status == "error"
    assert str(message.content).startswith("The tool 'silent' timed out")
    assert "The client told the server to stop it." in str(message.content)


async def test_a_tool_error_is_rendered_for_the_model() -> None:
    async with Client(memory(ScriptedPeer(era="modern").serve)) as client:
        tools = {tool.name: tool for tool in await load_tools(client)}
        message = await tools["tool_error"].ainvoke(
            {"name": "tool_error", "args": {}, "id": "call-9", "type": "tool_call"}
        )

    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert str(message.content).startswith("The tool 'tool_error' ran and reported an error")


async def test_a_group_names_tools_by_server(demo_transport: StdioTransport) -> None:
    async with ClientGroup({"demo": demo_transport}) as group:
        tools: dict[str, BaseTool] = {tool.name: tool for tool in await load_tools(group)}
        message = await tools["demo__echo"].ainvoke(
            {"name": "demo__echo", "args": {"text": "grouped"}, "id": "call-1", "type": "tool_call"}
        )

    metadata = tools["demo__echo"].metadata or {}
    assert metadata["mcp_tool"] == "demo/echo"
    assert metadata["annotations"]["readOnlyHint"] is True
    assert isinstance(message, ToolMessage)
    assert message.content == "grouped"
