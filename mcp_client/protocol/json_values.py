"""How many values a JSON text holds, counted at C speed before anything is decoded (or after, on its compact form).

What JSON costs to decode, and to hold once decoded, follows the values it holds, not its size: 32 MiB of one
string is one value, 32 MiB of ``{},`` ten million dictionaries. Every value but the first of a container follows
a comma, and every container opens with a bracket, so the commas and opening brackets outside strings are the
values the decoder builds (give or take the scalar in a one-element array). :func:`values_beyond` answers "more
than ``limit``?" in one pass over the bytes for the common case (an upper bound: commas and brackets in strings
count too) and, only when that bound is passed, a few more passes that leave out what strings hold, so a long text
full of commas (a CSV file, JSON sent as text) counts as the one value it is.

Used by the reading of every message (``transports/_json.py``) and by the bound on a whole listing
(:mod:`.pagination`). Pure: no I/O, no state.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

__all__ = ["BYTES_PER_VALUE", "compact_json", "count_values", "values_beyond", "values_in"]

BYTES_PER_VALUE = 256
"""Bytes of a size limit per value allowed under it (a message's ``max_message_size``, a listing's bytes)."""


def compact_json(value: Any) -> bytes:
    """``value`` (decoded from a message) as compact UTF-8 JSON, to measure it: what a server sent always has one,
    a lone surrogate (``"\\ud800"``, which the reader accepts as ``json.loads`` does) included, written as its
    escape; pydantic-core refuses to write one."""
    try:
        return to_json(value)
    except PydanticSerializationError:
        return json.dumps(value, separators=(",", ":")).encode()  # (ASCII: every surrogate as its escape)


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b",[{")
_CHUNK = 1 << 20


def values_beyond(raw: bytes | str, limit: int) -> bool:
    """Whether the JSON text ``raw`` holds more than ``limit`` values (see the module documentation)."""
    return count_values(raw, limit) > limit


def count_values(raw: bytes | str, limit: int) -> int:
    """The values the JSON text ``raw`` holds, as counted here (see the module documentation): exact up to
    ``limit``, and some number above ``limit`` when there are more."""
    quick = _values_at_most(raw)
    return quick if quick <= limit else _values_outside_strings(raw, limit)


def values_in(raw: bytes | str) -> int:
    """The values the JSON text ``raw`` holds (its commas and opening brackets outside strings), all counted."""
    return _values_outside_strings(raw, len(raw))


def _values_at_most(raw: bytes | str) -> int:
    if isinstance(raw, str):
        return raw.count(",") + raw.count("[") + raw.count("{")
    return len(raw.translate(None, _NOT_STRUCTURE))


def _values_outside_strings(raw: bytes | str, limit: int) -> int:
    """The commas and opening brackets outside strings, counted until past ``limit``: a few passes at C speed over a
    chunk at a time (a text of many values is refused after its first chunks, and one of many short strings costs
    no list of them all). In each chunk escaped backslashes, then escaped quotes, are taken out first, so every
    ``"`` left opens or closes a string as the decoder reads it (a chunk never ends inside a run of backslashes that
    would pair differently; a backslash outside a string is bad JSON, refused where it stands)."""
    data = raw.encode(errors="surrogatepass") if isinstance(raw, str) else raw
    count = 0
    inside = False
    start, size = 0, len(data)
    while start < size and count <= limit:
        chunk = data[start : start + _CHUNK]
        if start + len(chunk) < size:
            plain = len(chunk.rstrip(b"\\"))
            chunk = chunk[: plain + (len(chunk) - plain) // 2 * 2]  # (the rest of the run starts the next chunk)
        start += len(chunk)
        pieces = chunk.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')
        count += len(b"".join(pieces[1::2] if inside else pieces[0::2]).translate(None, _NOT_STRUCTURE))
        if len(pieces) % 2 == 0:  # an odd number of quotes in the chunk
            inside = not inside
    return count
