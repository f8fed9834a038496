"""LangChain and LangGraph: :func:`load_tools`, the tools of a Client or a ClientGroup as async ``StructuredTool``\\ s.

```python
from langgraph.prebuilt import create_react_agent
from mcp_client.integrations.langchain import load_tools

async with Client(stdio("python", ["server.py"])) as client:
    agent = create_react_agent(model, await load_tools(client))
    state = await agent.ainvoke({"messages": [("user", "Reindex the docs collection")]})
```

Each tool answers with content and artifact (``response_format="content_and_artifact"``): the content is what
the model reads (text, image blocks), the artifact the whole ``CallToolResult`` for the host. A failed call or a
result flagged ``isError`` is a handled ``ToolException`` whose text is the error's ``for_model``, so the model
gets a ``ToolMessage`` with ``status="error"`` and the agent loop goes on. Progress notifications go to the run's
LangChain callbacks as custom events named ``mcp_client.progress`` (:data:`PROGRESS_EVENT`).

Needs the ``langchain`` extra (``langchain-core``). Uses the public API of Client and ClientGroup only.
"""

from __future__ import annotations

from typing import Any

import mcp_types
from langchain_core.callbacks import adispatch_custom_event
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException

from mcp_client._typed import typed
from mcp_client.client.client import Client
from mcp_client.errors import MCPClientError
from mcp_client.group import ClientGroup
from mcp_client.integrations._tools import ToolEntry, ToolSource, error_text, result_text, tool_error
from mcp_client.policy import Progress

__all__ = ["PROGRESS_EVENT", "load_tools"]

PROGRESS_EVENT = "mcp_client.progress"
"""The name of the custom callback event each accepted progress notification is dispatched as. Its data:
``{"tool", "progress", "total", "message"}`` (``total`` and ``message`` may be ``None``)."""

_INJECTED = frozenset({"config", "callbacks", "run_manager"})
"""Argument names LangChain fills in itself: a tool with such an argument gets it through ``mcp_arguments``."""


async def load_tools(source: Client | ClientGroup, *, separator: str = "__") -> list[StructuredTool]:
    """The tools of a connected client or group, as async LangChain tools (listed now).

    Args:
        source: The client or group; keep it connected while the tools are used.
        separator: For a group, what joins server and tool in the tools' names (``search__query``).
    """
    tools = ToolSource(source, separator=separator)
    return [_structured_tool(tools, entry) for entry in await tools.list()]


def _structured_tool(tools: ToolSource, entry: ToolEntry) -> StructuredTool:
    schema = entry.input_schema
    clashes = _INJECTED & set(schema.get("properties", {}))
    if clashes:
        # LangChain would take these names for its own parameters: nest the arguments under one key instead.
        schema = {"type": "object", "properties": {"mcp_arguments": schema}, "required": ["mcp_arguments"]}

    async def call(config: RunnableConfig, **arguments: Any) -> tuple[str | list[dict[str, Any]], Any]:
        if clashes:
            arguments = dict(arguments.get("mcp_arguments") or {})

        async def forward(update: Progress) -> None:
            data = {"tool": entry.name, "progress": update.progress, "total": update.total, "message": update.message}
            await adispatch_custom_event(PROGRESS_EVENT, data, config=config)

        try:
            with typed():
                result = await tools.call(entry, arguments, on_progress=forward)
        except MCPClientError as exc:
            raise ToolException(error_text(exc)) from exc
        if result.is_error:
            raise ToolException(tool_error(entry, result).for_model)
        return _content(result), result

    return StructuredTool.from_function(
        coroutine=call,
        name=entry.name,
        description=entry.description,
        args_schema=schema,
        response_format="content_and_artifact",
        handle_tool_error=True,
        metadata={"mcp_tool": entry.target, "annotations": _annotations(entry.tool.annotations)},
    )


def _content(result: mcp_types.CallToolResult) -> str | list[dict[str, Any]]:
    """What the model reads: the text, or LangChain content blocks when the result has images."""
    images = [block for block in result.content if isinstance(block, mcp_types.ImageContent)]
    text = result_text(result)
    if not images:
        return text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "image", "base64": image.data, "mime_type": image.mime_type} for image in images]
    return blocks


def _annotations(hints: mcp_types.ToolAnnotations | None) -> dict[str, Any] | None:
    return hints.model_dump(by_alias=True, exclude_none=True) if hints is not None else None
