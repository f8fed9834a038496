"""The toolset: :class:`MCPToolset`, the tools of a Client, a ClientGroup or a Temporal workflow's MCP server as a
pydantic-ai toolset.

mcp_client's policy governs each call (idle timeout, maximum, retries, cancellation): the toolset sets no
timeout of the framework's own. A failed call, or a result flagged ``isError``, goes back to the model as the
tool's result, whose text is the error's ``for_model``: what happened, whether the server was told to stop,
whether the tool may have run (as the langchain and openai-agents adapters do). Only what the model can fix, the
arguments the server refused (``InvalidParams``), is a retry prompt (``ModelRetry``): a timeout or a dropped
connection is no mistake of the model's, and counting it against the tool's retries would end the run with
``UnexpectedModelBehavior`` after a few of them. With ``defer_slow=True``, a call still running at its policy's
``notify_after`` is detached and deferred (``CallDeferred``): the run ends with ``DeferredToolRequests``, the call
goes on in the background, and :meth:`MCPToolset.deferred_results` collects the results for the next run.

Where a call runs follows the run: in a DBOS workflow (pydantic-ai's ``DBOSDurability``) it is a DBOS step of
:mod:`mcp_client.integrations.dbos`; over an ``MCPWorkflowClient`` it is the worker's Temporal activity
(:mod:`.temporal`); anywhere else, a plain call. pydantic-ai wraps none of these: the toolset is no kind it
journals, and needs none. Uses the public API of Client and ClientGroup only.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types
import pydantic_core
from pydantic_ai import (
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
from mcp_client.errors import MCPClientError
from mcp_client.group import ClientGroup
from mcp_client.integrations._tools import ToolEntry, ToolSource
from mcp_client.integrations.pydantic_ai.results import entry_of, failure, for_agent

if TYPE_CHECKING:
    from mcp_client.integrations.pydantic_ai.temporal import WorkflowTools
    from mcp_client.integrations.temporal.workflow import MCPWorkflowClient

__all__ = ["MCPToolset"]

_ARGUMENTS = pydantic_core.SchemaValidator(
    pydantic_core.core_schema.dict_schema(
        pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema()
    )
)


class MCPToolset(AbstractToolset[Any]):
    """The tools of a connected :class:`~mcp_client.Client` or :class:`~mcp_client.ClientGroup`, or of a Temporal
    worker's MCP server, for an agent.

    In a DBOS workflow (pydantic-ai's ``DBOSDurability``), each call is a DBOS step that records, before its
    request leaves, that it may have run (:func:`mcp_client.integrations.dbos.call_tool`). Over an
    :class:`~mcp_client.integrations.temporal.MCPWorkflowClient`, for an agent run in a Temporal workflow
    (pydantic-ai's ``TemporalDurability``), each call is the worker's ``mcp_client/<server>/call_tool`` activity.

    Args:
        source: The client or group; keep it connected while the agent runs. The toolset does not close it. Or
            an ``MCPWorkflowClient``: then the agent must run in a Temporal workflow whose worker has the
            ``MCPPlugin`` that knows its server.
        id: The toolset's id among the agent's toolsets (pydantic-ai needs one for durable execution).
        max_retries: How many retry prompts a tool may get in a run (default: the agent's).
        defer_slow: Defer calls still running at their policy's ``notify_after`` (the agent's ``output_type``
            must then accept ``DeferredToolRequests``). Calls of a policy without ``notify_after`` never defer.
        separator: For a group, what joins server and tool in the names the model sees (``search__query``).
    """

    def __init__(
        self,
        source: Client | ClientGroup | MCPWorkflowClient,
        *,
        id: str | None = None,
        max_retries: int | None = None,
        defer_slow: bool = False,
        separator: str = "__",
    ) -> None:
        self._workflow = _workflow_tools(source)
        self._local = ToolSource(source, separator=separator) if self._workflow is None else None  # type: ignore[arg-type]
        if self._workflow is not None and defer_slow:
            raise ValueError("defer_slow needs a connected Client or ClientGroup, not a Temporal workflow's server")
        self._id = id
        self.max_retries = max_retries
        self.defer_slow = defer_slow
        self._deferred: dict[str, Call[mcp_types.CallToolResult]] = {}

    @property
    def id(self) -> str | None:
        """The id given to the constructor."""
        return self._id

    @property
    def _source(self) -> ToolSource:
        if self._local is None:
            raise RuntimeError("this toolset's server is a Temporal workflow's: it has no client in this process")
        return self._local

    async def refresh(self) -> None:
        """List the tools again (after ``notifications/tools/list_changed``, or a server that restarted); a Temporal
        workflow's toolset lists them each time the agent asks anyway."""
        if self._workflow is None:
            await self._source.list()

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The tools with their JSON schemas (listed once, then kept until :meth:`refresh`; in a Temporal workflow,
        listed by an activity each time)."""
        entries = await (self._workflow.entries() if self._workflow is not None else self._source.entries())
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
        if self._workflow is not None:
            return await self._workflow.call(tool, tool_args)
        if _in_dbos_workflow():
            # From the run's listing, not the toolset's: parallel calls reach their steps, whose ids are handed out
            # in that order, in the order they were made, in the run and in its recovery.
            entry = entry_of(tool)
            try:
                result = await _dbos_step(self._source, entry, tool_args)
            except MCPClientError as exc:
                return failure(exc)
            return for_agent(entry, result)
        entry = await self._source.entry(name)
        notify_after = self._source.policy(entry).notify_after
        try:
            if self.defer_slow and notify_after is not None and ctx.tool_call_id is not None:
                result = await self._call_or_defer(entry, tool_args, notify_after, ctx.tool_call_id)
            else:
                result = await self._source.call(entry, tool_args)
        except MCPClientError as exc:
            return failure(exc)
        return for_agent(entry, result)

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
                results.calls[part.tool_call_id] = for_agent(entry, await call.result())
            except MCPClientError as exc:
                exc.about_tool(entry.tool.name, entry.tool.annotations)
                try:
                    results.calls[part.tool_call_id] = failure(exc)
                except ModelRetry as retry:
                    results.calls[part.tool_call_id] = retry
        return results

    def cancel_deferred(self, reason: str = "the host gave up on the deferred call") -> None:
        """Cancel every deferred call not yet collected (the servers are told)."""
        for call in self._deferred.values():
            call.cancel(reason)
        self._deferred.clear()


def _workflow_tools(source: object) -> WorkflowTools | None:
    """The Temporal workflow side of ``source`` when it is an ``MCPWorkflowClient`` (only then is it imported)."""
    if "mcp_client.integrations.temporal.workflow" not in sys.modules:
        return None
    from mcp_client.integrations.temporal.workflow import MCPWorkflowClient

    if not isinstance(source, MCPWorkflowClient):
        return None
    from mcp_client.integrations.pydantic_ai.temporal import WorkflowTools

    return WorkflowTools(source)


def _in_dbos_workflow() -> bool:
    """Whether this is DBOS workflow code (DBOS is loaded only by a host that uses it)."""
    if "dbos" not in sys.modules:
        return False
    from mcp_client.integrations.dbos import in_workflow

    return in_workflow()


async def _dbos_step(source: ToolSource, entry: ToolEntry, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    """The call as a DBOS step of the running workflow; errors name the tool (for ``for_model``)."""
    from mcp_client.integrations.dbos import call_tool

    try:
        return await call_tool(source.source, entry.target, arguments)
    except MCPClientError as exc:
        exc.about_tool(entry.tool.name, entry.tool.annotations)
        raise
