"""OpenAI Agents SDK: :class:`MCPClientServer`, an ``agents.mcp.MCPServer`` backed by a Client.

```python
from agents import Agent, Runner
from mcp_client.integrations.openai_agents import MCPClientServer

async with Client(stdio("python", ["server.py"])) as client:
    agent = Agent(name="assistant", mcp_servers=[MCPClientServer(client)])
    result = await Runner.run(agent, "Reindex the docs collection")
```

``Agent(mcp_servers=[...])`` works unchanged: the SDK lists the tools and calls them through this server, and
every call runs under mcp_client's policy (idle timeout, maximum, retries, cancellation), with no timeout of the
SDK's own. A failed call comes back as a tool result flagged ``isError`` whose text is the error's ``for_model``
(a result the tool itself flagged ``isError`` gets that text too), so the model reads what happened, whether the
server was told to stop and whether the tool may have run. The client's connection is the caller's:
``connect()`` and ``cleanup()`` do not open or close it.

Needs the ``openai-agents`` extra (which brings the official ``mcp`` package the SDK is written against; its
``mcp.types`` are the same ``mcp_types`` models mcp_client uses). Uses the public API of Client only.
"""

from __future__ import annotations

from typing import Any

import mcp_types
from agents.mcp import MCPServer
from agents.run_context import RunContextWrapper

from mcp_client._typed import typed, typed_methods
from mcp_client.client.client import Client
from mcp_client.errors import MCPClientError
from mcp_client.integrations._tools import ToolEntry, ToolSource, error_text, tool_error

__all__ = ["MCPClientServer"]


class MCPClientServer(MCPServer):
    """An MCP server for the OpenAI Agents SDK, reached through a connected :class:`~mcp_client.Client`.

    Args:
        client: The client; keep it connected while agents use it.
        name: The server's name in the SDK's traces and errors (default: what the server calls itself).
        cache_tools_list: Keep the tool list after the first listing (``invalidate_tools_cache()`` drops it).
        **options: The SDK's own server options (``use_structured_content``, ``require_approval``,
            ``tool_input_guardrails``...), passed on to ``MCPServer``.
    """

    def __init__(
        self, client: Client, *, name: str | None = None, cache_tools_list: bool = True, **options: Any
    ) -> None:
        super().__init__(**options)
        if not isinstance(client, Client):
            raise TypeError(f"expected a connected Client, got {type(client).__name__}")
        self.client = client
        self._name = name
        self._source = ToolSource(client)
        self.cache_tools_list = cache_tools_list
        self._tools: list[mcp_types.Tool] | None = None

    @property
    def name(self) -> str:
        """The name given, else the server's own name, else ``"mcp_client"``."""
        if self._name is not None:
            return self._name
        try:
            info = self.client.server_info
        except RuntimeError:  # not connected
            info = None
        return info.name if info is not None else "mcp_client"

    async def connect(self) -> None:
        """Nothing to do: the client is connected by its owner (``async with Client(...)``)."""

    async def cleanup(self) -> None:
        """Nothing to do: the client is closed by its owner."""

    @property
    def cached_tools(self) -> list[mcp_types.Tool] | None:
        """The tools of the last listing, when the list is cached."""
        return self._tools

    def invalidate_tools_cache(self) -> None:
        """List the tools again at the next ``list_tools()``."""
        self._tools = None

    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: Any = None
    ) -> list[mcp_types.Tool]:
        """The server's tools (all pages), from the cache when it is on and filled."""
        if self._tools is not None and self.cache_tools_list:
            return self._tools
        tools = [entry.tool for entry in await self._source.list()]
        self._tools = tools if self.cache_tools_list else None
        return tools

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> mcp_types.CallToolResult:
        """Call the tool under mcp_client's policy; a failure is a result flagged ``isError`` with the outcome.

        ``meta`` (from the SDK's ``tool_meta_resolver``) is not sent: mcp_client's ``meta_hook`` owns ``_meta``.
        """
        entry = await self._entry(tool_name)
        try:
            with typed():
                result = await self._source.call(entry, arguments)
        except MCPClientError as exc:
            return _error_result(error_text(exc))
        if result.is_error:
            return _error_result(tool_error(entry, result).for_model)
        return result

    async def _entry(self, tool_name: str) -> ToolEntry:
        entries = await self._source.entries()
        entry = entries.get(tool_name)
        if entry is None:  # not listed (yet): call it by name, with no annotations known
            entry = ToolEntry(tool_name, mcp_types.Tool(name=tool_name, input_schema={"type": "object"}), tool_name)
        return entry

    async def list_prompts(self) -> mcp_types.ListPromptsResult:
        """The server's prompts (all pages)."""
        return mcp_types.ListPromptsResult(prompts=await self.client.list_prompts())

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> mcp_types.GetPromptResult:
        """A prompt, filled in with ``arguments``."""
        return await self.client.get_prompt(name, arguments)

    async def list_resources(self, cursor: str | None = None) -> mcp_types.ListResourcesResult:
        """The server's resources, all pages in one (``cursor`` is not needed: the client fetches every page)."""
        return mcp_types.ListResourcesResult(resources=await self.client.list_resources())

    async def read_resource(self, uri: str) -> mcp_types.ReadResourceResult:
        """Read a resource."""
        return await self.client.read_resource(uri)


typed_methods(MCPClientServer)  # the SDK's calls into the server: failures typed, never an exception group


def _error_result(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)
