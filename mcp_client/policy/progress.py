"""Progress: token allocation, validation of incoming notifications, and delivery pacing.

Three small pure pieces, each taking ``now`` where time matters:

* :class:`ProgressTokens` hands out progress tokens from a namespace of their own (never a request id, never
  reused), so a server echoing a request id, or a stale token from an earlier attempt, cannot be mistaken for the
  token of a live request.
* :class:`ProgressTracker` judges each notification for one request: the value must be a finite number and must
  increase strictly; nothing is accepted after the request finished. Rejections are reported, never delivered.
* :class:`ProgressCoalescer` sits between the reader and a possibly slow consumer: it keeps only the newest
  undelivered update (latest wins) and, optionally, spaces deliveries by a minimum interval. The reader never waits.
"""

from __future__ import annotations

import enum
import itertools
import math
from dataclasses import dataclass

__all__ = [
    "Progress",
    "ProgressCoalescer",
    "ProgressTokens",
    "ProgressTracker",
    "ProgressVerdict",
    "finite_number",
]


def finite_number(value: object) -> float | None:
    """``value`` from the wire as a finite float, or ``None`` for anything else (booleans, ``NaN``, infinities,
    integers too large for a float, non-numbers). The one finite check of numbers the server sends."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer JSON literal too large for a float
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True, slots=True)
class Progress:
    """One accepted progress update, as delivered to callbacks and ``call.progress()``."""

    progress: float
    """How far along the work is; strictly increasing within one call."""
    total: float | None = None
    """The amount of work in all, when the server knows it."""
    message: str | None = None
    """A human-readable note from the server."""

    @property
    def fraction(self) -> float | None:
        """``progress / total`` when a positive total is known, else ``None``."""
        if self.total is None or self.total <= 0:
            return None
        return self.progress / self.total


class ProgressTokens:
    """Allocates progress tokens: strings with a prefix of their own, never reused by this allocator."""

    __slots__ = ("_counter", "_prefix")

    def __init__(self, prefix: str = "p") -> None:
        self._prefix = prefix
        self._counter = itertools.count(1)

    def allocate(self) -> str:
        """A token never handed out before by this allocator."""
        return f"{self._prefix}{next(self._counter)}"


class ProgressVerdict(enum.Enum):
    """What became of one incoming progress notification."""

    ACCEPTED = "accepted"
    NOT_INCREASING = "not increasing"
    NOT_A_NUMBER = "not a finite number"
    FINISHED = "request already finished"


class ProgressTracker:
    """Validates the progress notifications of one call.

    The spec puts "progress MUST increase" on the sender; a client that trusts it delivers garbage to its users.
    So the rule is enforced here: within one attempt each value must be finite and strictly greater than the
    last. Across attempts (a retry with a fresh token starts counting again), an accepted value still proves the
    server alive, but reaches the caller only once it passes the highest value already delivered: the caller
    sees one monotonic stream.
    """

    __slots__ = ("_attempt_last", "_delivered", "_finished")

    def __init__(self) -> None:
        self._attempt_last: float | None = None
        self._delivered: float | None = None
        self._finished = False

    @property
    def last_delivered(self) -> float | None:
        """The highest value delivered to the caller so far."""
        return self._delivered

    def judge(self, progress: object) -> ProgressVerdict:
        """Decide on a raw ``progress`` value from the wire, without recording it."""
        if self._finished:
            return ProgressVerdict.FINISHED
        value = finite_number(progress)
        if value is None:
            return ProgressVerdict.NOT_A_NUMBER
        if self._attempt_last is not None and value <= self._attempt_last:
            return ProgressVerdict.NOT_INCREASING
        return ProgressVerdict.ACCEPTED

    def accept(self, progress: object) -> tuple[ProgressVerdict, bool]:
        """Judge and, when accepted, record ``progress``. Returns the verdict and whether to deliver it."""
        verdict = self.judge(progress)
        if verdict is not ProgressVerdict.ACCEPTED:
            return verdict, False
        value = float(progress)  # type: ignore[arg-type]
        self._attempt_last = value
        if self._delivered is not None and value <= self._delivered:
            return verdict, False
        self._delivered = value
        return verdict, True

    def restart_attempt(self) -> None:
        """A new attempt of the same call begins: its values are judged on their own from now on."""
        self._attempt_last = None

    def finish(self) -> None:
        """The call ended: every later notification is ``FINISHED``."""
        self._finished = True


class ProgressCoalescer:
    """Latest-wins mailbox between the reader and one consumer, with an optional minimum interval.

    The reader calls :meth:`offer` (never blocks); the consumer asks :meth:`ready_at` when it may take the next
    update and :meth:`take` to get it.
    """

    __slots__ = ("_last_delivery", "_min_interval", "_pending", "coalesced")

    def __init__(self, min_interval: float | None = None) -> None:
        if min_interval is not None and not min_interval >= 0:
            raise ValueError(f"min_interval must be >= 0 or None, got {min_interval!r}")
        self._min_interval = min_interval or 0.0
        self._pending: Progress | None = None
        self._last_delivery = -math.inf
        self.coalesced = 0
        """How many updates were overwritten before the consumer took them."""

    @property
    def pending(self) -> bool:
        """True when an update waits for the consumer."""
        return self._pending is not None

    def offer(self, update: Progress) -> None:
        """Store ``update``, replacing one that was not taken yet."""
        if self._pending is not None:
            self.coalesced += 1
        self._pending = update

    def ready_at(self) -> float:
        """The earliest time the pending update may be delivered (``inf`` when nothing is pending)."""
        if self._pending is None:
            return math.inf
        return self._last_delivery + self._min_interval

    def take(self, now: float) -> Progress | None:
        """The pending update if it may be delivered at ``now`` (and mark it delivered), else ``None``."""
        if self._pending is None or now < self.ready_at():
            return None
        update, self._pending = self._pending, None
        self._last_delivery = now
        return update
