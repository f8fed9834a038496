"""HTTP status details of the Streamable HTTP transport: ``Retry-After`` and the statuses that ask us to wait."""

from __future__ import annotations

import datetime
import email.utils
import time

__all__ = ["BACK_OFF_STATUSES", "MAX_RETRY_AFTER", "parse_retry_after"]

BACK_OFF_STATUSES = frozenset({429, 503})
"""Too Many Requests and Service Unavailable: the server asks the client to come back later."""
MAX_RETRY_AFTER = 24 * 3600.0
"""A ``Retry-After`` further away than a day is taken as a day (the retry policy's own caps apply on top)."""
_MAX_DIGITS = len(str(int(MAX_RETRY_AFTER)))
"""More digits than this is past the cap, whatever they say: no number that size is ever built."""


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or an HTTP-date), or None if absent or unreadable.

    A date in the past means "now" (0 s). ``now`` is a Unix time, for tests. Never raises: a value of any length
    or shape is either read (and capped at :data:`MAX_RETRY_AFTER`) or None.
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        digits = value.lstrip("0") or "0"
        return MAX_RETRY_AFTER if len(digits) > _MAX_DIGITS else min(float(digits), MAX_RETRY_AFTER)
    if len(value) > 64:  # an IMF-fixdate is 29 characters
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:  # "-0000": RFC 9110 dates are GMT anyway
            when = when.replace(tzinfo=datetime.UTC)
        delay = when.timestamp() - (time.time() if now is None else now)
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None
    return min(max(delay, 0.0), MAX_RETRY_AFTER)
