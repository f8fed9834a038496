"""The workflow side: :class:`MCPWorkflowClient`, MCP operations as activities, deterministic and sandbox-safe.

It only schedules activities (``workflow.execute_activity``) and reads no clock, file or socket: a workflow may
import it through ``workflow.unsafe.imports_passed_through()`` (the plugin also lets ``mcp_client`` and
``mcp_types`` through the sandbox). One MCP policy sets both clocks: the activity's schedule-to-close timeout is
the policy's maximum plus ``slack`` (the worker enforces the maximum itself, over every attempt), and its heartbeat
timeout is the worker's liveness (``heartbeat_timeout``).

Touches ``temporalio.workflow``, the policy values and this package's wire only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, TypeVar

import mcp_types
from temporalio import workflow
from temporalio.common import RetryPolicy

from mcp_client.integrations.temporal.wire import RequestInput, ToolCallInput, activity_name
from mcp_client.policy import DEFAULT_TIMEOUT, TimeoutPolicy
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg, UseClientDefault

__all__ = ["MCPWorkflowClient"]

ResultT = TypeVar("ResultT")


class MCPWorkflowClient:
    """The MCP server the worker's plugin registered as ``server``, called from a workflow.

    ```python
    builds = MCPWorkflowClient("builds", heartbeat_timeout=timedelta(seconds=30))
    result = await builds.call_tool("build", {"ref": "main"}, timeout=TimeoutPolicy(idle=60, maximum=3600))
    ```

    Args:
        server: The name the worker's :class:`~mcp_client.integrations.temporal.MCPPlugin` knows the server by.
        heartbeat_timeout: How soon a dead worker is noticed; the worker beats at least every third of it.
        timeout: The default MCP policy of every operation (idle and maximum; a number: the maximum).
        slack: Added to the policy's maximum for the activity's schedule-to-close timeout, so the worker's own
            ``MaxTimeout`` (a typed failure) comes before Temporal's.
        task_queue: The task queue of the activities (default: the workflow's).
        retry_policy: Temporal's retry policy of the activities (default: Temporal's); failures that must not be
            retried are non-retryable whatever it says.
    """

    def __init__(
        self,
        server: str,
        *,
        heartbeat_timeout: timedelta = timedelta(seconds=30),
        timeout: TimeoutPolicy | float | None = DEFAULT_TIMEOUT,
        slack: timedelta = timedelta(seconds=10),
        task_queue: str | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        if heartbeat_timeout <= timedelta(0):
            raise ValueError(f"heartbeat_timeout must be positive, got {heartbeat_timeout}")
        self.server = server
        self.heartbeat_timeout = heartbeat_timeout
        self.timeout = _policy(timeout)
        self.slack = slack
        self.task_queue = task_queue
        self.retry_policy = retry_policy

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
    ) -> mcp_types.CallToolResult:
        """Call a tool on the worker under ``timeout`` (omitted: this client's; ``None``: no limits; a number: the
        maximum). An ``isError`` result is a result, not a failure.

        A task-backed call that survives its worker is resumed by the next attempt; a plain one that may have run
        is called again only if the tool is safe to repeat, else the activity fails non-retryably
        (``WorkerLost``). Cancelling the workflow cancels the call on the server."""
        policy = self.timeout if isinstance(timeout, UseClientDefault) else _policy(timeout)
        request = ToolCallInput(name, dict(arguments or {}), policy.idle, policy.maximum)
        return await self._run("call_tool", request, policy, mcp_types.CallToolResult)

    async def list_tools(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> list[mcp_types.Tool]:
        """Every tool of the server, all pages."""
        return await self._read("list_tools", RequestInput(), timeout, list[mcp_types.Tool])

    async def list_prompts(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> list[mcp_types.Prompt]:
        """Every prompt of the server, all pages."""
        return await self._read("list_prompts", RequestInput(), timeout, list[mcp_types.Prompt])

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT
    ) -> mcp_types.GetPromptResult:
        """A prompt, filled in with ``arguments``."""
        request = RequestInput(name=name, arguments=dict(arguments) if arguments is not None else None)
        return await self._read("get_prompt", request, timeout, mcp_types.GetPromptResult)

    async def list_resources(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> list[mcp_types.Resource]:
        """Every resource of the server, all pages."""
        return await self._read("list_resources", RequestInput(), timeout, list[mcp_types.Resource])

    async def read_resource(
        self, uri: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT
    ) -> mcp_types.ReadResourceResult:
        """Read a resource."""
        return await self._read("read_resource", RequestInput(uri=uri), timeout, mcp_types.ReadResourceResult)

    async def _read(self, operation: str, request: RequestInput, timeout: TimeoutArg, result: type[ResultT]) -> ResultT:
        policy = self.timeout if isinstance(timeout, UseClientDefault) else _policy(timeout)
        limited = RequestInput(request.name, request.uri, request.arguments, policy.idle, policy.maximum)
        return await self._run(operation, limited, policy, result)

    async def _run(self, operation: str, request: object, policy: TimeoutPolicy, result: type[ResultT]) -> ResultT:
        maximum = policy.maximum
        value: ResultT = await workflow.execute_activity(
            activity_name(self.server, operation),
            request,
            result_type=result,
            task_queue=self.task_queue,
            schedule_to_close_timeout=timedelta(seconds=maximum) + self.slack if maximum is not None else None,
            start_to_close_timeout=None if maximum is not None else _UNBOUNDED,
            heartbeat_timeout=self.heartbeat_timeout,
            retry_policy=self.retry_policy,
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        return value


_UNBOUNDED = timedelta(days=3650)
"""Temporal wants a start-to-close or a schedule-to-close timeout; a policy without a maximum gets this one (the
heartbeat timeout still notices a dead worker)."""


def _policy(timeout: TimeoutPolicy | float | None) -> TimeoutPolicy:
    if isinstance(timeout, TimeoutPolicy):
        return timeout
    if timeout is None:
        return TimeoutPolicy(idle=None, maximum=None)
    return TimeoutPolicy(maximum=float(timeout))
