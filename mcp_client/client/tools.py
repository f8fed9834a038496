"""``Client.call_tool``: the one path of a tool call, for ``call_tool`` and the ``tool_call`` handle alike (a mixin
of :class:`~mcp_client.Client`, kept in a module of its own; a handle's task awaits ``call_tool`` with what it
hands over in :data:`HANDED`).

A tool call asks for a task where the era and the tool say so (2025-11-25), sends ``tools/call`` under the call's
policies, learns the tool's ``x-mcp-header`` annotations again once when the server says its headers do not match
(only while the call surely did not run), goes on as the same call with the task phase when the server made a task
of it, checks the result against the tool's ``outputSchema``, and names the tool (and explains a missing tasks
extension) on every error, for ``for_model``. May touch the call room and the client's tool hints.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types

from mcp_client._types import JSONObject
from mcp_client.errors import HeaderMismatch, MCPClientError
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.policy.registry import RetryArg
from mcp_client.protocol.results import tool_params, tool_result
from mcp_client.session.inflight import RequestControl

if TYPE_CHECKING:
    from mcp_client.calls import CallRunner
    from mcp_client.calls.progress import ProgressCallback, ProgressSink
    from mcp_client.calls.tasks import TaskControl, TaskRunner
    from mcp_client.policy import TimeoutPolicy
    from mcp_client.policy.retry import RetryPolicy
    from mcp_client.protocol.logs import LogLevel
    from mcp_client.session.session import Session

__all__ = ["HANDED", "Handed", "Prepared", "ToolPath"]

Prepared = tuple["TimeoutPolicy", "RetryPolicy | None", "dict[str, str] | None"]
"""A call's timeout and retry policies and its tool headers, after the meta hook saw its params."""


@dataclass(frozen=True, slots=True)
class Handed:
    """What a ``tool_call`` handle hands the ``call_tool`` that runs its call: the call's start, its params (the
    meta hook saw them on the calling task), its prepared policies, the handle's progress stream, control and task
    record."""

    started_at: float
    params: JSONObject
    prepared: Prepared
    sink: ProgressSink
    control: RequestControl
    task: TaskControl


HANDED: ContextVar[Handed | None] = ContextVar("mcp_client.handed_tool_call", default=None)
"""Set by a handle's own task just before it awaits ``call_tool``, which takes it (and clears it, so nothing that
task starts later sees it)."""


class ToolPath:
    """``tools/call`` from the first request to the checked result (see the module documentation)."""

    _annotations: dict[str, mcp_types.ToolAnnotations | None]

    if TYPE_CHECKING:

        @property
        def session(self) -> Session: ...
        @property
        def _calls_runner(self) -> CallRunner: ...
        @property
        def _tasks(self) -> TaskRunner: ...
        @property
        def _sends_tool_headers(self) -> bool: ...
        def _prepare(self, method: str, params: JSONObject, timeout: TimeoutArg, retry: RetryArg) -> Prepared: ...
        def _stamp_log_level(self, params: JSONObject, level: LogLevel | None) -> None: ...
        def is_idempotent(self, tool: str) -> bool: ...
        def _check_pinned(self, name: str) -> None: ...
        async def _renew_session(self) -> None: ...
        async def _ask_for_task(self, name: str, params: JSONObject, timeout: TimeoutArg) -> bool: ...
        def _explained(self, error: MCPClientError) -> MCPClientError: ...
        def _checked(self, name: str, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult: ...
        async def list_tools(self, *, timeout: TimeoutArg = ..., cache: bool = ...) -> list[mcp_types.Tool]: ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        log_level: LogLevel | None = None,
    ) -> mcp_types.CallToolResult:
        """Call a tool and return its result.

        Args:
            name: The tool's name.
            arguments: Its arguments.
            timeout: This call's policy (omitted: the client's; ``None``: no limits; a number: the maximum).
            on_progress: Called with each accepted :class:`~mcp_client.Progress`, in order, one at a time; a
                sync or async callable. Updates coalesce if it is slow; none arrive after the result.
            raise_on_error: Raise :class:`~mcp_client.ToolError` when the tool reports ``isError``.
            retry: This call's :class:`~mcp_client.RetryPolicy` (omitted: a matching ``retry_rules`` entry, else
                the client's; ``None``: no retries). Only safe cases are ever retried: a request that never left,
                or a tool that ``list_tools()`` showed idempotent or read-only (or the policy declares so).
            log_level: Ask for the server's log messages of this call at this level and above (2026-07-28), as
                :class:`~mcp_client.ServerLog` events; at 2025-11-25 use :meth:`set_log_level`.

        Raises:
            IdleTimeout: The server showed no sign of life for ``idle`` seconds.
            MaxTimeout: The call's maximum passed.
            TransportError: The channel failed (``written`` says whether the request may have run).
            ServerError: The server answered with a JSON-RPC error.
            ProtocolError: The server broke the protocol.
            ToolError: The tool reported ``isError`` and ``raise_on_error`` is set.
            ToolChanged: ``pin_tools`` is on and the tool's definition changed since it was pinned (nothing sent).
            StructuredOutputError: The result breaks the tool's ``outputSchema``.
        """
        # (One frame for the whole call, handle or not: a call in flight holds little more than its frames.)
        handed = HANDED.get()
        if handed is None:
            started_at = self.session.clock()  # the maximum counts from here: nothing after this extends it
            self._check_pinned(name)  # (a handle checked before it started)
            params = tool_params(name, arguments)
            self._stamp_log_level(params, log_level)
            prepared: Prepared | None = None
            sink = control = task = None
        else:
            HANDED.set(None)
            started_at, params, prepared = handed.started_at, handed.params, handed.prepared
            sink, control, task = handed.sink, handed.control, handed.task
        try:
            asked = await self._ask_for_task(name, params, timeout)
            then = self._tasks.tool_phase(asked=asked, control=control, handle=task)
            relisted = False
            while True:  # (at most twice; no iterator held for the life of the call)
                policy, retry_policy, headers = prepared or self._prepare("tools/call", params, timeout, retry)
                prepared = None
                try:
                    result = await self._calls_runner.run(
                        "tools/call",
                        params,
                        policy=policy,
                        retry=retry_policy,
                        idempotent=retry_policy is not None and self.is_idempotent(name),  # (only retries ask)
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
                    relisted = True
                    continue
                return self._checked(name, tool_result(name, result, raise_on_error))
        except MCPClientError as exc:
            exc.about_tool(name, self._annotations.get(name))  # for exc.for_model
            explained = self._explained(exc)
            if explained is exc:
                raise
            raise explained from None
