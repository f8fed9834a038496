"""Retry policy values, the retry decision, and the retry budget. Pure: no I/O, ``now`` passed in.

When may a failed call be sent again? Only when it is safe:

* the request was **never written** (it cannot have run), or
* the tool is **idempotent** (``idempotentHint`` or ``readOnlyHint`` from ``tools/list``, or a per-tool rule), so
  running it twice is harmless.

A ``tools/call`` that may have run and is not idempotent is never re-sent. "Never written" is what the client
itself knows (the connection could not be opened, the process was already gone), never what a server's answer
claims: an HTTP 429 or 503 counts as written, because a gateway may send it after the server behind it ran the
tool. Of the causes, only transport failures (a broken stream at 2026-07-28 must be re-issued with a new id),
overload answers (HTTP 429/503, ``Retry-After`` honoured, idempotent tools only) and, when the policy says so, idle
timeouts are retryable. JSON-RPC errors, ``isError`` results, cancellation and the hard maximum never are.

Backoff is the package's one full-jitter exponential wait (:mod:`.backoff`); every attempt must fit in the call's
one maximum; a per-client :class:`RetryBudget` (gRPC's retry throttling) stops a failing server from drawing a
retry storm.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_client.errors import IdleTimeout, MCPClientError, SessionExpired, TransportError
from mcp_client.policy.backoff import full_jitter
from mcp_client.policy.seconds import check_seconds

__all__ = ["DEFAULT_RETRY", "RetryBudget", "RetryDecision", "RetryPolicy", "Verdict", "decide"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how often a failed call is sent again. An immutable value.

    Args:
        attempts: Most attempts in all, the first included (1 turns retries off).
        initial_backoff: Upper bound of the random wait before the first retry, in seconds.
        max_backoff: Upper bound of any wait, in seconds.
        multiplier: How much the bound grows per retry.
        retry_idle_timeout: Also retry a call that hit its idle timeout (idempotent tools only).
        idempotent: Treat the tool as idempotent whatever its annotations say (``True``), or as not idempotent
            (``False``); ``None`` trusts the annotations.
    """

    attempts: int = 3
    initial_backoff: float = 0.1
    max_backoff: float = 5.0
    multiplier: float = 2.0
    retry_idle_timeout: bool = False
    idempotent: bool | None = None

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or self.attempts < 1:
            raise ValueError(f"attempts must be an integer >= 1, got {self.attempts!r}")
        for name in ("initial_backoff", "max_backoff"):
            check_seconds(name, getattr(self, name), zero=True, infinite=True)
        if not self.multiplier >= 1:
            raise ValueError(f"multiplier must be >= 1, got {self.multiplier!r}")

    def replace(self, **changes: Any) -> RetryPolicy:
        """Return a copy with some fields changed."""
        return replace(self, **changes)

    @classmethod
    def never(cls) -> RetryPolicy:
        """No retries at all (what ``retry=None`` means for a call)."""
        return cls(attempts=1)

    def backoff(self, retry_number: int) -> float:
        """A random wait before retry number ``retry_number`` (1 for the first retry): full jitter."""
        return full_jitter(retry_number, initial=self.initial_backoff, multiplier=self.multiplier, cap=self.max_backoff)


DEFAULT_RETRY = RetryPolicy()
"""The default: up to 3 attempts, only for the safe cases."""


class Verdict(enum.Enum):
    """Why a failed attempt is, or is not, retried."""

    RETRY = "retry"
    NOT_RETRYABLE = "the error is not retryable"
    MAY_HAVE_RUN = "the request may have run and the tool is not idempotent"
    ATTEMPTS_EXHAUSTED = "no attempts left"
    NO_TIME_LEFT = "the wait would pass the call's maximum"
    BUDGET_EXHAUSTED = "the client's retry budget is spent"


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """The verdict on one failed attempt, and the wait before the next when it is retried."""

    verdict: Verdict
    delay: float = 0.0

    @property
    def retry(self) -> bool:
        """True when the call should be sent again after :attr:`delay` seconds."""
        return self.verdict is Verdict.RETRY


@dataclass(slots=True)
class RetryBudget:
    """gRPC-style retry throttling, shared by every call of one client.

    Each failed attempt that would otherwise be retried takes one token (failures that are not retryable at all
    cost nothing), each success gives back ``token_ratio``; retries are allowed only while more than half of
    ``max_tokens`` remain. A healthy server keeps the bucket full; a failing one empties it and
    retries stop until calls succeed again.
    """

    max_tokens: float = 10.0
    token_ratio: float = 0.1
    tokens: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.max_tokens

    def record_failure(self) -> None:
        """An attempt failed with a retryable cause."""
        self.tokens = max(0.0, self.tokens - 1)

    def record_success(self) -> None:
        """A call succeeded."""
        self.tokens = min(self.max_tokens, self.tokens + self.token_ratio)

    @property
    def allows_retry(self) -> bool:
        """True while more than half of the bucket is left."""
        return self.tokens > self.max_tokens / 2


def is_retryable_cause(error: MCPClientError, policy: RetryPolicy) -> bool:
    """Whether ``error`` is of a kind that may be retried at all (before safety is considered)."""
    if isinstance(error, SessionExpired):
        return False  # the client starts a new session and sends it once more; the same dead session would fail
    if isinstance(error, TransportError):
        return True
    return isinstance(error, IdleTimeout) and policy.retry_idle_timeout


def decide(
    error: MCPClientError,
    *,
    policy: RetryPolicy,
    attempt: int,
    idempotent: bool,
    now: float,
    hard_deadline: float,
    budget: RetryBudget | None = None,
) -> RetryDecision:
    """Decide whether attempt number ``attempt`` (1-based), which failed with ``error``, is sent again."""
    if not is_retryable_cause(error, policy):
        return RetryDecision(Verdict.NOT_RETRYABLE)
    written = error.may_have_run  # recorded by the call's attempts; else the error's kind says
    if written is None:
        written = not isinstance(error, TransportError) or error.written
    safe = not written or (policy.idempotent if policy.idempotent is not None else idempotent)
    if not safe:
        return RetryDecision(Verdict.MAY_HAVE_RUN)
    if attempt >= policy.attempts:
        return RetryDecision(Verdict.ATTEMPTS_EXHAUSTED)
    retry_after = error.retry_after if isinstance(error, TransportError) else None
    delay = retry_after if retry_after is not None else policy.backoff(attempt)
    if now + delay >= hard_deadline:
        return RetryDecision(Verdict.NO_TIME_LEFT)
    if budget is not None:
        budget.record_failure()
        if not budget.allows_retry:
            return RetryDecision(Verdict.BUDGET_EXHAUSTED)
    return RetryDecision(Verdict.RETRY, delay)
