"""ListenPolicy: how a subscription opens and heals. A pure value (backoff computed here, no I/O, no clock).

A subscription is not a call: nothing bounds how long it stays open and no idle timeout ends a quiet one. What
is bounded is its opening (until the server's acknowledgement) and how it comes back after a drop: after a
jittered, capped, growing wait, with a new request id.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mcp_client.policy.backoff import full_jitter
from mcp_client.policy.seconds import check_seconds

__all__ = ["DEFAULT_LISTEN_POLICY", "ListenPolicy"]


def _check_seconds(name: str, value: object, *, zero: bool) -> None:
    check_seconds(name, value, zero=zero)


@dataclass(frozen=True, slots=True)
class ListenPolicy:
    """How a subscription opens and how it re-opens after a drop. An immutable value.

    Args:
        open_timeout: Seconds from sending ``subscriptions/listen`` to the server's acknowledgement. A listen not
            acknowledged by then is cancelled on the wire; the first one raises, a re-listen counts as a failure.
        initial_backoff: Upper bound of the random wait before the first re-listen after a drop, in seconds.
        max_backoff: Upper bound of any wait between two listens (the cap), in seconds.
        multiplier: How much the bound grows with each drop in a row.
        healthy_after: A subscription that stayed open this many seconds is healthy: its drop starts the backoff
            from ``initial_backoff`` again. Drops sooner than that (and failed re-listens) make the waits grow.
        max_relistens: Most re-listens in a row that fail or drop before ``healthy_after`` before the subscription
            gives up with :class:`~mcp_client.SubscriptionLost` (``None``: never give up).
        max_pending: Most changes waiting for the consumer at once. Equal changes wait once, so only updates of
            distinct resources (sub-resources of a subscribed URI, each with its own URI) can fill it; beyond it an
            update of a resource not already waiting is dropped, counted in ``Subscription.dropped`` and logged as
            a warning (the first of each run of drops).
    """

    open_timeout: float = 30.0
    initial_backoff: float = 0.5
    max_backoff: float = 30.0
    multiplier: float = 2.0
    healthy_after: float = 60.0
    max_relistens: int | None = None
    max_pending: int = 1024

    def __post_init__(self) -> None:
        _check_seconds("open_timeout", self.open_timeout, zero=False)
        _check_seconds("initial_backoff", self.initial_backoff, zero=True)
        _check_seconds("max_backoff", self.max_backoff, zero=True)
        _check_seconds("healthy_after", self.healthy_after, zero=True)
        if (
            isinstance(self.multiplier, bool)
            or not isinstance(self.multiplier, int | float)
            or not self.multiplier >= 1
        ):
            raise ValueError(f"multiplier must be a number >= 1, got {self.multiplier!r}")
        if self.max_relistens is not None and (
            isinstance(self.max_relistens, bool) or not isinstance(self.max_relistens, int) or self.max_relistens < 0
        ):
            raise ValueError(f"max_relistens must be an integer >= 0 or None, got {self.max_relistens!r}")
        if isinstance(self.max_pending, bool) or not isinstance(self.max_pending, int) or self.max_pending < 1:
            raise ValueError(f"max_pending must be an integer of at least 1, got {self.max_pending!r}")

    def replace(self, **changes: Any) -> ListenPolicy:
        """Return a copy with some fields changed."""
        return replace(self, **changes)

    def backoff(self, streak: int) -> float:
        """A random wait (full jitter) before the re-listen that follows ``streak`` drops or failures in a row
        (1 for the first): uniform in ``[0, min(max_backoff, initial_backoff * multiplier ** (streak - 1))]``."""
        return full_jitter(streak, initial=self.initial_backoff, multiplier=self.multiplier, cap=self.max_backoff)

    def gives_up(self, streak: int) -> bool:
        """Whether ``streak`` drops or failures in a row are too many to try again."""
        return self.max_relistens is not None and streak > self.max_relistens


DEFAULT_LISTEN_POLICY = ListenPolicy()
"""30 s to be acknowledged; re-listen after a drop within 0.5 s, the wait doubling to at most 30 s; never give up."""
