"""The client's share of task-backed tool calls, mixed into :class:`~mcp_client.Client`.

Which calls ask for a task (2025-11-25: the tool's ``execution.taskSupport`` from ``tools/list``, learnt once when
a server offers tasks and the tool was not listed yet; 2026-07-28: the server decides, the extension is declared on
every request), handing a call that became a task to the :class:`~mcp_client.calls.tasks.TaskDriver`, and the
public ``task_result``, ``get_task`` and ``cancel_task``. May touch the call room and the task model.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio.abc
import mcp_types

from mcp_client._types import JSONObject
from mcp_client.calls.in_flight_limit import for_a_call
from mcp_client.calls.runner import CallRunner
from mcp_client.calls.tasks import TaskDriver
from mcp_client.errors import MCPClientError, MissingClientCapability
from mcp_client.policy import TimeoutPolicy
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.protocol.results import tool_result
from mcp_client.protocol.tasks import (
    Task,
    TaskPolicy,
    declared_capabilities,
    explain_missing_tasks,
    wants_task,
)
from mcp_client.session.handlers import InputHandlers

if TYPE_CHECKING:
    from mcp_client.policy.registry import RetryArg
    from mcp_client.protocol.era import Era
    from mcp_client.session.session import Session

__all__ = ["TaskMethods", "TaskPolicy"]

_STATUS_NOTIFICATIONS = frozenset({"notifications/tasks/status", "notifications/tasks"})
"""2025-11-25's status notification, and 2026-07-28's (on a ``subscriptions/listen`` stream)."""


class TaskMethods:
    """Task-backed tool calls for :class:`~mcp_client.Client` (a mixin: the client provides the rest)."""

    tasks: TaskPolicy
    """Whether and how tool calls run as tasks."""
    _task_support: dict[str, str | None]
    _tools_listed: bool
    _task_driver: TaskDriver | None

    if TYPE_CHECKING:

        @property
        def session(self) -> Session: ...
        @property
        def era(self) -> Era: ...
        @property
        def server_capabilities(self) -> mcp_types.ServerCapabilities | None: ...
        def resolve(
            self, tool: str | None = None, *, timeout: TimeoutArg = ..., retry: RetryArg = ...
        ) -> tuple[TimeoutPolicy, object]: ...
        def resolve_timeout(self, timeout: TimeoutArg) -> TimeoutPolicy: ...
        async def list_tools(self, *, timeout: TimeoutArg = ...) -> list[mcp_types.Tool]: ...

    # -- public ---------------------------------------------------------------------------------------------------

    async def task_result(
        self, task_id: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, raise_on_error: bool = False
    ) -> mcp_types.CallToolResult:
        """Pick up a task by its id (from :class:`~mcp_client.TaskCreated` or ``call.task_id``) and poll it to its
        end under ``timeout``, as :meth:`call_tool` would have: its result, or its typed error.

        Works from any client of a server that still holds the task (over HTTP, a new process of the host too).

        Raises:
            TaskNotFound: The server does not know the id (never existed, or expired).
            TaskFailed: The task failed.
            RequestCancelled: The task was cancelled.
            MaxTimeout, IdleTimeout: The policy ran out (the task is then cancelled, as for any call).
        """
        started_at = self.session.clock()
        result = await self._tasks.result(task_id, policy=self.resolve_timeout(timeout), started_at=started_at)
        return tool_result(f"task {task_id}", result, raise_on_error)

    async def get_task(self, task_id: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> Task:
        """The task's current state (one ``tasks/get``). Raises :class:`~mcp_client.TaskNotFound` for an unknown or
        expired id."""
        return await self._tasks.get(task_id, policy=self.resolve_timeout(timeout))

    async def cancel_task(self, task_id: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Ask the server to cancel a task (``tasks/cancel``; cancellation is cooperative: the task may still end
        otherwise). Raises :class:`~mcp_client.TaskNotFound` for an unknown or expired (at 2025-11-25 also an
        already finished) task."""
        await self._tasks.cancel(task_id, policy=self.resolve_timeout(timeout))

    # -- for the client -------------------------------------------------------------------------------------------

    def _init_tasks(self, tasks: bool | TaskPolicy, capabilities: dict[str, Any]) -> dict[str, Any]:
        """Take the ``tasks=`` argument; return ``capabilities`` with the tasks extension declared (unless off)."""
        self.tasks = tasks if isinstance(tasks, TaskPolicy) else TaskPolicy(enabled=bool(tasks))
        self._task_support = {}
        self._tools_listed = False
        self._task_driver = None
        return declared_capabilities(capabilities, self.tasks)

    def _explained(self, error: MCPClientError) -> MCPClientError:
        """``error``, or, for a ``-32021`` that asks for the tasks extension while tasks are off, that said plainly.
        (A plain function the call's ``except`` calls, not a context manager held across the call's await.)"""
        if isinstance(error, MissingClientCapability):
            return explain_missing_tasks(error, self.tasks)
        return error

    def _connect_tasks(
        self,
        runner: CallRunner,
        task_group: anyio.abc.TaskGroup,
        handlers: InputHandlers,
        cancel_timeout: float,
        stack: AsyncExitStack,
    ) -> None:
        """Start driving tasks on ``runner``; closing ``stack`` first waits (bounded) for the ``tasks/cancel``
        requests still under way (it unwinds before the connection it was pushed after)."""
        task_driver = TaskDriver(
            runner,
            task_group=task_group,
            input_handler=for_a_call(handlers.handle) if handlers.any else None,  # (its calls take no slot)
            cancel_timeout=cancel_timeout,
            poll=self.tasks.poll,
        )
        self._task_driver = task_driver
        stack.push_async_callback(task_driver.drain, cancel_timeout)

    def _task_status_hint(self, method: str, params: JSONObject) -> None:
        """A task status notification wakes the poll of its task (it is never relied on: polling goes on)."""
        if method in _STATUS_NOTIFICATIONS and self._task_driver is not None:
            self._task_driver.status_hint(params)

    async def _close_tasks(self, reason: str, timeout: float) -> None:
        """Stop the task-backed calls under way, wherever they are awaited: each task gets its ``tasks/cancel``
        (unless its call was detached) while the connection still carries it."""
        if self._task_driver is not None:
            await self._task_driver.close(reason, timeout)

    def _learn_task_support(self, tools: list[mcp_types.Tool]) -> None:
        """Remember each listed tool's ``execution.taskSupport`` (2025-11-25), and that the tools were listed: a
        name missing from the listing is not listed again for every call of it."""
        self._task_support = {tool.name: tool.execution.task_support if tool.execution else None for tool in tools}
        self._tools_listed = True

    def _forget_task_support(self) -> None:
        """The server's tools changed (``list_changed``, or the cached listing was dropped): learn them again."""
        self._task_support = {}
        self._tools_listed = False

    @property
    def _tasks(self) -> TaskDriver:
        if self._task_driver is None:
            raise RuntimeError("the client is not connected: use 'async with Client(...)'")
        return self._task_driver

    def _must_learn_task_support(self, name: str) -> bool:
        """2025-11-25: whether the tools must be listed before a call of ``name`` (the server offers tasks and the
        tool was not listed yet); the call lists them inside its own maximum, then asks :meth:`_ask_for_task`."""
        if self.era.tasks_extension or not self.tasks.enabled:
            return False
        return not self._tools_listed and name not in self._task_support and _serves_tasks(self.server_capabilities)

    def _ask_for_task(self, name: str, params: JSONObject, timeout: TimeoutArg) -> bool:
        """2025-11-25: ask for a task (``params.task``) when the tool requires one, or allows one and the task
        policy names it (its support as the last listing said: see :meth:`_must_learn_task_support`). At
        2026-07-28 the server decides: nothing is added."""
        if self.era.tasks_extension or not self.tasks.enabled:
            return False
        if not wants_task(self.tasks, name, self._task_support.get(name)):
            return False
        params["task"] = {"ttl": self.tasks.ttl_ms(self.resolve(name, timeout=timeout)[0].maximum)}
        return True


def _serves_tasks(capabilities: mcp_types.ServerCapabilities | None) -> bool:
    """Whether the server declared task-backed tool calls (2025-11-25 ``tasks.requests.tools.call``)."""
    tasks = capabilities.tasks if capabilities is not None else None
    requests = tasks.requests if tasks is not None else None
    return requests is not None and requests.tools is not None and requests.tools.call is not None
