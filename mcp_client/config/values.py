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
    "finite",
    "is_number",
    "named",
    "problem",
    "shown",
]


def problem(reason: str, **context: Any) -> PydanticCustomError:
    """A configuration problem, worded by ``reason`` (a format string over ``context``)."""
    return PydanticCustomError("mcp_config", reason, context)


def is_number(value: object) -> bool:
    """True for an int or a float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def finite(value: object) -> float | None:
    """``value`` as a finite float; None when it is not a number, or not finite, or too large for a float."""
    if not is_number(value):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an int of hundreds of digits
        return None
    return number if math.isfinite(number) else None


def _duration(value: object) -> float | None:
    if value is None:
        return None
    number = finite(value)
    if number is None or number <= 0:
        raise problem("must be a positive number of seconds or null, got {value}", value=shown(value))
    return number


def _non_negative(value: object) -> float:
    number = finite(value)
    if number is None or number < 0:
        raise problem("must be a number of seconds >= 0, got {value}", value=shown(value))
    return number


def _multiplier(value: object) -> float:
    number = finite(value)
    if number is None or number < 1:
        raise problem("must be a number >= 1, got {value}", value=shown(value))
    return number


def _attempts(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise problem("must be an integer >= 1, got {value}", value=shown(value))
    return value


def _max_in_flight(value: object) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise problem("must be an integer >= 1 or null, got {value}", value=shown(value))
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise problem("must be true or false, got {value}", value=shown(value))
    return value


def _flag_or_null(value: object) -> bool | None:
    return None if value is None else _flag(value)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise problem("must be a string, got {value}", value=shown(value))
    return value


_KINDS = {str: "a string", list: "a list", dict: "an object", tuple: "a list"}
_LONGEST_NUMBER = 40


def shown(value: object) -> str:
    """``value`` for a message, without its content unless it is a short number, a boolean or null: a string, a
    list or a table may hold a token written where it does not belong, and a file's value may be any object
    (a YAML or TOML date), so those are named by their kind ("a string", "a list"...)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if is_number(value):
        text = repr(value) if isinstance(value, int) and abs(value) < 10**_LONGEST_NUMBER else None
        if isinstance(value, float):
            text = json.dumps(value)
        return text if text is not None else "a number too large"
    for kind, words in _KINDS.items():
        if isinstance(value, kind):
            return words
    return f"a {type(value).__name__}"


def named(value: object) -> str:
    """A value that names a choice (a transport, an annotation) for a message: a string as JSON, else :func:`shown`."""
    return json.dumps(value) if isinstance(value, str) else shown(value)


Duration = Annotated[float | None, BeforeValidator(_duration)]
NonNegative = Annotated[float, BeforeValidator(_non_negative)]
Multiplier = Annotated[float, BeforeValidator(_multiplier)]
Attempts = Annotated[int, BeforeValidator(_attempts)]
MaxInFlight = Annotated[int | None, BeforeValidator(_max_in_flight)]
Flag = Annotated[bool, BeforeValidator(_flag)]
FlagOrNull = Annotated[bool | None, BeforeValidator(_flag_or_null)]
Text = Annotated[str, BeforeValidator(_text)]
