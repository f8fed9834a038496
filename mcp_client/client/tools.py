"""``Client.call_tool`` and ``Client.tool_call``: the path of a tool call, for a plain call and a handle alike (a
mixin of :class:`~mcp_client.Client`, kept in a module of its own).

A tool call asks for a task where the era and the tool say so (2025-11-25), sends ``tools/call`` with its
:class:`~mcp_client.calls.CallOptions` (made once, on the calling task, after the meta hook saw its params), learns
the tool's ``x-mcp-header`` annotations again once when the server says its headers do not match (only while the
call surely did not run), goes on as the same call with the task phase when the server made a task of it, checks
the result against the tool's ``outputSchema``, and names the tool (and explains a missing tasks extension) on
every error, for ``for_model``. May touch the call room and the client's tool hints.

A plain call is one frame of this module (``call_tool``) above the runner's; a handle's call is the handle's own
coroutine, which closes over what ``tool_call`` decided on the calling task (its params and options) and is given
the handle's start, progress stream, control and task record: the two share the steps below, not a channel.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio.abc
import mcp_types

from mcp_client._typed import sole_error, typed_inside
from mcp_client._types import JSONObject
from mcp_client.calls.options import CallOptions
from mcp_client.calls.scope import CallScope
from mcp_client.calls.tasks import TaskControl
from mcp_client.client.call import Call
from mcp_client.errors import HeaderMismatch, MCPClientError
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.policy.registry import RetryArg
from mcp_client.protocol.results import tool_params, tool_result
from mcp_client.session.inflight import RequestControl

if TYPE_CHECKING:
    from mcp_client.calls import CallRunner
    from mcp_client.calls.progress import ProgressCallback, ProgressSink
    from mcp_client.calls.tasks import TaskDriver
    from mcp_client.policy import TimeoutPolicy
    from mcp_client.policy.retry import RetryPolicy
    from mcp_client.protocol.logs import LogLevel
    from mcp_client.session.session import Session

__all__ = ["ToolPath"]

_LISTING = "the tools were listed to learn the tool's task support"
_RELISTING = "the tools were listed again after a header mismatch"


class ToolPath:
    """``tools/call`` from the first request to the checked result (see the module documentation)."""

    _annotations: dict[str, mcp_types.ToolAnnotations | None]
    _task_group: anyio.abc.TaskGroup | None
    _progress_interval: float | None
    _calls: weakref.WeakSet[Call[Any]]
    _plain_calls: int

    if TYPE_CHECKING:

        @property
        def session(self) -> Session: ...
        @property
        def _calls_runner(self) -> CallRunner: ...
        @property
        def _tasks(self) -> TaskDriver: ...
        @property
        def _sends_tool_headers(self) -> bool: ...
        def _call_options(
            self,
            method: str,
            params: JSONObject,
            timeout: TimeoutArg,
            retry: RetryArg,
            idempotent: bool | None = None,
        ) -> CallOptions: ...
        def _stamp_log_level(self, params: JSONObject, level: LogLevel | None) -> None: ...
        def is_idempotent(self, tool: str) -> bool: ...
        def _check_callable(self, name: str) -> None: ...
        def _must_learn_task_support(self, name: str) -> bool: ...
        def _ask_for_task(self, name: str, params: JSONObject, timeout: TimeoutArg) -> bool: ...
        def resolve(
            self, tool: str | None = None, *, timeout: TimeoutArg = ..., retry: RetryArg = ...
        ) -> tuple[TimeoutPolicy, RetryPolicy | None]: ...
        def _explained(self, error: MCPClientError) -> MCPClientError: ...
        def _checked(self, name: str, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult: ...
        async def list_tools(self, *, timeout: TimeoutArg = ..., cache: bool = ...) -> list[mcp_types.Tool]: ...
        @property
        def endpoint(self) -> str: ...

    @property
    def open_calls(self) -> int:
        """How many tool calls of this client have not ended: :meth:`call_tool` calls running and :meth:`tool_call`
        handles made and not ended (not started yet, running, detached), between a task's polls and in a retry's
        wait too, when no request of theirs is in flight. A host that stops an idle server (a ``ClientGroup`` with
        ``idle_stop``) counts these as use."""
        return self._plain_calls + sum(1 for call in self._calls if not call.done)

    @typed_inside
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
        # (One frame for the whole call: a call in flight holds little more than its frames.)
        started_at = self.session.clock()  # the maximum counts from here: nothing after this extends it
        self._check_callable(name)  # (before the listing below, too: a refused call sends nothing at all)
        params = tool_params(name, arguments)
        self._stamp_log_level(params, log_level)
        self._plain_calls += 1
        try:
            if self._must_learn_task_support(name):
                await self._for_call(name, timeout, started_at, _LISTING, lambda: self.list_tools(timeout=timeout))
            then = self._tasks.tool_phase(asked=self._ask_for_task(name, params, timeout), control=None, handle=None)
            options = self._call_options("tools/call", params, timeout, retry)  # (checks the pin: every send does)
            relisted = False
            while True:  # (at most twice)
                try:
                    result = await self._calls_runner.run(
                        "tools/call", params, options, started_at=started_at, on_progress=on_progress, then=then
                    )
                except HeaderMismatch as exc:
                    options = await self._relearn_headers(exc, relisted, params, timeout, retry, started_at)
                    relisted = True
                    continue
                return self._checked(name, tool_result(name, result, raise_on_error))
        except (MCPClientError, BaseExceptionGroup) as caught:
            failure = sole_error(caught)  # (the public boundary, in this frame: a group becomes its one typed error)
            if not isinstance(failure, MCPClientError):
                if failure is caught:
                    raise
                raise failure from caught
            explained = self._named(name, failure)
            if explained is caught:
                raise
            raise explained from (caught if explained is failure else None)
        finally:
            self._plain_calls -= 1

    def tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        log_level: LogLevel | None = None,
    ) -> Call[mcp_types.CallToolResult]:
        """A handle on a tool call for hosts: iterate its progress, cancel it from elsewhere, await its result.

        ```python
        async with client.tool_call("reindex", {"collection": "docs"}) as call:
            async for p in call.progress():
                print(p.progress, p.total, p.message)
            result = await call.result()
        ```
        Leaving the ``async with`` block before the call ended cancels it. ``log_level``: as for :meth:`call_tool`.
        """
        self._check_callable(name)
        params = tool_params(name, arguments)
        self._stamp_log_level(params, log_level)
        options = self._call_options("tools/call", params, timeout, retry)  # (the meta hook runs on the calling task)
        if self._task_group is None:
            raise RuntimeError("the client is not connected: use 'async with Client(...)'")
        handle = TaskControl()

        async def run(started_at: float, sink: ProgressSink, control: RequestControl) -> mcp_types.CallToolResult:
            # The same steps as call_tool, with the handle's start, progress stream, control and task record.
            nonlocal options
            try:
                if self._must_learn_task_support(name):
                    await self._for_call(name, timeout, started_at, _LISTING, lambda: self.list_tools(timeout=timeout))
                asked = self._ask_for_task(name, params, timeout)
                then = self._tasks.tool_phase(asked=asked, control=control, handle=handle)
                relisted = False
                while True:  # (at most twice)
                    try:
                        result = await self._calls_runner.run(
                            "tools/call",
                            params,
                            options,
                            started_at=started_at,
                            on_progress=on_progress,
                            sink=sink,
                            control=control,
                            then=then,
                        )
                    except HeaderMismatch as exc:
                        options = await self._relearn_headers(exc, relisted, params, timeout, retry, started_at)
                        relisted = True
                        continue
                    return self._checked(name, tool_result(name, result, raise_on_error))
            except MCPClientError as exc:
                explained = self._named(name, exc)
                if explained is exc:
                    raise
                raise explained from None

        call = Call(
            self._calls_runner,
            self._task_group,
            "tools/call",
            run,
            policy=options.policy,
            progress_interval=self._progress_interval,
            task=handle,
            endpoint=self.endpoint,  # for call.handoff()
            tool=name,
        )
        self._calls.add(call)
        return call

    async def _relearn_headers(
        self,
        error: HeaderMismatch,
        relisted: bool,
        params: JSONObject,
        timeout: TimeoutArg,
        retry: RetryArg,
        started_at: float,
    ) -> CallOptions:
        """The server said the call's ``Mcp-Param-*`` headers do not match: the tool's ``x-mcp-header`` annotations
        may have changed, so learn them again (once per call, inside its maximum) and return the options to send the
        call again with (made as every send's are: the pin is checked, so a tool whose listing changed meanwhile is
        refused with ``ToolChanged``); else raise ``error``. (Never when the call may have run: a task's poll was
        refused, not the tools/call.)"""
        if relisted or not self._sends_tool_headers or error.may_have_run:
            raise error
        name = params["name"]
        assert isinstance(name, str)
        await self._for_call(
            name, timeout, started_at, _RELISTING, lambda: self.list_tools(timeout=timeout, cache=False)
        )
        return self._call_options("tools/call", params, timeout, retry)

    async def _for_call(
        self, name: str, timeout: TimeoutArg, started_at: float, what: str, step: Callable[[], Awaitable[object]]
    ) -> None:
        """Run ``step``, done for the call of tool ``name`` that started at ``started_at`` before its request, inside
        the call's one maximum (:class:`~mcp_client.calls.scope.CallScope`): the one way a step of a tool call takes
        its time, so none runs under the client default or another budget of its own."""
        policy = self.resolve(name, timeout=timeout)[0]
        await CallScope("tools/call", policy, started_at=started_at, clock=self.session.clock).step(what, step)

    def _named(self, name: str, error: MCPClientError) -> MCPClientError:
        """``error`` with the tool named (for ``for_model``), or the error that explains it better."""
        error.about_tool(name, self._annotations.get(name))
        return self._explained(error)
