"""The one backoff of the package: how long to wait before try number ``n`` of something that failed.

Retries of a call (:mod:`.retry`), re-listens of a subscription, restarts of a supervised server
(:mod:`.restart`) and polls of a task that failed on the transport (:mod:`.tasks`) all wait by it: an exponential
bound, ``initial * multiplier ** (n - 1)`` capped at ``cap``, and, where many clients may wait in step, full jitter
(uniform in ``[0, bound]``, tenacity's ``wait_random_exponential``).

Imports: the standard library and tenacity only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import tenacity

__all__ = ["exponential_bound", "full_jitter"]

_MAX_EXPONENT = 64
"""Past this many tries the bound is the cap anyway; the exponent stops growing (no float overflow)."""


def exponential_bound(number: int, *, initial: float, multiplier: float, cap: float) -> float:
    """The upper bound of the wait before try ``number`` (1 for the first): ``initial * multiplier ** (number - 1)``,
    at most ``cap``."""
    exponent = min(max(number, 1) - 1, _MAX_EXPONENT)
    return float(min(cap, initial * multiplier**exponent))


def full_jitter(number: int, *, initial: float, multiplier: float, cap: float) -> float:
    """A random wait before try ``number`` (1 for the first), uniform in ``[0, exponential_bound(...)]``."""
    strategy = tenacity.wait_random_exponential(multiplier=initial, max=cap, exp_base=multiplier)
    return float(strategy(cast(tenacity.RetryCallState, _TryNumber(max(number, 1)))))


@dataclass(frozen=True, slots=True)
class _TryNumber:
    """What tenacity's wait strategies read of a retry state."""

    attempt_number: int
