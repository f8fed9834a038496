"""A call's options as one value: decided once where the call's policies are resolved, carried down as data.

httpx resolves a request's timeout once into ``request.extensions["timeout"]`` and the official SDK hands one
``CallOptions`` down with each request; here :class:`CallOptions` holds what the caller's arguments and the
client's rules decided for one call (its timeout and retry policies, whether it may run twice, its tool headers,
whether it takes progress, whether a session the server ended is renewed for it). It is frozen and slotted, made
by the client (or by the call room for its own requests) and read by :class:`~mcp_client.calls.CallRunner`; a
client reuses one value for the calls that resolve to the same policies, so a call allocates none of its own.

What lives only while the call runs (its start time, progress sink and callback, control, task phase) is not an
option: the runner takes those beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mcp_client.policy import TimeoutPolicy
from mcp_client.policy.retry import RetryPolicy

__all__ = ["CallOptions"]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How one call runs (see the module documentation)."""

    policy: TimeoutPolicy
    """The call's clocks: idle, maximum (counted from the caller's call), ``notify_after``."""
    retry: RetryPolicy | None = None
    """When a failed attempt is sent again (``None``: never); only safe cases are (:func:`~.retry.decide`)."""
    idempotent: bool = False
    """Whether the call may be sent twice when it may have run (an idempotent or read-only tool)."""
    headers: dict[str, str] | None = None
    """The call's ``Mcp-Param-*`` headers (a tool call over HTTP at 2026-07-28), not to be changed."""
    want_progress: bool = True
    """Whether the request carries a progress token."""
    renews: bool = False
    """Whether a 2025-11-25 session the server ended before it saw the call is renewed, and the call sent once
    more (the client's own calls; not the handshake's nor the call room's)."""
    before_send: Callable[[], None] | None = None
    """Run right before each write of the call (its first, a retry, a send on a restarted process), after its wait
    for a slot or a renewal: it raises to refuse the send (``pin_tools``: the tool's pin, checked against what the
    client knows at that moment, not when the call was made)."""

    @classmethod
    def without_progress(cls, policy: TimeoutPolicy) -> CallOptions:
        """A request of the call room's own (a task's poll or cancel): ``policy``, no progress token, no retries."""
        return cls(policy, want_progress=False)
