"""The sans-IO core of a task-backed call: when to poll next, what a status report means, which input to answer.

A server that runs a tool as a *task* hands back a task id at once and the client polls for it. Three small pieces
of state decide what the poller does; each takes ``now`` (and a random source) from its caller and performs no
I/O, so it is tested on a fake clock:

* :class:`PollSchedule` - the wait before the next poll. It honours the server's ``pollIntervalMs`` (never polls
  sooner), adds jitter so many clients do not poll in step, backs off while nothing changes up to a cap (or the
  server's interval, if that is longer), goes back to the server's interval when the status moves, backs off
  separately after a failed poll, and never sleeps past the call's hard deadline.
* :class:`StatusTracker` - the task's status machine (``working``, ``input_required``, then one of the terminal
  ``completed``, ``failed``, ``cancelled``). A report that would move the task backwards (out of a terminal status,
  or older than one already seen by its ``lastUpdatedAt``) is reported as such and not followed.
* :class:`InputKeys` - input requests are keyed, and a key is unique over the task's life: a key answered (or being
  answered) is never answered again, however many polls repeat it.

Imports: the standard library and the package's one backoff (:mod:`.backoff`).
"""

from __future__ import annotations

import enum
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from mcp_client.policy.backoff import exponential_bound
from mcp_client.policy.seconds import check_seconds

__all__ = [
    "TERMINAL_STATUSES",
    "InputKeys",
    "PollPolicy",
    "PollSchedule",
    "StatusChange",
    "StatusTracker",
    "TaskState",
]


class TaskState(enum.Enum):
    """The statuses a task can be in (both protocol eras use the same five)."""

    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """True for ``completed``, ``failed`` and ``cancelled``: the task will not change again."""
        return self in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset({TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELLED})


def _check_seconds(name: str, value: float, *, allow_zero: bool = False) -> None:
    check_seconds(name, value, zero=allow_zero)


@dataclass(frozen=True, slots=True)
class PollPolicy:
    """How a task is polled. An immutable value.

    Args:
        default_interval: Seconds between polls when the server gives no ``pollIntervalMs``.
        min_interval: The shortest wait ever, whatever the server says (a server answering ``0`` cannot make the
            client spin).
        max_interval: The cap the backoff grows to while the status does not change. A server interval longer
            than this is still honoured.
        backoff: How much the wait grows per poll that saw no change (1 turns backoff off).
        jitter: The wait is stretched by a random fraction up to this (0.1: up to 10 % longer, never shorter).
        failure_backoff: Seconds before the first retry of a poll that failed on the transport; doubles per
            further failure, up to ``max_interval``.
    """

    default_interval: float = 1.0
    min_interval: float = 0.05
    max_interval: float = 30.0
    backoff: float = 1.5
    jitter: float = 0.1
    failure_backoff: float = 0.25

    def __post_init__(self) -> None:
        for name in ("default_interval", "min_interval", "max_interval", "failure_backoff"):
            _check_seconds(name, getattr(self, name))
        if not (isinstance(self.backoff, int | float) and self.backoff >= 1):
            raise ValueError(f"backoff must be >= 1, got {self.backoff!r}")
        if not (isinstance(self.jitter, int | float) and 0 <= self.jitter <= 1):
            raise ValueError(f"jitter must be between 0 and 1, got {self.jitter!r}")
        if self.min_interval > self.max_interval:
            raise ValueError("min_interval must not be above max_interval")

    def replace(self, **changes: Any) -> PollPolicy:
        """Return a copy with some fields changed."""
        return replace(self, **changes)


DEFAULT_POLL = PollPolicy()


def server_interval(poll_interval_ms: object) -> float | None:
    """A ``pollIntervalMs`` (2026-07-28) or ``pollInterval`` (2025-11-25, also milliseconds) in seconds; None
    when absent or not a usable number (negative, NaN, a boolean, a string)."""
    if isinstance(poll_interval_ms, bool) or not isinstance(poll_interval_ms, int | float):
        return None
    if math.isnan(poll_interval_ms) or poll_interval_ms < 0:
        return None
    return float(poll_interval_ms) / 1000.0


@dataclass(slots=True)
class PollSchedule:
    """When the next poll of one task goes out. Mutable; every method takes ``now``.

    Call :meth:`answered` after each answered poll (with the server's interval and whether the status moved) or
    :meth:`failed` after a poll that failed on the transport; then sleep until :meth:`next_poll_at`.
    """

    policy: PollPolicy = DEFAULT_POLL
    rng: random.Random = field(default_factory=random.Random)
    _server_interval: float | None = None
    _unchanged: int = 0
    _failures: int = 0
    _next_at: float = 0.0

    @property
    def base_interval(self) -> float:
        """The server's interval (floored at ``min_interval``), else the policy's default."""
        interval = self._server_interval if self._server_interval is not None else self.policy.default_interval
        return max(self.policy.min_interval, interval)

    @property
    def failures(self) -> int:
        """Polls that failed in a row."""
        return self._failures

    def answered(self, now: float, *, interval: float | None, changed: bool) -> float:
        """A poll was answered at ``now``; ``interval`` is the server's (seconds, None if it gave none), and
        ``changed`` whether the status or its message moved. Returns the absolute time of the next poll."""
        if interval is not None:
            self._server_interval = interval
        self._failures = 0
        self._unchanged = 0 if changed else self._unchanged + 1
        base = self.base_interval
        ceiling = max(base, self.policy.max_interval)
        wait = min(ceiling, base * self.policy.backoff**self._unchanged)
        self._next_at = now + self._jittered(wait)
        return self._next_at

    def failed(self, now: float) -> float:
        """A poll failed on the transport at ``now`` (a read: safe to send again). Returns the next poll's time."""
        self._failures += 1
        ceiling = max(self.base_interval, self.policy.max_interval)
        wait = exponential_bound(self._failures, initial=self.policy.failure_backoff, multiplier=2.0, cap=ceiling)
        self._next_at = now + self._jittered(wait)
        return self._next_at

    def next_poll_at(self, hard_deadline: float = math.inf) -> float:
        """When to poll next, never later than ``hard_deadline`` (a huge server interval cannot outlast the call)."""
        return min(self._next_at, hard_deadline)

    def _jittered(self, wait: float) -> float:
        # Jitter only ever lengthens the wait: the server's interval is a floor, never undercut.
        return wait * (1.0 + self.rng.random() * self.policy.jitter) if self.policy.jitter else wait


class StatusChange(enum.Enum):
    """What one status report meant to the tracker."""

    FIRST = "first"
    """The first status seen."""
    CHANGED = "changed"
    """The status or its message moved forward."""
    UNCHANGED = "unchanged"
    """Nothing new."""
    BACKWARDS = "backwards"
    """The report would move the task back (out of a terminal status, or older than what was seen): ignored."""
    INVALID = "invalid"
    """Not a status of the protocol: ignored."""


@dataclass(slots=True)
class StatusTracker:
    """The status machine of one task, fed with each report (poll answer, creation result, notification)."""

    status: TaskState | None = None
    message: str | None = None
    last_updated: datetime | None = None

    @property
    def terminal(self) -> bool:
        """True once a terminal status was followed."""
        return self.status is not None and self.status.terminal

    def observe(self, status: object, message: object = None, last_updated_at: object = None) -> StatusChange:
        """Judge one report; follow it unless it is invalid or goes backwards."""
        try:
            new = TaskState(status)
        except ValueError:
            return StatusChange.INVALID
        note = message if isinstance(message, str) else None
        stamp = _timestamp(last_updated_at)
        if self.status is None:
            self.status, self.message, self.last_updated = new, note, stamp
            return StatusChange.FIRST
        if self.status.terminal:
            return StatusChange.UNCHANGED if new is self.status else StatusChange.BACKWARDS
        if stamp is not None and self.last_updated is not None and _before(stamp, self.last_updated):
            return StatusChange.BACKWARDS
        if stamp is not None:
            self.last_updated = stamp
        if new is self.status and note == self.message:
            return StatusChange.UNCHANGED
        self.status, self.message = new, note
        return StatusChange.CHANGED


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _before(a: datetime, b: datetime) -> bool:
    try:
        return a < b
    except TypeError:  # one naive, one aware: not comparable, so not evidence of going backwards
        return False


@dataclass(slots=True)
class InputKeys:
    """Which input requests of a task still need an answer. A key is answered at most once over the task's life:
    an answer that could not be delivered is kept and sent again, never asked of the person twice."""

    _taken: set[str] = field(default_factory=set)
    _undelivered: dict[str, Any] = field(default_factory=dict)

    def fresh(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """The requests whose keys were never taken before; they are taken now (being answered)."""
        new = {key: request for key, request in requests.items() if key not in self._taken}
        self._taken.update(new)
        return new

    def hold(self, responses: Mapping[str, Any]) -> None:
        """These answers could not be delivered (``tasks/update`` failed on the transport): keep them to send again."""
        self._undelivered.update(responses)

    def to_resend(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """The kept answers to the requests the task still asks for (the others it no longer needs: dropped)."""
        self._undelivered = {key: answer for key, answer in self._undelivered.items() if key in requests}
        return dict(self._undelivered)

    def delivered(self) -> None:
        """The kept answers reached the server."""
        self._undelivered.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._taken
