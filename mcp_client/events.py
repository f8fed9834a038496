"""The typed event stream: what happened to each request, for hosts, tracing and the CLI's display.

Events are small frozen records handed to the ``on_event`` hook of a :class:`~mcp_client.Client` as they happen,
on the task that observed them. A hook must be quick and must not raise (an exception is logged and dropped);
hosts that need to do real work should hand events to a queue of their own. Nothing is built when no hook is set.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, TypeAlias

from mcp_client._types import RequestId
from mcp_client.errors import MCPClientError, TransportError
from mcp_client.policy.progress import Progress
from mcp_client.policy.timeout import TimeoutKind

__all__ = [
    "CancelMethod",
    "CancelSent",
    "Event",
    "IdleTimerReset",
    "LateMessage",
    "ProgressAccepted",
    "ProgressRejected",
    "ProtocolViolation",
    "Relistened",
    "RequestFinished",
    "RequestSent",
    "RetryScheduled",
    "ServerLog",
    "ServerNotification",
    "ServerRestarted",
    "ServerStderr",
    "Slow",
    "SlotWaited",
    "TaskCancelSent",
    "TaskCreated",
    "TaskStatus",
    "TimedOut",
    "ToolDefinitionChanged",
    "TransportFailure",
]


class CancelMethod(enum.Enum):
    """How a cancellation was put on the wire; it depends on the transport and the protocol era."""

    NOTIFICATION = "notification"
    """stdio (both eras): ``notifications/cancelled {requestId, reason}``."""
    STREAM_CLOSE = "stream close"
    """Streamable HTTP at 2026-07-28: the request's response stream was closed; no notification."""
    NOTIFICATION_AND_STREAM_CLOSE = "notification and stream close"
    """Streamable HTTP at 2025-11-25: the notification was POSTed and the stream closed."""


@dataclass(frozen=True, slots=True)
class RequestSent:
    """A request was written to the transport. ``attempt`` counts the tries of one call (and restarts at each
    input round); ``previous_request_id`` is the request of the same call sent before this one, if any."""

    request_id: RequestId
    method: str
    progress_token: str | None
    attempt: int = 1
    target: str | None = None
    """The tool or prompt name, or the resource URI, when the method has one."""
    previous_request_id: RequestId | None = None


@dataclass(frozen=True, slots=True)
class RequestFinished:
    """A call ended, one way or another. ``error`` is None when it returned a result or when the caller's own
    task was cancelled (``cancelled`` is then True)."""

    request_id: RequestId
    method: str
    elapsed: float
    error: MCPClientError | None
    cancelled: bool = False


@dataclass(frozen=True, slots=True)
class ProgressAccepted:
    """A progress notification passed validation; ``delivered`` is False when a retry had not yet caught up."""

    request_id: RequestId
    progress: Progress
    delivered: bool


@dataclass(frozen=True, slots=True)
class ProgressRejected:
    """A progress notification was refused: unknown token, not increasing, not a number. Never delivered."""

    request_id: RequestId | None
    progress_token: object
    value: object
    reason: str


@dataclass(frozen=True, slots=True)
class IdleTimerReset:
    """Accepted progress pushed the idle deadline of a request to ``idle_deadline`` (the client's clock)."""

    request_id: RequestId
    idle_deadline: float


@dataclass(frozen=True, slots=True)
class Slow:
    """A call passed its soft deadline (``notify_after``) and carries on."""

    request_id: RequestId
    method: str
    elapsed: float


@dataclass(frozen=True, slots=True)
class SlotWaited:
    """A call found every slot of ``max_in_flight`` taken and waited in line, from ``since`` (the client's clock)
    for ``waited`` seconds. ``admitted`` is False when it left the line without a slot (its maximum passed, it
    was cancelled): it was then never sent. A call that found a slot free reports nothing."""

    method: str
    since: float
    waited: float
    admitted: bool
    limit: int


@dataclass(frozen=True, slots=True)
class TimedOut:
    """A request ran out of time; its cancellation follows."""

    request_id: RequestId
    method: str
    kind: TimeoutKind
    elapsed: float


@dataclass(frozen=True, slots=True)
class CancelSent:
    """A cancellation was put on the wire."""

    request_id: RequestId
    how: CancelMethod
    reason: str | None


@dataclass(frozen=True, slots=True)
class LateMessage:
    """A response or progress arrived for a request that had already ended; it was dropped.

    ``late_by`` is the number of seconds since the request ended, when still remembered.
    """

    request_id: RequestId | None
    kind: str
    late_by: float | None
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """A call will be re-sent with a fresh id after ``delay`` seconds."""

    request_id: RequestId
    attempt: int
    delay: float
    cause: MCPClientError


@dataclass(frozen=True, slots=True)
class TransportFailure:
    """The transport failed, for one request (``request_id`` set) or for everything on it."""

    request_id: RequestId | None
    error: TransportError


@dataclass(frozen=True, slots=True)
class ServerRestarted:
    """A supervised stdio server died and a new process serves now (``stdio(..., restart=RestartPolicy())``).

    ``restarts`` counts the restarts of this client so far (1 for the first); ``delay`` is the jittered wait
    before this one; ``reason`` is why the previous process or the previous restart attempt failed."""

    restarts: int
    process_id: int | None
    previous_process_id: int | None
    delay: float
    reason: Exception | None


@dataclass(frozen=True, slots=True)
class ProtocolViolation:
    """The server sent something that is not a valid message, or not one it may send. It was dropped."""

    detail: str
    raw: bytes | dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ServerNotification:
    """A notification the session does not consume itself (list changed, log messages, ...)."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerLog:
    """A log message of the server (``notifications/message``).

    ``request_id`` is the request it belongs to: the one on whose response stream it came (Streamable HTTP), or
    at 2026-07-28 over stdio the only request in flight that asked for logs (servers log only for those). ``None``
    when it belongs to no request that can be told (a 2025-11-25 session-wide log).
    """

    level: str
    data: Any
    logger: str | None = None
    request_id: RequestId | None = None


@dataclass(frozen=True, slots=True)
class ServerStderr:
    """One line the server process wrote to its stderr (stdio only). Not an error by itself."""

    line: str


@dataclass(frozen=True, slots=True)
class TaskCreated:
    """The server runs a tool call as a task. Hosts persist ``task_id`` to resume it later (``task_result``)."""

    task_id: str
    tool: str | None
    ttl: float | None
    """Seconds the server keeps the task (and its result) from its creation, when it said."""


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """A task's status or status message changed, as seen by a poll (the first status included).

    ``backwards`` marks a report that would have moved the task back (out of a terminal status, or older than one
    already seen); it is reported and not followed.
    """

    task_id: str
    status: str
    status_message: str | None
    backwards: bool = False


@dataclass(frozen=True, slots=True)
class TaskCancelSent:
    """``tasks/cancel`` was sent for a task; ``acknowledged`` says whether the server answered it in time."""

    task_id: str
    reason: str | None
    acknowledged: bool


@dataclass(frozen=True, slots=True)
class Relistened:
    """A subscription dropped unexpectedly and is opened again: ``subscriptions/listen`` with a new id after
    ``delay`` seconds (2026-07-28). ``streak`` counts the drops in a row; ``cause`` is what ended the old one."""

    previous_id: RequestId | None
    delay: float
    streak: int
    cause: MCPClientError


@dataclass(frozen=True, slots=True)
class ToolDefinitionChanged:
    """A listing showed tool ``name`` with a definition other than the one pinned (first seen, loaded, or last
    accepted). ``changed`` names the fields that differ; ``before``/``after`` are the definitions (JSON, wire
    spelling) with their fingerprints. Reported once per new form; a tool that strict pins do not name is reported
    with an empty ``before`` and ``before_fingerprint``. See :mod:`mcp_client.client.tool_pins`."""

    name: str
    changed: tuple[str, ...]
    before: dict[str, Any]
    after: dict[str, Any]
    before_fingerprint: str
    after_fingerprint: str


Event: TypeAlias = (
    RequestSent
    | RequestFinished
    | ProgressAccepted
    | ProgressRejected
    | IdleTimerReset
    | Slow
    | SlotWaited
    | TimedOut
    | CancelSent
    | LateMessage
    | RetryScheduled
    | TransportFailure
    | ProtocolViolation
    | ServerNotification
    | ServerLog
    | ServerStderr
    | TaskCreated
    | TaskStatus
    | TaskCancelSent
    | Relistened
    | ServerRestarted
    | ToolDefinitionChanged
)
"""Any event of the stream."""
