"""The one validator of durations given in seconds, for every policy value (timeouts, retries, restarts, task
polling, listening).

A value that is not a number (a bool, a string, ``None`` where no limit is not allowed) raises
:class:`NotSeconds`, which is a ``TypeError`` and a ``ValueError`` both; a number out of range (negative, NaN, zero
or infinite where they are not allowed) raises ``ValueError``. Imports: the standard library only.
"""

from __future__ import annotations

import math

__all__ = ["NotSeconds", "check_seconds"]


class NotSeconds(TypeError, ValueError):
    """A value given as a number of seconds is not a number."""


def check_seconds(name: str, value: object, *, zero: bool = False, infinite: bool = False, none: bool = False) -> None:
    """Refuse ``value`` unless it is a number of seconds: more than zero (``zero``: or zero), finite (``infinite``:
    or infinite), or ``None`` when ``none`` allows it."""
    if value is None and none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NotSeconds(f"{name} must be a number of seconds{' or None' if none else ''}, not {value!r}")
    if math.isnan(value) or value < 0 or (value == 0 and not zero) or (math.isinf(value) and not infinite):
        qualities = ", ".join(word for word, wanted in (("positive", not zero), ("finite", not infinite)) if wanted)
        kind = f"a {qualities} number" if qualities else "a number"
        floor = " >= 0" if zero else ""
        raise ValueError(f"{name} must be {kind} of seconds{floor}{' or None' if none else ''}, got {value!r}")
