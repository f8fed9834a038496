"""The one path of a tool call, for ``Client.call_tool`` and the ``tool_call`` handle alike (a mixin of
:class:`~mcp_client.Client`, kept in a module of its own).

A tool call asks for a task where the era and the tool say so (2025-11-25), sends ``tools/call`` under the call's
policies, learns the tool's ``x-mcp-header`` annotations again once when the server says its headers do not match
(only while the call surely did not run), goes on as the same call with the task phase when the server made a task
of it, checks the result against the tool's ``outputSchema``, and names the tool (and explains a missing tasks
extension) on every error, for ``for_model``. May touch the call room and the client's tool hints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mcp_types

from mcp_client._results import tool_result
from mcp_client.calls.runner import Then
from mcp_client.errors import HeaderMismatch, MCPClientError
from mcp_client.inflight import RequestControl
from mcp_client.transports.base import JSONObject

if TYPE_CHECKING:
    from mcp_client.calls import CallRunner
    from mcp_client.calls.tasks import TaskControl, TaskRunner
    from mcp_client.policy import TimeoutPolicy
    from mcp_client.policy.defaults import TimeoutArg
    from mcp_client.policy.retry import RetryPolicy
    from mcp_client.progress import ProgressCallback, ProgressSink
    from mcp_client.registry import RetryArg

__all__ = ["Prepared", "ToolPath"]

Prepared = tuple["TimeoutPolicy", "RetryPolicy | None", "dict[str, str] | None"]
"""A call's timeout and retry policies and its tool headers, after the meta hook saw its params."""


class ToolPath:
    """``tools/call`` from the first request to the checked result (see the module documentation)."""

    _annotations: dict[str, mcp_types.ToolAnnotations | None]

    if TYPE_CHECKING:

        @property
        def _calls_runner(self) -> CallRunner: ...
        @property
        def _tasks(self) -> TaskRunner: ...
        @property
        def _sends_tool_headers(self) -> bool: ...
        def _prepare(self, method: str, params: JSONObject, timeout: TimeoutArg, retry: RetryArg) -> Prepared: ...
        def is_idempotent(self, tool: str) -> bool: ...
        async def _renew_session(self) -> None: ...
        async def _ask_for_task(self, name: str, params: JSONObject, timeout: TimeoutArg) -> bool: ...
        def _explained(self, error: MCPClientError) -> MCPClientError: ...
        def _checked(self, name: str, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult: ...
        async def list_tools(self, *, timeout: TimeoutArg = ..., cache: bool = ...) -> list[mcp_types.Tool]: ...

    async def _run_tool(
        self,
        name: str,
        params: JSONObject,
        timeout: TimeoutArg,
        retry: RetryArg,
        raise_on_error: bool,
        started_at: float,
        *,
        on_progress: ProgressCallback | None = None,
        sink: ProgressSink | None = None,
        control: RequestControl | None = None,
        handle: TaskControl | None = None,
        prepared: Prepared | None = None,
    ) -> mcp_types.CallToolResult:
        """The whole tool call; its checked result, or its typed error naming the tool."""
        own_control = control if control is not None else RequestControl()
        try:
            asked = await self._ask_for_task(name, params, timeout)
            then = self._tasks.tool_phase(name, asked=asked, control=own_control, handle=handle)
            result = await self._send_tool_call(
                name, params, timeout, retry, started_at, on_progress, sink, own_control, then, prepared
            )
            return self._checked(name, tool_result(name, result, raise_on_error))
        except MCPClientError as exc:
            exc.about_tool(name, self._annotations.get(name))  # for exc.for_model
            explained = self._explained(exc)
            if explained is exc:
                raise
            raise explained from None

    async def _send_tool_call(
        self,
        name: str,
        params: JSONObject,
        timeout: TimeoutArg,
        retry: RetryArg,
        started_at: float,
        on_progress: ProgressCallback | None,
        sink: ProgressSink | None,
        control: RequestControl,
        then: Then,
        prepared: Prepared | None,
    ) -> JSONObject:
        """``tools/call`` and its task phase, as one call of the runner; once more after learning the tool's headers
        again when the server refused them, which it may only while the call surely did not run."""
        for relisted in (False, True):
            if prepared is None:
                prepared = self._prepare("tools/call", params, timeout, retry)
            policy, retry_policy, headers = prepared
            prepared = None
            try:
                return await self._calls_runner.run(
                    "tools/call",
                    params,
                    policy=policy,
                    retry=retry_policy,
                    idempotent=self.is_idempotent(name),
                    headers=headers,
                    started_at=started_at,
                    on_progress=on_progress,
                    sink=sink,
                    control=control,
                    renew=self._renew_session,
                    then=then,
                )
            except HeaderMismatch as exc:
                if relisted or not self._sends_tool_headers or exc.may_have_run:
                    raise  # (may have run: a task's poll was refused, not the tools/call)
                # The tool's x-mcp-header annotations may have changed: learn them again and try once more.
                await self.list_tools(timeout=timeout, cache=False)
        raise AssertionError("unreachable")
