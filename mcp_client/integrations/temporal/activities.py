"""The worker side: one Temporal activity per MCP operation per server, run on the worker's shared clients.

A ``tools/call`` activity runs the call under the MCP policy the workflow gave (idle reset by progress, the hard
maximum counted from when the activity was first scheduled, over every attempt) and heartbeats while it is in
flight. What the last attempt did comes back in ``activity.info().heartbeat_details``:

* a task: the server made it, so this attempt resumes it (``client.resume``) and never calls the tool again;
* ``written``: the request may have reached the server; the tool is called again only if it is safe to repeat
  (``idempotentHint``/``readOnlyHint``, or the worker client's policy rules), else the activity fails for good
  with :class:`~mcp_client.integrations.temporal.WorkerLost`;
* nothing: the call never left, so it is made now.

Cancelling the activity (the workflow cancelled it) cancels the call on the wire (``notifications/cancelled`` or
the stream closed for a plain call, ``tasks/cancel`` for a task). When the worker shuts down instead, a task is left
running for the next attempt to resume. Other operations are reads, safe to repeat, and need no checkpoint.

Touches the public client, the task reference, Temporal's ``activity`` module and this package's wire, heartbeat,
failures and connections.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import mcp_types
from temporalio import activity

from mcp_client.client.call import Call
from mcp_client.client.client import Client
from mcp_client.client.task_reference import TaskReference
from mcp_client.errors import ConnectError, MaxTimeout, MCPClientError, TransportError
from mcp_client.integrations.temporal.connections import Connection, Connections
from mcp_client.integrations.temporal.failures import WorkerLost, activity_failure, invalid_reference
from mcp_client.integrations.temporal.heartbeat import Heartbeat
from mcp_client.integrations.temporal.wire import Checkpoint, RequestInput, ToolCallInput, activity_name
from mcp_client.policy import TimeoutPolicy

__all__ = ["MCPActivities"]

ResultT = TypeVar("ResultT")

_CANCEL_WAIT = 5.0
"""Seconds a cancelled activity waits for its call to end (its wire cancel is then under way in the background)."""


def _policy(client: Client, tool: str | None, idle: float | None, maximum: float | None) -> TimeoutPolicy:
    """The worker client's policy for the call with the workflow's limits; the maximum is what is left of it since
    the activity was first scheduled (attempts and backoff count: nothing extends it)."""
    base = client.resolve(tool)[0]
    if maximum is not None:
        elapsed = (datetime.now(UTC) - activity.info().scheduled_time).total_seconds()
        maximum = maximum - max(0.0, elapsed)
        if maximum <= 0:
            raise MaxTimeout("the call's maximum passed before this attempt started", timeout=maximum + elapsed)
    return TimeoutPolicy(
        idle=idle,
        maximum=maximum,
        connect=base.connect,
        notify_after=base.notify_after,
        reset_on_any_message=base.reset_on_any_message,
        pause_maximum=base.pause_maximum,
        reset_on_log=base.reset_on_log,
    )


def _idempotent(client: Client, tool: str) -> bool:
    """The client's rule: the policy's ``idempotent`` where it says, else the tool's annotations."""
    retry = client.resolve(tool)[1]
    if retry is not None and retry.idempotent is not None:
        return retry.idempotent
    return client.is_idempotent(tool)


def _heartbeat_timeout() -> float | None:
    timeout = activity.info().heartbeat_timeout
    return timeout.total_seconds() if timeout else None


class MCPActivities:
    """The activities of every server of a plugin, over its :class:`Connections`."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections

    def definitions(self) -> list[Callable[..., Any]]:
        """Every activity, named by :func:`~mcp_client.integrations.temporal.wire.activity_name`."""
        definitions: list[Callable[..., Any]] = []
        for server in self.connections.factories:
            definitions.extend(self._for_server(server))
        return definitions

    def _for_server(self, server: str) -> list[Callable[..., Any]]:
        async def call_tool(request: ToolCallInput) -> mcp_types.CallToolResult:
            return await self.call_tool(server, request)

        async def list_tools(request: RequestInput) -> list[mcp_types.Tool]:
            return await self._read(server, request, lambda c, t: c.list_tools(timeout=t, cache=False))

        async def list_prompts(request: RequestInput) -> list[mcp_types.Prompt]:
            return await self._read(server, request, lambda c, t: c.list_prompts(timeout=t, cache=False))

        async def get_prompt(request: RequestInput) -> mcp_types.GetPromptResult:
            return await self._read(
                server, request, lambda c, t: c.get_prompt(request.name or "", request.arguments, timeout=t)
            )

        async def list_resources(request: RequestInput) -> list[mcp_types.Resource]:
            return await self._read(server, request, lambda c, t: c.list_resources(timeout=t, cache=False))

        async def read_resource(request: RequestInput) -> mcp_types.ReadResourceResult:
            return await self._read(
                server, request, lambda c, t: c.read_resource(request.uri or "", timeout=t, cache=False)
            )

        functions: list[Callable[..., Awaitable[Any]]] = [
            call_tool,
            list_tools,
            list_prompts,
            get_prompt,
            list_resources,
            read_resource,
        ]
        return [activity.defn(name=activity_name(server, f.__name__))(f) for f in functions]

    async def _read(
        self,
        server: str,
        request: RequestInput,
        operation: Callable[[Client, TimeoutPolicy], Awaitable[ResultT]],
    ) -> ResultT:
        """A read: no checkpoint, since repeating it is harmless; a retryable failure is retried by Temporal."""
        connection = await self._connect(server)
        beat = Heartbeat(activity.heartbeat, _heartbeat_timeout())
        try:
            policy = _policy(connection.client, None, request.idle, request.maximum)
            async with anyio.create_task_group() as beats:
                beats.start_soon(beat.run)
                try:
                    result = await operation(connection.client, policy)
                finally:
                    beats.cancel_scope.cancel()
            return result
        except MCPClientError as exc:
            self._after_failure(connection, exc)
            raise activity_failure(exc, idempotent=True) from exc

    async def call_tool(self, server: str, request: ToolCallInput) -> mcp_types.CallToolResult:
        """The ``tools/call`` activity of ``server`` (see the module's docstring)."""
        info = activity.info()
        last = Checkpoint.from_details(info.heartbeat_details)
        connection = await self._connect(server)
        client = connection.client
        idempotent = False
        try:
            tool = await connection.tool(request.name)
            idempotent = _idempotent(client, request.name)
            policy = _policy(client, request.name, request.idle, request.maximum)
            if last is not None and last.task is not None:
                try:
                    reference = TaskReference.from_dict(last.task)
                    client.check_reference(reference)
                except ValueError as exc:
                    raise invalid_reference(exc) from exc
                return await self._resume(client, reference, last, policy)
            if last is not None and not idempotent:
                # Annotations that call the tool safe would contradict the rule that said it is not.
                hints = tool.annotations if tool is not None and not client.is_idempotent(request.name) else None
                raise WorkerLost(request.name, hints, attempt=info.attempt)
            return await self._call(client, request, Heartbeat(activity.heartbeat, _heartbeat_timeout()), policy)
        except MCPClientError as exc:
            self._after_failure(connection, exc)
            raise activity_failure(exc, idempotent=idempotent) from exc

    async def _call(
        self, client: Client, request: ToolCallInput, beat: Heartbeat, policy: TimeoutPolicy
    ) -> mcp_types.CallToolResult:
        call = client.tool_call(request.name, request.arguments, timeout=policy, on_progress=beat.beat)
        beat.record(Checkpoint("written"))  # the attempt's first beat, sent at once, before the request leaves
        # Temporal encodes a beat in a task of its own, scheduled just now: let it run (it hands the beat to the
        # SDK's core without waiting on anything) before the call's task, which writes the request, even exists.
        await anyio.lowlevel.checkpoint()
        async with anyio.create_task_group() as beats:
            beats.start_soon(beat.run)
            call.start()
            try:
                reference = await call.handoff()
                if reference is not None:
                    beat.record(Checkpoint("task", reference.to_dict()))
                result = await call.result()
            except anyio.get_cancelled_exc_class():
                await _stop(call)
                raise
            finally:
                beats.cancel_scope.cancel()
        return result

    async def _resume(
        self, client: Client, reference: TaskReference, last: Checkpoint, policy: TimeoutPolicy
    ) -> mcp_types.CallToolResult:
        beat = Heartbeat(activity.heartbeat, _heartbeat_timeout())
        beat.record(last)  # first beat of this attempt: the next attempt still finds the task
        async with anyio.create_task_group() as beats:
            beats.start_soon(beat.run)
            try:
                result = await _resumed(client, reference, policy)
            finally:
                beats.cancel_scope.cancel()
        return result

    async def _connect(self, server: str) -> Connection:
        try:
            return await self.connections.get(server)
        except ConnectError as exc:
            raise activity_failure(exc, idempotent=False) from exc

    def _after_failure(self, connection: Connection, error: MCPClientError) -> None:
        """A connection that failed may be broken: the next activity starts a new one."""
        if isinstance(error, ConnectError | TransportError) and not isinstance(error, WorkerLost):
            self.connections.discard(connection)


async def _resumed(client: Client, reference: TaskReference, policy: TimeoutPolicy) -> mcp_types.CallToolResult:
    """Await the task; a cancelled activity sends ``tasks/cancel`` unless the worker is only shutting down."""
    return await client.resume(reference, timeout=policy, leave_running=_worker_leaving)


def _worker_leaving() -> bool:
    """Whether the activity is cancelled because this worker goes away (not because the workflow asked)."""
    details = activity.cancellation_details()
    return details is not None and (details.worker_shutdown or details.timed_out) and not details.cancel_requested


async def _stop(call: Call[Any]) -> None:
    """End the call because the activity was cancelled: cancel it on the wire, or, when only the worker is going
    away, leave its task running for the next attempt."""
    if _worker_leaving():
        call.detach()
        call.stop("the worker is shutting down")
    else:
        call.cancel("the workflow cancelled the call")
    with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_WAIT):
        await call.wait()
