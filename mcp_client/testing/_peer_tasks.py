"""Tasks for the scripted MCP peer: a tool the peer always runs as a task, in either protocol era.

The ``task_work`` tool is answered with a task at once (2026-07-28: the ``io.modelcontextprotocol/tasks`` extension,
which the request must declare, else -32021; 2025-11-25: ``params.task`` must be present, else -32601). The task
then lives in :class:`PeerTasks` and is read with ``tasks/get``, answered with ``tasks/update``, fetched with
``tasks/result`` (2025-11-25; it waits until the task ends) and cancelled with ``tasks/cancel``.

Its arguments script what real servers will not do on demand:

* ``seconds`` (default 1): the task works that long, then ends with ``outcome`` (``"completed"`` or ``"failed"``).
* ``script``: instead of ``seconds``, a list of reports, one per ``tasks/get`` (the last one repeats): each
  ``{"status", "message"?, "updated"?: seconds after creation for lastUpdatedAt, "input"?: {key: request}}`` -
  a status that goes backwards, input keys repeated across polls.
* ``poll_interval_ms`` (default 100): the ``pollIntervalMs`` it advertises (a huge one too).
* ``expire_after``: seconds after which the task is forgotten (``tasks/get`` answers -32602).
* ``ignore_cancel``: acknowledge ``tasks/cancel`` and carry on.
* ``silent_cancel``: never answer ``tasks/cancel`` (and carry on).
* ``silent_polls_after``: answer that many ``tasks/get``, then no more (a server that hangs).
* ``notify_status``: when ``seconds`` are up, send ``notifications/tasks/status`` (``completed``) on the connection.
* ``garble_ids_after``: answer that many ``tasks/get`` as usual, then report the task under another id.
* ``poll_errors``: a list of JSON-RPC error codes: the first ``tasks/get`` requests are answered with them, in
  order (``-32020``: a header mismatch of a poll), then the task is reported as usual.

Time is read from ``anyio.current_time()``, so it runs under trio's ``MockClock``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio

from mcp_client.testing._peer_tools import INTERNAL_ERROR, INVALID_PARAMS, Era, JsonObject

__all__ = ["TASK_TOOLS", "TASKS_EXTENSION", "PeerTask", "PeerTasks", "TaskRequestError"]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
MISSING_CAPABILITY = -32021
METHOD_NOT_FOUND = -32601
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

TASK_TOOLS: tuple[JsonObject, ...] = (
    {
        "name": "task_work",
        "description": "Always runs as a task; its arguments script the task (seconds, script, poll_interval_ms...).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "seconds": {"type": "number"},
                "outcome": {"type": "string", "enum": ["completed", "failed"]},
                "script": {"type": "array"},
                "poll_interval_ms": {"type": "number"},
                "expire_after": {"type": "number"},
                "ignore_cancel": {"type": "boolean"},
                "silent_cancel": {"type": "boolean"},
                "silent_polls_after": {"type": "integer"},
                "poll_errors": {"type": "array"},
                "notify_status": {"type": "boolean"},
                "garble_ids_after": {"type": "integer"},
                "text": {"type": "string"},
            },
        },
        "execution": {"taskSupport": "required"},
        "annotations": {"readOnlyHint": False, "idempotentHint": False},
    },
)
_TASK_TOOL_NAMES = frozenset(tool["name"] for tool in TASK_TOOLS)


class TaskRequestError(Exception):
    """Answer the request with this JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass
class PeerTask:
    """One task the peer holds."""

    task_id: str
    era: Era
    created: float
    arguments: JsonObject
    status: str = "working"
    message: str | None = None
    polls: int = 0
    cancel_requests: int = 0
    input_responses: list[JsonObject] = field(default_factory=list)
    """The ``inputResponses`` of every ``tasks/update``, in order."""
    errors_sent: dict[str, int] = field(default_factory=dict)
    """How many scripted errors (``poll_errors``) each method was answered with so far."""
    ended: anyio.Event = field(default_factory=anyio.Event)

    @property
    def terminal(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")


class PeerTasks:
    """The tasks of one peer (shared by its connections: a task outlives the connection that made it)."""

    def __init__(self) -> None:
        self.tasks: dict[str, PeerTask] = {}
        self._next = 0

    @staticmethod
    def is_task_tool(name: object) -> bool:
        """Whether ``tools/call`` of ``name`` is answered with a task."""
        return name in _TASK_TOOL_NAMES

    def create(self, params: JsonObject, era: Era) -> JsonObject:
        """Answer ``tools/call`` of a task tool: a new task, in the era's shape."""
        if era == "modern":
            meta = params.get("_meta")
            capabilities = meta.get("io.modelcontextprotocol/clientCapabilities") if isinstance(meta, dict) else None
            extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
            if not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
                raise TaskRequestError(
                    MISSING_CAPABILITY,
                    f"this tool runs only as a task: declare the {TASKS_EXTENSION} extension",
                    {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                )
        elif not isinstance(params.get("task"), dict):
            raise TaskRequestError(METHOD_NOT_FOUND, "this tool requires task augmentation (params.task)")
        arguments = params.get("arguments")
        self._next += 1
        task = PeerTask(f"task-{self._next}", era, anyio.current_time(), dict(arguments or {}))
        self.tasks[task.task_id] = task
        self._advance(task, polled=False)
        shaped = self._shape(task, detailed=False)
        if era == "modern":
            return {**shaped, "resultType": "task"}
        return {"task": shaped}

    async def handle(self, method: str, params: JsonObject) -> JsonObject | None:
        """Answer one ``tasks/*`` request (None: never answer it). ``tasks/result`` may wait for the task's end."""
        task = self._find(params.get("taskId"))
        self._scripted_error(task, method)
        if method == "tasks/get":
            silent_after = task.arguments.get("silent_polls_after")
            if isinstance(silent_after, int) and task.polls >= silent_after:
                return None
            self._advance(task, polled=True)
            shaped = self._shape(task, detailed=True)
            garble_after = task.arguments.get("garble_ids_after")
            if isinstance(garble_after, int) and task.polls > garble_after:
                shaped["taskId"] = f"{task.task_id}-garbled"
            return shaped
        if method == "tasks/update":
            responses = params.get("inputResponses")
            task.input_responses.append(dict(responses) if isinstance(responses, dict) else {})
            return {}
        if method == "tasks/cancel":
            task.cancel_requests += 1
            if task.arguments.get("silent_cancel"):
                return None
            self._advance(task, polled=False)
            if task.terminal and task.era == "legacy":
                raise TaskRequestError(INVALID_PARAMS, f"task {task.task_id} already ended ({task.status})")
            if not task.arguments.get("ignore_cancel") and not task.terminal:
                self._end(task, "cancelled", "cancelled by the client")
            return {} if task.era == "modern" else self._shape(task, detailed=False)
        if method == "tasks/result" and task.era == "legacy":
            while not task.terminal:
                with anyio.move_on_after(0.05):
                    await task.ended.wait()
                self._advance(task, polled=False)
            if task.status == "failed":
                raise TaskRequestError(INTERNAL_ERROR, "the work failed")
            return self._result(task)
        raise TaskRequestError(METHOD_NOT_FOUND, f"method not found: {method}")

    @staticmethod
    def _scripted_error(task: PeerTask, method: str) -> None:
        """Raise the next scripted error of ``method`` for ``task``, if one is left."""
        codes = task.arguments.get("poll_errors") if method == "tasks/get" else None
        sent = task.errors_sent.get(method, 0)
        if isinstance(codes, list) and sent < len(codes):
            task.errors_sent[method] = sent + 1
            raise TaskRequestError(int(codes[sent]), f"scripted error {codes[sent]} for {method}")

    def _find(self, task_id: object) -> PeerTask:
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is not None:
            expire_after = task.arguments.get("expire_after")
            if isinstance(expire_after, int | float) and anyio.current_time() >= task.created + expire_after:
                del self.tasks[task.task_id]
                task = None
        if task is None:
            raise TaskRequestError(INVALID_PARAMS, f"unknown task: {task_id!r}")
        return task

    def _advance(self, task: PeerTask, *, polled: bool) -> None:
        """Move the task along its script or its clock."""
        if task.terminal:
            return
        script = task.arguments.get("script")
        if isinstance(script, list) and script:
            if polled:
                entry = script[min(task.polls, len(script) - 1)]
                task.polls += 1
                task.status = str(entry.get("status", "working"))
                task.message = entry.get("message")
                if task.terminal:
                    task.ended.set()
            return
        if polled:
            task.polls += 1
        seconds = task.arguments.get("seconds", 1.0)
        if anyio.current_time() >= task.created + float(seconds):
            outcome = task.arguments.get("outcome", "completed")
            self._end(task, "failed" if outcome == "failed" else "completed", None)

    def _end(self, task: PeerTask, status: str, message: str | None) -> None:
        task.status = status
        task.message = message
        task.ended.set()

    def _entry(self, task: PeerTask) -> JsonObject:
        script = task.arguments.get("script")
        if isinstance(script, list) and script and task.polls:
            entry = script[min(task.polls, len(script)) - 1]
            return entry if isinstance(entry, dict) else {}
        return {}

    def _shape(self, task: PeerTask, *, detailed: bool) -> JsonObject:
        entry = self._entry(task)
        updated = entry.get("updated")
        offset = float(updated) if isinstance(updated, int | float) else anyio.current_time() - task.created
        interval = task.arguments.get("poll_interval_ms", 100)
        shaped: JsonObject = {
            "taskId": task.task_id,
            "status": task.status,
            "createdAt": _iso(0.0),
            "lastUpdatedAt": _iso(offset),
            ("ttlMs" if task.era == "modern" else "ttl"): 60_000,
            ("pollIntervalMs" if task.era == "modern" else "pollInterval"): interval,
        }
        if task.message is not None:
            shaped["statusMessage"] = task.message
        if not detailed or task.era == "legacy":
            return shaped
        if task.status == "input_required" and isinstance(entry.get("input"), dict):
            shaped["inputRequests"] = entry["input"]
        elif task.status == "completed":
            shaped["result"] = self._result(task)
        elif task.status == "failed":
            shaped["error"] = {"code": INTERNAL_ERROR, "message": "the work failed"}
        return shaped

    def _result(self, task: PeerTask) -> JsonObject:
        text = f"task done: {task.arguments.get('text', 'ok')}"
        return {"content": [{"type": "text", "text": text}], "isError": False}


def _iso(seconds: float) -> str:
    return (_EPOCH + timedelta(seconds=seconds)).isoformat()
