"""What one attempt of an MCP activity knows: the last attempt's checkpoint, and time since the activity was first
scheduled, measured without comparing the worker's clock with Temporal's.

The checkpoint is read from ``activity.info().heartbeat_details`` first, before anything else the attempt does: a
maximum that passed, a connection that failed, every answer the attempt gives depends on what the last one did.

Time: ``scheduled_time`` (the activity's first scheduling) and ``started_time`` (this attempt's start) are both
stamped by the service, so their difference is exact whatever the worker's clock says; from there the worker's
monotonic clock counts. A worker clock that is minutes off neither fails every call as "never sent" nor lets the
MCP maximum outlive the activity's schedule-to-close timeout. Touches ``temporalio.activity``'s info and the wire.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from temporalio import activity

from mcp_client.integrations.temporal.wire import Checkpoint

__all__ = ["Attempt"]

FINAL_MARGIN = 2.0
"""Seconds before the schedule-to-close timeout from which no further attempt is counted on: a task this attempt
leaves behind would have no owner, so it is cancelled instead."""


class Attempt:
    """One attempt of an activity, as its :class:`temporalio.activity.Info` describes it."""

    def __init__(self, info: activity.Info, now: Callable[[], float] = time.monotonic) -> None:
        self.checkpoint = Checkpoint.from_details(info.heartbeat_details)
        self.number = info.attempt
        self._now = now
        self._entered = now()
        self._elapsed_at_start = max(0.0, (info.started_time - info.scheduled_time).total_seconds())
        timeout = info.schedule_to_close_timeout
        self._schedule_to_close = timeout.total_seconds() if timeout else None
        retry = info.retry_policy
        self._last_allowed = retry is not None and 0 < retry.maximum_attempts <= info.attempt

    def elapsed(self) -> float:
        """Seconds since the activity was first scheduled (every attempt and the backoff between them)."""
        return self._elapsed_at_start + (self._now() - self._entered)

    def left(self, maximum: float | None) -> float | None:
        """What is left of the MCP ``maximum`` (None: none), never more than the schedule-to-close timeout leaves
        (less a margin), so that the worker's typed ``MaxTimeout`` comes first."""
        elapsed = self.elapsed()
        left = maximum - elapsed if maximum is not None else None
        if self._schedule_to_close is not None:
            closing = self._schedule_to_close - FINAL_MARGIN - elapsed
            left = closing if left is None else min(left, closing)
        return left

    def final(self) -> bool:
        """True when no attempt can follow this one: the retry policy's last, or the schedule-to-close timeout (as
        the service counts it) is about to pass."""
        if self._last_allowed:
            return True
        return self._schedule_to_close is not None and self._schedule_to_close - self.elapsed() <= FINAL_MARGIN
