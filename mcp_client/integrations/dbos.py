"""Durable MCP calls on DBOS (the ``dbos`` extra): :func:`call_tool`, a ``tools/call`` as a DBOS step that a crash
never runs twice when its tool is not safe to repeat.

DBOS records a step's result when the step returns; a process that dies during a step runs the step again when
its workflow is recovered: at least once. So before its request can leave, the step records that it may have
written it: a workflow event ``mcp_client.call.<step id>``, committed to DBOS's system database from inside the
step (``DBOS.set_event_async``). The step's id is its place in the workflow, the same when the workflow is
recovered, so the step that runs again reads what the lost one recorded:

* ``task``: the server made a task of the call (its reference, recorded once the server answered): the step
  resumes it (``client.resume``) and never calls the tool again;
* ``written``: the request may have reached the server; the tool is called again only if it is safe to repeat
  (``idempotentHint``/``readOnlyHint``, or the client's policy rules), else the step fails with
  :class:`ProcessLost`, whose ``for_model`` says the tool may have run;
* nothing: the request never left, so it is made now.

Whatever fails in a step that runs again after a loss (the listing it reads the annotations from, a resumed task,
the call made again) says the tool may have run: the lost run may have sent the request.

The call runs under the client's policy as any other (idle timeout reset by progress, the maximum, cancellation
on the wire). Steps run in the workflow's own process, so the client is the caller's, connected as usual. A failed
call is the step's recorded outcome: its typed error, raised again when the workflow is recovered after the step
ended. Touches the public client and DBOS's public API only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types
from dbos import DBOS

from mcp_client.client.client import Client
from mcp_client.client.task_reference import TaskReference
from mcp_client.errors import MCPClientError, TransportError
from mcp_client.group import ClientGroup

__all__ = ["EVENT_PREFIX", "ProcessLost", "call_tool", "in_workflow"]

EVENT_PREFIX = "mcp_client.call."
"""The workflow events a call step records its checkpoint under: ``mcp_client.call.<step id>``."""


class ProcessLost(TransportError):
    """The process that ran this call step before was lost (killed, crashed) after its request may have reached the
    server, and the tool is not safe to repeat (or the task it made cannot be resumed here): it may have run, so it
    is not called again.

    A :class:`~mcp_client.TransportError` with ``written=True``: ``for_model`` says the tool may have run."""

    def __init__(self, tool: str, annotations: mcp_types.ToolAnnotations | None, *, reason: str | None = None) -> None:
        super().__init__(
            reason
            or "the process that ran this step before was lost after it sent the request, and the tool is not marked "
            "idempotent, so it was not sent again",
            written=True,
            method="tools/call",
        )
        self.about_tool(tool, annotations)


def in_workflow() -> bool:
    """Whether the caller is DBOS workflow code (in a workflow, not inside one of its steps)."""
    return DBOS.workflow_id is not None and DBOS.step_id is None


async def call_tool(
    source: Client | ClientGroup, name: str, arguments: Mapping[str, Any] | None = None
) -> mcp_types.CallToolResult:
    """Call ``name`` (``server/tool`` for a group) as one DBOS step of the calling workflow; outside a workflow, a
    plain call. An ``isError`` result is a result.

    Raises:
        ProcessLost: An earlier run of this step may have sent the request, and the tool is not safe to repeat.
        MCPClientError: The call failed (DBOS records it as the step's outcome).
    """
    return await _call_tool_step(source, name, dict(arguments or {}))


@DBOS.step(name="mcp_client.call_tool", preemptible=True)
async def _call_tool_step(
    source: Client | ClientGroup, name: str, arguments: dict[str, Any]
) -> mcp_types.CallToolResult:
    workflow_id, step_id = DBOS.workflow_id, DBOS.step_id
    if workflow_id is None or step_id is None:  # called outside a workflow: DBOS runs the function as it is
        return await source.call_tool(name, arguments)
    client, tool = _client_of(source, name)
    key = f"{EVENT_PREFIX}{step_id}"
    last = (await DBOS.get_all_events_async(workflow_id)).get(key)
    try:
        if last is not None:
            resumed = await _after_loss(client, tool, last)
            if resumed is not None:
                return resumed
        await DBOS.set_event_async(key, {"phase": "written"})  # committed before the request exists
        call = client.tool_call(tool, arguments)
        async with call:
            reference = await call.handoff()
            if reference is not None:
                await DBOS.set_event_async(key, {"phase": "task", "task": reference.to_dict()})
            await call.wait()
        return call.outcome()
    except MCPClientError as exc:
        if last is not None:  # whatever failed now, the lost run may have sent the request: the tool may have run
            exc.may_have_run = True
        raise


async def _after_loss(client: Client, tool: str, last: Any) -> mcp_types.CallToolResult | None:
    """The step runs again after its process was lost: the task it made, resumed; None for a tool that is safe to
    call again. Raises ProcessLost for the rest."""
    if isinstance(last, dict) and last.get("phase") == "task" and isinstance(last.get("task"), dict):
        try:
            reference = TaskReference.from_dict(last["task"])
            client.check_reference(reference)
        except ValueError as exc:
            reason = f"the task this call made cannot be resumed here ({exc}); it may have run"
            raise ProcessLost(tool, await _annotations(client, tool), reason=reason) from exc
        return await client.resume(reference)
    annotations = await _annotations(client, tool)  # the annotations say what is safe
    if not _idempotent(client, tool):
        raise ProcessLost(tool, annotations)
    return None


async def _annotations(client: Client, tool: str) -> mcp_types.ToolAnnotations | None:
    """The tool's annotations as the server lists them now; None when it cannot be listed (then the tool counts as
    not safe to repeat unless the client's policy says it is)."""
    try:
        listed = {entry.name: entry for entry in await client.list_tools()}
    except MCPClientError:
        return None
    return listed[tool].annotations if tool in listed else None


def _client_of(source: Client | ClientGroup, name: str) -> tuple[Client, str]:
    """The client that serves ``name`` and the tool's own name (``server/tool`` for a group)."""
    if isinstance(source, Client):
        return source, name
    server, _, tool = name.partition("/")
    return source[server], tool


def _idempotent(client: Client, tool: str) -> bool:
    """The client's rule: the policy's ``idempotent`` where it says, else the tool's annotations."""
    retry = client.resolve(tool)[1]
    if retry is not None and retry.idempotent is not None:
        return retry.idempotent
    return client.is_idempotent(tool)
