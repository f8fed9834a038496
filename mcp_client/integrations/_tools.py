"""What every framework adapter needs from mcp_client: the tools of a Client or a ClientGroup under names a model
may use, the call of one of them, and the texts a model reads for a result or a failure.

It uses the public API of :class:`~mcp_client.Client` and :class:`~mcp_client.ClientGroup` only, and imports no
framework.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types

from mcp_client._typed import sole_error, typed, typed_methods
from mcp_client.calls.progress import ProgressCallback
from mcp_client.client.call import Call
from mcp_client.client.client import Client
from mcp_client.errors import MCPClientError, ToolError
from mcp_client.group import ClientGroup, split_tool_name
from mcp_client.policy import TimeoutPolicy

__all__ = ["ToolEntry", "ToolSource", "error_text", "result_text", "tool_error"]

_MODEL_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class ToolEntry:
    """One tool as a model sees it: ``name`` (unique among the source's tools) and the MCP tool behind it."""

    name: str
    """The name the model calls it by: the tool's own, or ``server<separator>tool`` for a group."""
    tool: mcp_types.Tool
    """The tool as ``tools/list`` described it."""
    target: str
    """The name to call it by: the tool's own for a Client, ``server/tool`` for a ClientGroup."""

    @property
    def description(self) -> str:
        """The tool's description (its title or name when it has none)."""
        return self.tool.description or self.tool.title or self.tool.name

    @property
    def input_schema(self) -> dict[str, Any]:
        """The tool's JSON schema for its arguments (an object schema)."""
        schema = dict(self.tool.input_schema)
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema


class ToolSource:
    """The tools of a connected :class:`~mcp_client.Client` or :class:`~mcp_client.ClientGroup`.

    Args:
        source: The client or group; it must be connected (``async with``) while its tools are used.
        separator: For a group, what joins the server's name and the tool's in the name a model sees
            (model APIs allow letters, digits, ``_`` and ``-`` only, so ``server/tool`` cannot be used as is).
    """

    def __init__(self, source: Client | ClientGroup, *, separator: str = "__") -> None:
        if not isinstance(source, Client | ClientGroup):
            raise TypeError(f"expected a connected Client or ClientGroup, got {type(source).__name__}")
        self.source = source
        self.separator = separator
        self._entries: dict[str, ToolEntry] = {}

    async def list(self) -> list[ToolEntry]:
        """List the tools again (for a group: of every running server); also learns their annotations."""
        entries: list[ToolEntry] = []
        if isinstance(self.source, Client):
            entries = [ToolEntry(tool.name, tool, tool.name) for tool in await self.source.list_tools()]
        else:
            for server, tools in (await self.source.list_tools()).items():
                for tool in tools:
                    name = _MODEL_NAME.sub("_", f"{server}{self.separator}{tool.name}")
                    entries.append(ToolEntry(name, tool, f"{server}/{tool.name}"))
        by_name: dict[str, ToolEntry] = {}
        for entry in entries:
            if entry.name in by_name:
                raise ValueError(
                    f"two tools would both be called {entry.name!r} ({by_name[entry.name].target!r}, "
                    f"{entry.target!r}): choose another separator"
                )
            by_name[entry.name] = entry
        self._entries = by_name
        return entries

    async def entries(self) -> dict[str, ToolEntry]:
        """The tools by model name, listed at the first use."""
        if not self._entries:
            await self.list()
        return self._entries

    async def entry(self, name: str) -> ToolEntry:
        """The tool a model called ``name``."""
        entries = await self.entries()
        try:
            return entries[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r} (tools: {', '.join(entries)})") from None

    def policy(self, entry: ToolEntry) -> TimeoutPolicy:
        """The timeout policy the tool's calls run under (its rules in the client or group)."""
        return self.source.resolve(entry.target)[0]

    async def call(
        self, entry: ToolEntry, arguments: Mapping[str, Any] | None, *, on_progress: ProgressCallback | None = None
    ) -> mcp_types.CallToolResult:
        """Call the tool under its policy; errors name the tool and its annotations (for ``for_model``)."""
        try:
            with typed():
                return await self.source.call_tool(entry.target, arguments, on_progress=on_progress)
        except MCPClientError as exc:
            exc.about_tool(entry.tool.name, entry.tool.annotations)
            raise

    def start(
        self, entry: ToolEntry, arguments: Mapping[str, Any] | None, *, on_progress: ProgressCallback | None = None
    ) -> Call[mcp_types.CallToolResult]:
        """A :class:`~mcp_client.Call` handle on the tool (not yet started); see :meth:`ready`."""
        return self.source.tool_call(entry.target, arguments, on_progress=on_progress)

    async def ready(self, entry: ToolEntry) -> None:
        """Start the tool's server first if it is a group's that is not running (lazy, or stopped idle): a handle
        needs a running server.

        Raises:
            ConnectError: The server failed to start.
        """
        if isinstance(self.source, ClientGroup):
            try:
                await self.source.start(split_tool_name(entry.target)[0])
            except MCPClientError as exc:
                exc.about_tool(entry.tool.name, entry.tool.annotations)
                raise


typed_methods(ToolSource)  # listing and calling, for every adapter: failures typed, never an exception group


def result_text(result: mcp_types.CallToolResult) -> str:
    """A result as text for a model: its text blocks, or its structured content as JSON, with other blocks
    summarised (``[image: image/png]``)."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource: {block.uri}]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource: {resource.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def tool_error(entry: ToolEntry, result: mcp_types.CallToolResult) -> ToolError:
    """The :class:`~mcp_client.ToolError` of a result flagged ``isError``, naming its tool."""
    text = result_text(result) or "no details"
    error = ToolError(text, result=result, method="tools/call")
    error.about_tool(entry.tool.name, entry.tool.annotations)
    return error


def error_text(error: BaseException) -> str:
    """What a model reads for a failed call: ``for_model`` of mcp_client's errors, the message of others."""
    error = sole_error(error)
    if isinstance(error, MCPClientError):
        return error.for_model
    return f"The tool could not be called: {error}"
