"""The tools of an MCP server on Temporal workers, for an :class:`MCPToolset` that runs in a workflow.

Inside a workflow (pydantic-ai's ``TemporalDurability``), :class:`MCPToolset` over an
:class:`~mcp_client.integrations.temporal.MCPWorkflowClient` runs no I/O of its own: it lists the tools and calls
them through that client, so each ``tools/call`` is the ``mcp_client/<server>/call_tool`` activity that the
worker's ``MCPPlugin`` registered, with its guarantees (the checkpoint heartbeated before the request leaves,
a task resumed by the next attempt, a plain call that may have run never repeated unless it is safe, progress as the
heartbeat, a cancelled workflow cancelling the call on the server). pydantic-ai leaves such a toolset unwrapped:
its calls run in workflow code, which only schedules those activities.

The tools are listed (one ``list_tools`` activity) each time the agent asks, never kept on the toolset: a toolset
built at import time is shared by every workflow of the worker, and a workflow's history must not depend on what
an earlier one listed. Deterministic and sandbox-safe: it touches ``temporalio.workflow`` (through the client),
Temporal's exception types and the shared adapter helpers only.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import ModelRetry
from pydantic_ai.toolsets import ToolsetTool
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError as TemporalTimeout

from mcp_client.integrations._tools import ToolEntry
from mcp_client.integrations.pydantic_ai.results import entry_of, for_agent
from mcp_client.integrations.temporal.workflow import MCPWorkflowClient

__all__ = ["WorkflowTools"]


class WorkflowTools:
    """The tools of the server an :class:`MCPWorkflowClient` names, listed and called as activities."""

    def __init__(self, client: MCPWorkflowClient) -> None:
        self.client = client

    async def entries(self) -> dict[str, ToolEntry]:
        """The server's tools by name (one ``list_tools`` activity).

        Raises:
            RuntimeError: This is not a Temporal workflow (the agent runs outside one).
        """
        _in_workflow()
        return {tool.name: ToolEntry(tool.name, tool, tool.name) for tool in await self.client.list_tools()}

    async def call(self, tool: ToolsetTool[Any], arguments: dict[str, Any]) -> Any:
        """Run the ``call_tool`` activity; its result, or its failure as the model reads it."""
        _in_workflow()
        entry = entry_of(tool)
        try:
            result = await self.client.call_tool(entry.target, arguments)
        except ActivityError as exc:
            return _failure(entry, exc)
        return for_agent(entry, result)


def _in_workflow() -> None:
    if not workflow.in_workflow():
        raise RuntimeError(
            "an MCPToolset over an MCPWorkflowClient runs only in a Temporal workflow (its calls are activities); "
            "outside one, give the agent an MCPToolset over a connected Client"
        )


def _failure(entry: ToolEntry, error: ActivityError) -> str:
    """The activity's failure for the model: the worker's ``for_model`` text (a retry prompt for arguments the
    server refused) when the failure is mcp_client's typed one; anything else (a Temporal timeout, an exception the
    worker did not type) says the tool may have run, in words of its own: an untyped exception's text may hold
    what the worker knows and the model must not (an address, a credential)."""
    cause = error.cause
    if isinstance(cause, ApplicationError) and _from_mcp_client(cause):
        if cause.type == "InvalidParams":
            raise ModelRetry(cause.message) from error
        return cause.message
    if isinstance(cause, ApplicationError):  # an exception of the worker's: its text is not for the model
        return (
            f"The call to the tool {entry.tool.name!r} failed on its Temporal worker ({cause.type or 'an error'}); "
            "it may have run, in part or in full: check its effects before calling it again."
        )
    if isinstance(cause, TemporalTimeout):
        kind = cause.type.name.lower() if cause.type is not None else "timeout"
        return (
            f"The call to the tool {entry.tool.name!r} ran out of time on Temporal ({kind}); "
            "it may have run, in part or in full: check its effects before calling it again."
        )
    return (
        f"The call to the tool {entry.tool.name!r} failed on Temporal ({cause or error}); it may have run, in part "
        "or in full: check its effects before calling it again."
    )


def _from_mcp_client(failure: ApplicationError) -> bool:
    """Whether the worker's mcp_client activity made this failure: its details say whether the tool may have run."""
    details = failure.details
    return bool(details) and isinstance(details[0], dict) and "may_have_run" in details[0]
