"""pydantic-ai: :class:`MCPToolset`, the tools of a Client or a ClientGroup as a pydantic-ai toolset.

```python
from pydantic_ai import Agent
from mcp_client.integrations.pydantic_ai import MCPToolset

async with Client(stdio("python", ["server.py"])) as client:
    agent = Agent("openai:gpt-5", toolsets=[MCPToolset(client)])
    print((await agent.run("Reindex the docs collection")).output)
```

mcp_client's policy governs each call (idle timeout, maximum, retries, cancellation): the toolset sets no
timeout of the framework's own. A failed call, or a result flagged ``isError``, goes back to the model as the
tool's result, whose text is the error's ``for_model``: what happened, whether the server was told to stop,
whether the tool may have run (as the langchain and openai-agents adapters do). Only what the model can fix, the
arguments the server refused (``InvalidParams``), is a retry prompt (``ModelRetry``): a timeout or a dropped
connection is no mistake of the model's, and counting it against the tool's retries would end the run with
``UnexpectedModelBehavior`` after a few of them. With ``defer_slow=True``, a call still running at its policy's
``notify_after`` is detached and deferred (``CallDeferred``): the run ends with ``DeferredToolRequests``, the call
goes on in the background, and :meth:`MCPToolset.deferred_results` collects the results for the next run.

Needs the ``pydantic-ai`` extra (``pydantic-ai-slim``). Uses the public API of Client and ClientGroup only.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import anyio
import mcp_types
import pydantic_core
from pydantic_ai import (
    BinaryContent,
    CallDeferred,
    DeferredToolRequests,
    DeferredToolResults,
    ModelRetry,
    RunContext,
    ToolDefinition,
)
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from mcp_client.client.call import Call
from mcp_client.client.client import Client
from mcp_client.errors import InvalidParams, MCPClientError
from mcp_client.group import ClientGroup
from mcp_client.integrations._tools import ToolEntry, ToolSource, error_text, result_text, tool_error

__all__ = ["MCPToolset"]

_ARGUMENTS = pydantic_core.SchemaValidator(
    pydantic_core.core_schema.dict_schema(
        pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema()
    )
)


class MCPToolset(AbstractToolset[Any]):
    """The tools of a connected :class:`~mcp_client.Client` or :class:`~mcp_client.ClientGroup`, for an agent.

    Args:
        source: The client or group; keep it connected while the agent runs. The toolset does not close it.
        id: The toolset's id among the agent's toolsets (pydantic-ai needs one for durable execution).
        max_retries: How many retry prompts a tool may get in a run (default: the agent's).
        defer_slow: Defer calls still running at their policy's ``notify_after`` (the agent's ``output_type``
            must then accept ``DeferredToolRequests``). Calls of a policy without ``notify_after`` never defer.
        separator: For a group, what joins server and tool in the names the model sees (``search__query``).
    """

    def __init__(
        self,
        source: Client | ClientGroup,
        *,
        id: str | None = None,
        max_retries: int | None = None,
        defer_slow: bool = False,
        separator: str = "__",
    ) -> None:
        self._source = ToolSource(source, separator=separator)
        self._id = id
        self.max_retries = max_retries
        self.defer_slow = defer_slow
        self._deferred: dict[str, Call[mcp_types.CallToolResult]] = {}

    @property
    def id(self) -> str | None:
        """The id given to the constructor."""
        return self._id

    async def refresh(self) -> None:
        """List the tools again (after ``notifications/tools/list_changed``, or a server that restarted)."""
        await self._source.list()

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The tools with their JSON schemas (listed once, then kept until :meth:`refresh`)."""
        entries = await self._source.entries()
        return {name: self._toolset_tool(entry, ctx) for name, entry in entries.items()}

    def _toolset_tool(self, entry: ToolEntry, ctx: RunContext[Any]) -> ToolsetTool[Any]:
        annotations = entry.tool.annotations
        definition = ToolDefinition(
            name=entry.name,
            description=entry.description,
            parameters_json_schema=entry.input_schema,
            metadata={
                "mcp_tool": entry.target,
                "annotations": annotations.model_dump(by_alias=True, exclude_none=True) if annotations else None,
            },
            return_schema=dict(entry.tool.output_schema) if entry.tool.output_schema else None,
        )
        retries = self.max_retries if self.max_retries is not None else ctx.max_retries
        return ToolsetTool(toolset=self, tool_def=definition, max_retries=retries, args_validator=_ARGUMENTS)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Call the tool under mcp_client's policy.

        A failed call or a tool error is returned as the outcome for the model (its ``for_model`` text).

        Raises:
            ModelRetry: The server refused the arguments (``InvalidParams``): the model may fix them.
            CallDeferred: ``defer_slow`` is set and the call was still running at its ``notify_after``.
        """
        entry = await self._source.entry(name)
        notify_after = self._source.policy(entry).notify_after
        try:
            if self.defer_slow and notify_after is not None and ctx.tool_call_id is not None:
                result = await self._call_or_defer(entry, tool_args, notify_after, ctx.tool_call_id)
            else:
                result = await self._source.call(entry, tool_args)
        except MCPClientError as exc:
            return _failure(exc)
        return _for_agent(entry, result)

    async def _call_or_defer(
        self, entry: ToolEntry, arguments: dict[str, Any], notify_after: float, tool_call_id: str
    ) -> mcp_types.CallToolResult:
        await self._source.ready(entry)
        async with self._source.start(entry, arguments) as call:
            with anyio.move_on_after(notify_after):
                await call.wait()
            if not call.done:
                self._deferred[tool_call_id] = call.detach()
                raise CallDeferred(metadata={"mcp_tool": entry.target, "reason": "slow"})
            try:
                return await call.result()
            except MCPClientError as exc:
                exc.about_tool(entry.tool.name, entry.tool.annotations)
                raise

    @property
    def pending(self) -> list[str]:
        """The tool call ids of the deferred calls not yet collected by :meth:`deferred_results`."""
        return list(self._deferred)

    async def deferred_results(self, requests: DeferredToolRequests) -> DeferredToolResults:
        """Wait for the deferred calls of ``requests`` that this toolset runs; their results (or retry prompts
        with the outcome) for the next run's ``deferred_tool_results``. Each call still ends by its maximum."""
        results = DeferredToolResults()
        for part in requests.calls:
            call = self._deferred.pop(part.tool_call_id, None)
            if call is None:
                continue
            entry = await self._source.entry(part.tool_name)
            try:
                results.calls[part.tool_call_id] = _for_agent(entry, await call.result())
            except MCPClientError as exc:
                exc.about_tool(entry.tool.name, entry.tool.annotations)
                try:
                    results.calls[part.tool_call_id] = _failure(exc)
                except ModelRetry as retry:
                    results.calls[part.tool_call_id] = retry
        return results

    def cancel_deferred(self, reason: str = "the host gave up on the deferred call") -> None:
        """Cancel every deferred call not yet collected (the servers are told)."""
        for call in self._deferred.values():
            call.cancel(reason)
        self._deferred.clear()


def _failure(error: MCPClientError) -> str:
    """A failed call as the model reads it: the outcome as the tool's result, or a retry prompt when the model's
    arguments were refused."""
    if isinstance(error, InvalidParams):
        raise ModelRetry(error_text(error)) from error
    return error_text(error)


def _for_agent(entry: ToolEntry, result: mcp_types.CallToolResult) -> Any:
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
