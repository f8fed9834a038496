"""What the agent hands the model for an MCP call: a result as pydantic-ai values, a failure as its outcome text, or
a retry prompt when the model's arguments were refused. Shared by every way :class:`MCPToolset` runs a call."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import mcp_types
from pydantic_ai import BinaryContent, ModelRetry
from pydantic_ai.toolsets import ToolsetTool

from mcp_client.errors import InvalidParams, MCPClientError
from mcp_client.integrations._tools import ToolEntry, error_text, result_text, tool_error

__all__ = ["entry_of", "failure", "for_agent"]


def failure(error: MCPClientError) -> str:
    """A failed call as the model reads it: the outcome as the tool's result, or a retry prompt when the model's
    arguments were refused."""
    if isinstance(error, InvalidParams):
        raise ModelRetry(error_text(error)) from error
    return error_text(error)


def for_agent(entry: ToolEntry, result: mcp_types.CallToolResult) -> Any:
    """A result as the agent returns it to the model: structured content, text, images; ``isError`` as the tool's
    error text (the tool ran: the model reads what it said, as it would a result)."""
    if result.is_error:
        return tool_error(entry, result).for_model
    if result.structured_content is not None and all(
        isinstance(block, mcp_types.TextContent) for block in result.content
    ):
        return result.structured_content
    media = [_binary(block) for block in result.content if isinstance(block, mcp_types.ImageContent)]
    text = result_text(result)
    if not media:
        return text
    return [text, *media] if text else media


def _binary(block: mcp_types.ImageContent) -> BinaryContent | str:
    try:
        return BinaryContent(data=base64.b64decode(block.data, validate=True), media_type=block.mime_type)
    except (binascii.Error, ValueError):
        return f"[{block.type}: {block.mime_type}, not valid base64]"


def entry_of(tool: ToolsetTool[Any]) -> ToolEntry:
    """The MCP tool behind a tool of this run's listing, read from its definition (name, schema, annotations) with
    no I/O: in workflow code a call reaches its durable unit without waiting on anything."""
    definition = tool.tool_def
    metadata = definition.metadata or {}
    target = str(metadata.get("mcp_tool") or definition.name)
    annotations = metadata.get("annotations")
    listed = mcp_types.Tool(
        name=target,
        description=definition.description,
        input_schema=definition.parameters_json_schema,
        annotations=mcp_types.ToolAnnotations.model_validate(annotations) if annotations else None,
    )
    return ToolEntry(definition.name, listed, target)
