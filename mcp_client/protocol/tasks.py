"""What a task looks like on the wire in each era, and the typed :class:`Task` hosts get.

* 2026-07-28, the ``io.modelcontextprotocol/tasks`` extension: a ``tools/call`` may be answered with a flattened
  ``CreateTaskResult`` (``resultType: "task"``, ``taskId``, ``status``, ``ttlMs``, ``pollIntervalMs``...);
  ``tasks/get`` answers a ``DetailedTask`` that inlines ``inputRequests``, ``result`` or ``error``.
* 2025-11-25, experimental core tasks: the client asks for a task (``params.task``); the answer nests the task
  (``{"task": {...}}``) and spells ``ttl`` and ``pollInterval``; the outcome comes from ``tasks/result``.

Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from mcp_client.errors import MissingClientCapability, ProtocolError
from mcp_client.policy.tasks import DEFAULT_POLL, PollPolicy, TaskState, server_interval

__all__ = [
    "TASKS_EXTENSION",
    "Task",
    "TaskPolicy",
    "creation_of",
    "declared_capabilities",
    "explain_missing_tasks",
    "task_of",
    "wants_task",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The 2026-07-28 extension id, declared in ``clientCapabilities.extensions``."""


@dataclass(frozen=True, slots=True)
class Task:
    """A task as the server last described it.

    Attributes:
        task_id: The server's id for the task; persist it to resume with ``client.task_result``.
        status: ``"working"``, ``"input_required"``, ``"completed"``, ``"failed"`` or ``"cancelled"``.
        status_message: The server's human-readable note on the status, if any.
        created_at: ISO 8601 creation time, as sent.
        last_updated_at: ISO 8601 time of the last change, as sent.
        ttl: Seconds the server keeps the task from its creation (None: no limit, or not said).
        poll_interval: Seconds the server suggests between polls, if it said.
        result: A completed task's result (2026-07-28 inlines it; None otherwise).
        error: A failed task's JSON-RPC error object (2026-07-28), if sent.
        input_requests: What an ``input_required`` task asks (2026-07-28), keyed by the server.
    """

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl: float | None = None
    poll_interval: float | None = None
    result: dict[str, Any] | None = field(default=None, repr=False)
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def terminal(self) -> bool:
        """True when the task has ended (completed, failed or cancelled)."""
        try:
            return TaskState(self.status).terminal
        except ValueError:
            return False


@dataclass(frozen=True, slots=True)
class TaskPolicy:
    """Whether and how tool calls run as tasks.

    Args:
        enabled: At 2026-07-28, declare the tasks extension on every request (the server then decides per call);
            at 2025-11-25, call tools whose ``execution.taskSupport`` is ``"required"`` as tasks. Off: neither
            (a server that requires tasks then fails the call with ``MissingClientCapability``).
        optional_tools: Names or globs of tools to call as tasks at 2025-11-25 when they merely allow it
            (``taskSupport: "optional"``). By default such tools are called normally.
        ttl: Seconds the server should keep a task it creates for us at 2025-11-25 (default: the call's maximum
            plus a minute, or an hour without a maximum).
        poll: How tasks are polled (:class:`~mcp_client.PollPolicy`): the server's interval with jitter and
            backoff up to a cap.
    """

    enabled: bool = True
    optional_tools: tuple[str, ...] = ()
    ttl: float | None = None
    poll: PollPolicy = DEFAULT_POLL

    def ttl_ms(self, maximum: float | None) -> int:
        """The ``params.task.ttl`` (milliseconds) for a call with this ``maximum``."""
        seconds = self.ttl if self.ttl is not None else (maximum + 60.0 if maximum is not None else 3600.0)
        return max(1, int(seconds * 1000))


def declared_capabilities(capabilities: dict[str, Any], policy: TaskPolicy) -> dict[str, Any]:
    """The client capabilities with the tasks extension declared (2026-07-28), unless tasks are off."""
    if not policy.enabled:
        return capabilities
    extensions = dict(capabilities.get("extensions") or {})
    extensions[TASKS_EXTENSION] = {}
    return {**capabilities, "extensions": extensions}


def wants_task(policy: TaskPolicy, tool: str, support: str | None) -> bool:
    """2025-11-25: call ``tool`` as a task? Always when it is ``"required"``; when ``"optional"``, if the policy
    names it; never when tasks are off or the tool forbids them (absent means forbidden)."""
    if not policy.enabled:
        return False
    if support == "required":
        return True
    return support == "optional" and any(fnmatchcase(tool, pattern) for pattern in policy.optional_tools)


def explain_missing_tasks(error: MissingClientCapability, policy: TaskPolicy) -> MissingClientCapability:
    """A ``-32021`` that asks for the tasks extension while tasks are off, said plainly (same type and data)."""
    required = error.required_capabilities
    extensions = required.get("extensions") if isinstance(required, dict) else None
    if policy.enabled or not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
        return error
    message = (
        f"the server runs this tool only as a task, which needs the {TASKS_EXTENSION} extension; "
        f"Client(tasks=False) left it out ({error.message})"
    )
    explained = MissingClientCapability(message, code=error.code, data=error.data)
    explained.with_context(method=error.method, request_ids=error.request_ids, elapsed=error.elapsed)
    explained.attempts = error.attempts
    return explained


def creation_of(result: dict[str, Any], *, modern: bool, asked: bool) -> Task | None:
    """The task a ``tools/call`` result created, or None when it is an ordinary result.

    At 2026-07-28 ``resultType: "task"`` says so; at 2025-11-25 a nested ``task`` in answer to a call that asked
    for one (``asked``).
    """
    if modern:
        return task_of(result, modern=True) if result.get("resultType") == "task" else None
    nested = result.get("task")
    if asked and isinstance(nested, dict):
        return task_of(nested, modern=False)
    return None


def task_of(raw: object, *, modern: bool) -> Task:
    """Read a ``Task`` (either era's spelling); anything malformed is a :class:`ProtocolError`."""
    if not isinstance(raw, dict):
        raise ProtocolError("a task is not an object")
    task_id = raw.get("taskId")
    status = raw.get("status")
    if not isinstance(task_id, str) or not task_id:
        raise ProtocolError("a task without a taskId")
    if not isinstance(status, str):
        raise ProtocolError(f"task {task_id!r} has no status")
    ttl = server_interval(raw.get("ttlMs" if modern else "ttl"))  # milliseconds in both eras
    interval = server_interval(raw.get("pollIntervalMs" if modern else "pollInterval"))
    message = raw.get("statusMessage")
    result = raw.get("result")
    error = raw.get("error")
    requests = raw.get("inputRequests")
    return Task(
        task_id=task_id,
        status=status,
        status_message=message if isinstance(message, str) else None,
        created_at=_text(raw.get("createdAt")),
        last_updated_at=_text(raw.get("lastUpdatedAt")),
        ttl=ttl,
        poll_interval=interval,
        result=result if isinstance(result, dict) else None,
        error=error if isinstance(error, dict) else None,
        input_requests=requests if isinstance(requests, dict) else None,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
