"""The records of work in flight: a call (what the caller waits for), the requests it puts on the wire, and the
control that lets another task cancel it.

A call spans every attempt and input round: one :class:`~mcp_client.policy.Deadline`, one progress tracker, one
progress sink. Each attempt or round is one :class:`WireRequest` with its own id and token, in the session's
tables only while it is in flight.
"""

from __future__ import annotations

from typing import Protocol

import anyio

from mcp_client._backends.base import Waiter
from mcp_client._types import JSONObject
from mcp_client.errors import Attempt, MCPClientError
from mcp_client.policy import Deadline, Progress, ProgressTracker

__all__ = ["CANCELLED", "CallState", "ProgressSink", "RequestControl", "WireRequest"]


class ProgressSink(Protocol):
    """What the session hands accepted progress to."""

    def offer(self, update: Progress) -> None:
        """Take an update without blocking."""

    def close(self, *, drain: bool) -> None:
        """No more updates will come; ``drain`` says whether the one still pending should be delivered."""


class RequestControl:
    """Lets someone other than the awaiting task end a call early (the ``Call`` handle's ``cancel``)."""

    __slots__ = ("_call", "reason")

    def __init__(self) -> None:
        self.reason: str | None = None
        self._call: CallState | None = None

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self.reason is not None

    @property
    def request_ids(self) -> tuple[int | str, ...]:
        """The ids the controlled call has used so far."""
        return tuple(self._call.request_ids) if self._call is not None else ()

    def cancel(self, reason: str = "cancelled by the client") -> None:
        """End the call with :class:`~mcp_client.RequestCancelled`; the server is told. Idempotent."""
        if self.reason is not None:
            return
        self.reason = reason
        if self._call is not None:
            self._call.cancel(reason)

    def attach(self, call: CallState) -> None:
        """Bind the control to the call it controls (done by the call runner as it starts)."""
        self._call = call
        if self.reason is not None:
            call.cancel(self.reason)


CANCELLED: JSONObject = {}
"""Sentinel outcome: the request was cancelled through its control."""


class CallState:
    """One call from the caller's point of view: its clocks and progress span every attempt and input round."""

    __slots__ = (
        "_cancelled",
        "attempts",
        "cancel_reason",
        "current",
        "deadline",
        "headers",
        "may_have_run",
        "method",
        "request_ids",
        "sink",
        "tracker",
    )

    def __init__(
        self, method: str, deadline: Deadline, sink: ProgressSink | None, headers: dict[str, str] | None = None
    ) -> None:
        self.method = method
        self.headers = headers
        """Extra transport headers for every request of the call (HTTP ``Mcp-Param-*``)."""
        self.deadline = deadline
        self.sink = sink
        self.tracker = ProgressTracker()
        self.request_ids: list[int] = []
        self.attempts: tuple[Attempt, ...] = ()
        """The failed attempts so far (a tuple: most calls have none, and an empty one costs nothing)."""
        self.current: WireRequest | None = None
        self.cancel_reason: str | None = None
        self.may_have_run = False
        """True once a request of the call was written and not refused (recorded by the attempts): the work may
        have been done. Every error of the call carries it (``MCPClientError.may_have_run``)."""
        self._cancelled: anyio.Event | None = None  # made on demand: most calls are never waited on this way

    @property
    def cancelled(self) -> anyio.Event:
        """Set when the call is cancelled through its control (for waits between requests)."""
        if self._cancelled is None:
            self._cancelled = anyio.Event()
            if self.cancel_reason is not None:
                self._cancelled.set()
        return self._cancelled

    def cancel(self, reason: str) -> None:
        """End the call as cancelled by the client: the request in flight settles at once."""
        if self.cancel_reason is None:
            self.cancel_reason = reason
            if self._cancelled is not None:
                self._cancelled.set()
            if self.current is not None:
                self.current.settle(CANCELLED)

    def nudge(self) -> None:
        """Make the waiter look at the clocks again (they moved earlier: a pause ended)."""
        if self.current is not None:
            self.current.done.poke()


class WireRequest:
    """One request on the wire (one attempt or round of a call), tracked while it is in flight."""

    __slots__ = ("call", "done", "failure", "outcome", "request_id", "token", "written")

    def __init__(self, request_id: int, token: str | None, call: CallState, waiter: Waiter) -> None:
        self.request_id = request_id
        self.token = token
        self.call = call
        self.written = False
        """True once the whole request has been handed to the transport."""
        self.done = waiter
        """Wakes the waiter: set when the request settles, poked when the call's clocks move (a pause ended)."""
        self.outcome: JSONObject | None = None
        self.failure: MCPClientError | None = None

    @property
    def method(self) -> str:
        return self.call.method

    @property
    def settled(self) -> bool:
        """True once the request has ended."""
        return self.outcome is not None or self.failure is not None

    def settle(self, outcome: JSONObject, failure: MCPClientError | None = None) -> None:
        """Record how the request ended (the first settlement wins) and wake its waiter."""
        if self.outcome is None and self.failure is None:
            self.outcome = outcome
            self.failure = failure
            self.done.set()
