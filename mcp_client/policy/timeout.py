"""Timeout policy values and the per-request deadline state machine.

Theory of operation
-------------------
A request has up to three clocks, all measured on the caller's clock (``now`` is always passed in, never read
here, so this module is pure and is tested with a fake clock):

* **maximum** - a wall-clock promise to the caller, counted from the moment the call started (before connecting,
  queueing or writing). Nothing extends it. The caller's own enclosing deadline (an anyio cancel scope) caps it.
* **idle** - liveness of the peer for this request. It starts when the request has been written and is pushed
  forward by every *accepted* progress notification (and, if the policy says so, by any message for this request).
* **notify_after** - a soft deadline: passing it does not end the call, it only reports that the call is slow, once.

While the host is waiting on a person (an elicitation, sampling or roots question), the idle clock stops; the
maximum stops too only when the policy asks for it (``pause_maximum``). Pauses nest.

The shell (the session) asks :meth:`Deadline.next_wakeup` when to look again, sleeps until then (or until a
message arrives), and calls :meth:`Deadline.expired` / :meth:`Deadline.take_slow`. Progress arriving while it
sleeps only moves the idle deadline later, so the shell wakes, finds nothing expired and sleeps again: no timer
is rescheduled per notification.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, replace

from mcp_client.policy.seconds import check_seconds

__all__ = ["DEFAULT_TIMEOUT", "Deadline", "TimeoutKind", "TimeoutPolicy", "as_timeout_policy", "timeout_over"]


def _check_duration(name: str, value: float | None) -> None:
    check_seconds(name, value, infinite=True, none=True)


@dataclass(frozen=True, slots=True)
class TimeoutPolicy:
    """How long a request may take. An immutable value; ``None`` for a field means "no limit of this kind".

    Args:
        idle: Seconds without a sign of life (an accepted progress notification) before the request fails with
            :class:`~mcp_client.IdleTimeout`. Counted from when the request was written.
        maximum: Seconds from the start of the call after which it fails with :class:`~mcp_client.MaxTimeout`,
            whatever progress says. Spans connecting, every retry attempt and every input round.
        connect: Seconds allowed to bring the transport up (spawn + discover/initialize, or TCP/TLS + first reply).
        notify_after: Seconds after which a still-running call reports itself as slow (a ``Slow`` event) and
            carries on, so a host can move it to the background instead of killing it.
        reset_on_any_message: Let any message for this request (not only progress) reset the idle clock.
        reset_on_log: Let a log message of the server that belongs to this request (it came on the request's own
            response stream, see :class:`~mcp_client.ServerLog`) reset the idle clock. On by default: the server
            is working on this very call, and the maximum still bounds it.
        pause_maximum: Stop the maximum clock too while waiting on a person. Off by default: the maximum is a
            promise to the caller.
    """

    idle: float | None = 60.0
    maximum: float | None = 600.0
    connect: float | None = 30.0
    notify_after: float | None = None
    reset_on_any_message: bool = False
    pause_maximum: bool = False
    reset_on_log: bool = True

    def __post_init__(self) -> None:
        for name in ("idle", "maximum", "connect", "notify_after"):
            _check_duration(name, getattr(self, name))

    def replace(self, **changes: float | bool | None) -> TimeoutPolicy:
        """Return a copy with some fields changed, e.g. ``policy.replace(idle=5)``."""
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def unlimited(cls) -> TimeoutPolicy:
        """A policy with no limits at all (what ``timeout=None`` means for a call)."""
        return cls(idle=None, maximum=None, connect=None, notify_after=None)


DEFAULT_TIMEOUT = TimeoutPolicy()
"""The client's policy when none is given: 60 s idle, 600 s maximum, 30 s to connect."""


def timeout_over(base: TimeoutPolicy, timeout: TimeoutPolicy | float | None) -> TimeoutPolicy:
    """What a ``timeout=`` argument means over ``base``: a policy as it is, ``None`` for no limits, a number of
    seconds for that maximum over ``base`` (its idle liveness kept). The one parser of ``timeout=`` values."""
    if timeout is None:
        return TimeoutPolicy.unlimited()
    if isinstance(timeout, TimeoutPolicy):
        return timeout
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        if math.isnan(timeout) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        return base.replace(maximum=float(timeout))
    raise TypeError(f"timeout must be a TimeoutPolicy, a number of seconds, or None; got {timeout!r}")


def as_timeout_policy(timeout: TimeoutPolicy | float | None) -> TimeoutPolicy:
    """What a client-level ``timeout=`` means: :func:`timeout_over` the defaults."""
    return timeout_over(DEFAULT_TIMEOUT, timeout)


class TimeoutKind(enum.Enum):
    """Which clock ended a request."""

    IDLE = "idle"
    """No sign of life for ``idle`` seconds."""
    MAXIMUM = "maximum"
    """The policy's hard maximum passed."""
    CALLER = "caller"
    """The caller's own enclosing deadline passed first; anyio cancellation takes it from there."""


@dataclass(slots=True)
class Deadline:
    """The clocks of one request. Mutable state machine; every method takes ``now``.

    Create it when the call starts. ``caller_deadline`` is the absolute time (same clock) of the caller's
    enclosing deadline, or ``math.inf``.
    """

    policy: TimeoutPolicy
    started_at: float
    caller_deadline: float = math.inf
    sent_at: float | None = None
    last_sign_of_life: float | None = None
    _paused_since: float | None = None
    _pause_depth: int = 0
    _idle_paused_total: float = 0.0
    _maximum_paused_total: float = 0.0
    _slow_reported: bool = False
    _finished: bool = field(default=False)

    # -- inputs -------------------------------------------------------------------------------------------

    def mark_sent(self, now: float) -> None:
        """The request has been written: the idle clock starts now (again, for a new attempt)."""
        self.sent_at = now
        self.last_sign_of_life = now
        self._idle_paused_total = 0.0

    def sign_of_life(self, now: float) -> bool:
        """An accepted progress notification (or, per policy, any message) arrived. Returns True if it reset idle."""
        if self.sent_at is None or self._finished:
            return False
        self.last_sign_of_life = now
        self._idle_paused_total = 0.0
        return True

    def pause(self, now: float) -> None:
        """Waiting on a person starts. Pauses nest; only the outermost one counts."""
        if self._pause_depth == 0:
            self._paused_since = now
        self._pause_depth += 1

    def resume(self, now: float) -> None:
        """Waiting on a person ends (the innermost pause)."""
        if self._pause_depth == 0:
            raise RuntimeError("resume() without a matching pause()")
        self._pause_depth -= 1
        if self._pause_depth or self._paused_since is None:
            return
        since = self._paused_since
        self._paused_since = None
        if self.last_sign_of_life is not None:
            # Only the part of the pause after the last sign of life was stolen from the idle clock.
            self._idle_paused_total += max(0.0, now - max(since, self.last_sign_of_life))
        if self.policy.pause_maximum:
            self._maximum_paused_total += max(0.0, now - since)

    def finish(self) -> None:
        """The request ended; nothing can expire or reset any more."""
        self._finished = True

    # -- queries ------------------------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        """True while waiting on a person."""
        return self._pause_depth > 0

    def maximum_at(self, now: float) -> float:
        """Absolute time the policy's maximum passes (``inf`` if none, or frozen while paused by policy)."""
        if self.policy.maximum is None or (self.policy.pause_maximum and self._paused_since is not None):
            return math.inf
        return self.started_at + self.policy.maximum + self._maximum_paused_total

    def idle_at(self, now: float) -> float:
        """Absolute time the idle clock runs out (``inf`` if not started, no idle limit, or paused)."""
        if self.policy.idle is None or self.last_sign_of_life is None or self._paused_since is not None:
            return math.inf
        return self.last_sign_of_life + self.policy.idle + self._idle_paused_total

    def hard_deadline(self, now: float) -> float:
        """The earlier of the policy's maximum and the caller's own deadline."""
        return min(self.maximum_at(now), self.caller_deadline)

    def remaining(self, now: float) -> float:
        """Seconds left before the hard deadline (may be ``inf``; never negative)."""
        return max(0.0, self.hard_deadline(now) - now)

    def expired(self, now: float) -> TimeoutKind | None:
        """Which clock, if any, has run out at ``now``. The hard limits are checked before idle."""
        if self._finished:
            return None
        maximum_at = self.maximum_at(now)
        if now >= min(maximum_at, self.caller_deadline):
            return TimeoutKind.MAXIMUM if maximum_at <= self.caller_deadline else TimeoutKind.CALLER
        if now >= self.idle_at(now):
            return TimeoutKind.IDLE
        return None

    def take_slow(self, now: float) -> bool:
        """True exactly once, the first time this is asked at or after the soft deadline."""
        if self._slow_reported or self._finished or self.policy.notify_after is None:
            return False
        if now >= self.started_at + self.policy.notify_after:
            self._slow_reported = True
            return True
        return False

    def slow_at(self) -> float:
        """Absolute time of the soft deadline still to report (``inf``: none, or already reported)."""
        if self._slow_reported or self._finished or self.policy.notify_after is None:
            return math.inf
        return self.started_at + self.policy.notify_after

    def next_wakeup(self, now: float) -> float:
        """The earliest absolute time at which :meth:`expired` or :meth:`take_slow` could change (or ``inf``)."""
        if self._finished:
            return math.inf
        wake = min(self.hard_deadline(now), self.idle_at(now))
        if not self._slow_reported and self.policy.notify_after is not None:
            wake = min(wake, self.started_at + self.policy.notify_after)
        return wake

    def elapsed(self, now: float) -> float:
        """Seconds since the call started."""
        return now - self.started_at
