"""What crosses Temporal's boundary: activity names, the inputs the workflow side sends, and the checkpoint a call
heartbeats.

Everything here is plain data that both sides import: the workflow side inside Temporal's sandbox (so nothing here
does I/O or reads a clock), the worker side in its activities. Inputs name a server only by the name the worker's
plugin registered it under; URLs, commands and credentials stay on the worker and never enter workflow history.

The checkpoint is what a heartbeat carries and what the next attempt of an activity reads back from
``activity.info().heartbeat_details``: ``written`` (the request of a plain call may have reached the server) or
``task`` (the server made a task; its :class:`~mcp_client.protocol.tasks.TaskReference` as a JSON object), or
``unsent`` (a ``written`` withdrawn: the request surely never reached the server, so the next attempt may send it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["OPERATIONS", "Checkpoint", "RequestInput", "ToolCallInput", "activity_name"]

OPERATIONS = ("call_tool", "list_tools", "list_prompts", "get_prompt", "list_resources", "read_resource")
"""The MCP operations a workflow can run, one activity each per server."""


def activity_name(server: str, operation: str) -> str:
    """The activity type of ``operation`` on ``server``: ``mcp_client/<server>/<operation>``."""
    if operation not in OPERATIONS:
        raise ValueError(f"unknown MCP operation {operation!r}; one of {', '.join(OPERATIONS)}")
    return f"mcp_client/{server}/{operation}"


@dataclass(frozen=True)
class ToolCallInput:
    """A ``tools/call`` as the workflow asks for it.

    Attributes:
        name: The tool.
        arguments: Its arguments (JSON; recorded in workflow history).
        idle: The policy's idle limit in seconds (None: none).
        maximum: The policy's hard maximum in seconds, counted from when the activity was first scheduled, over
            every attempt.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    idle: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class RequestInput:
    """Any other operation: its name or URI and arguments where it has them, and the policy's limits."""

    name: str | None = None
    uri: str | None = None
    arguments: dict[str, str] | None = None
    idle: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Checkpoint:
    """What a call's heartbeat carries, so that the next attempt knows what the last one did.

    Attributes:
        phase: ``"written"``: the request may have reached the server (a plain call); ``"task"``: the server made
            the task in ``task``; ``"unsent"``: an earlier ``written`` withdrawn, the request surely never left.
        task: The task's :meth:`TaskReference.to_dict() <mcp_client.protocol.tasks.TaskReference.to_dict>`.
    """

    phase: Literal["written", "task", "unsent"]
    task: dict[str, Any] | None = None

    def to_details(self) -> dict[str, Any]:
        """The heartbeat detail (a JSON object, whatever data converter the client has)."""
        return {"phase": self.phase, "task": self.task} if self.task is not None else {"phase": self.phase}

    @classmethod
    def from_details(cls, details: Any) -> Checkpoint | None:
        """The checkpoint of the last attempt's heartbeat details, or None when it recorded none or withdrew it
        (one this version cannot read is taken as no checkpoint only if it has no phase at all)."""
        if not details:
            return None
        first = details[0]
        if not isinstance(first, dict) or "phase" not in first:
            return None
        phase = first["phase"]
        task = first.get("task")
        if phase == "task" and isinstance(task, dict):
            return cls("task", task)
        if phase == "unsent":
            return None  # the last attempt withdrew its "written": nothing reached the server
        # Anything else that names a phase counts as "written": when in doubt, the call may have run.
        return cls("written")
