"""The workflow the Temporal tests run: one MCP tool call through ``MCPWorkflowClient``, its text returned.

Imported by the tests (to start it) and by ``worker.py`` (to run it); sandbox-safe, and it imports the workflow side
as a host's workflow file would without ``imports_passed_through``: what the plugin lets through is what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import mcp_types
from temporalio import workflow
from temporalio.common import RetryPolicy

# No imports_passed_through(): the plugin's sandbox passthrough alone must let the workflow side in.
from mcp_client import TimeoutPolicy
from mcp_client.integrations.temporal import MCPWorkflowClient


@dataclass(frozen=True)
class ToolCall:
    """Which server and tool, with what, under which limits."""

    server: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    heartbeat_timeout: float = 2.0
    idle: float | None = 20.0
    maximum: float = 60.0
    retry_after: float | None = None
    """Temporal's first retry interval (None: Temporal's default, 1 s)."""


@workflow.defn
class CallToolWorkflow:
    """Call one tool; return the text of its result (``"error: ..."`` for an ``isError`` result)."""

    @workflow.run
    async def run(self, call: ToolCall) -> str:
        retry = RetryPolicy(initial_interval=timedelta(seconds=call.retry_after)) if call.retry_after else None
        server = MCPWorkflowClient(
            call.server, heartbeat_timeout=timedelta(seconds=call.heartbeat_timeout), retry_policy=retry
        )
        result = await server.call_tool(
            call.tool, call.arguments, timeout=TimeoutPolicy(idle=call.idle, maximum=call.maximum)
        )
        text = " ".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))
        return f"error: {text}" if result.is_error else text
