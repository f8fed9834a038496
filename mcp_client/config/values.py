"""The value checks of an ``mcp.json`` file: pydantic ``BeforeValidator`` types that say what is wrong in our words.

Each check raises :func:`problem` (a ``PydanticCustomError``), so the error carries a clean JSON path and a reason
such as ``must be a positive number of seconds or null, got -1``. Used by the models of :mod:`mcp_client.config.load`;
touches pydantic and the standard library only.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

__all__ = [
    "Attempts",
    "Duration",
    "Flag",
    "FlagOrNull",
    "MaxInFlight",
    "Multiplier",
    "NonNegative",
    "Text",
    "is_number",
    "problem",
    "shown",
]


def problem(reason: str, **context: Any) -> PydanticCustomError:
    """A configuration problem, worded by ``reason`` (a format string over ``context``)."""
    return PydanticCustomError("mcp_config", reason, context)


def is_number(value: object) -> bool:
    """True for an int or a float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _duration(value: object) -> float | None:
    if value is None:
        return None
    if not is_number(value) or not math.isfinite(value) or value <= 0:  # type: ignore[arg-type, operator]
        raise problem("must be a positive number of seconds or null, got {value}", value=json.dumps(value))
    return float(value)  # type: ignore[arg-type]


def _non_negative(value: object) -> float:
    if not is_number(value) or not math.isfinite(value) or value < 0:  # type: ignore[arg-type, operator]
        raise problem("must be a number of seconds >= 0, got {value}", value=json.dumps(value))
    return float(value)  # type: ignore[arg-type]


def _multiplier(value: object) -> float:
    if not is_number(value) or not math.isfinite(value) or value < 1:  # type: ignore[arg-type, operator]
        raise problem("must be a number >= 1, got {value}", value=json.dumps(value))
    return float(value)  # type: ignore[arg-type]


def _attempts(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise problem("must be an integer >= 1, got {value}", value=json.dumps(value))
    return value


def _max_in_flight(value: object) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise problem("must be an integer >= 1 or null, got {value}", value=json.dumps(value))
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise problem("must be true or false, got {value}", value=json.dumps(value))
    return value


def _flag_or_null(value: object) -> bool | None:
    return None if value is None else _flag(value)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise problem("must be a string, got {value}", value=json.dumps(value))
    return value


def shown(value: object) -> str:
    """``value`` as JSON for a message (its repr when it is not JSON)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


Duration = Annotated[float | None, BeforeValidator(_duration)]
NonNegative = Annotated[float, BeforeValidator(_non_negative)]
Multiplier = Annotated[float, BeforeValidator(_multiplier)]
Attempts = Annotated[int, BeforeValidator(_attempts)]
MaxInFlight = Annotated[int | None, BeforeValidator(_max_in_flight)]
Flag = Annotated[bool, BeforeValidator(_flag)]
FlagOrNull = Annotated[bool | None, BeforeValidator(_flag_or_null)]
Text = Annotated[str, BeforeValidator(_text)]
