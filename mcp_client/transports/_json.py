"""JSON on the wire, both ways: :func:`dumps` / :func:`dump_bytes` write every message of every transport;
:func:`loads` reads every message.

Messages are written compact, in UTF-8 (non-ASCII characters are not escaped) and without ``NaN`` or
infinities, which are not JSON (``ValueError`` instead).

Both directions run on pydantic-core's JSON engine (a dependency already, through pydantic), which turns a small
message into bytes about four times faster than the standard library's encoder and reads one about twice as
fast as ``json.loads`` (which, for its part, spends more time skipping whitespace and sniffing the byte encoding
than the C scanner spends on the message). Whatever the fast engine refuses, or writes differently from the
standard library, takes the standard library's path, so the values and the errors are the standard library's:

* reading, pydantic-core refuses what ``json.loads`` refuses, and also a lone surrogate escape (``"\\ud800"``),
  which ``json.loads`` accepts: anything it refuses is read again by ``json.loads``;
* writing, ``NaN`` and infinities come out of pydantic-core as bare tokens: any output that holds the letters
  ``NaN`` or ``Infinity`` (in a string, too) is written again by the standard library, which raises
  ``ValueError`` for a non-finite number; a value neither engine knows raises ``TypeError``. pydantic-core also
  writes a few Python types the standard library refuses (``datetime``, ``UUID``, ``bytes`` as UTF-8 text,
  tuples as keys), in their usual JSON form.

Reading shares the strings of keys, which repeat from message to message, through pydantic-core's process-wide
string cache, but not the strings of values: texts, ids and progress tokens seldom repeat, and kept in that cache
(16,384 entries) they held about 1 MiB that nothing reused, filling it over the first tens of thousands of calls.

A value nested deeper than the decoders' recursion limits is refused with ``ValueError`` like any bad JSON
(pydantic-core stops at a few hundred levels and ``json.loads`` is asked; its ``RecursionError`` past about a
thousand levels, which is no ``ValueError``, is turned into one), so every reader that reports bad JSON reports
this too.
"""

from __future__ import annotations

import json

from pydantic_core import PydanticSerializationError, from_json, to_json

__all__ = ["dump_bytes", "dumps", "loads"]

_stdlib_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def dump_bytes(message: object) -> bytes:
    """The compact UTF-8 JSON of ``message`` (``ValueError`` for ``NaN`` or infinities, ``TypeError`` for
    non-JSON values)."""
    try:
        data = to_json(message)
    except PydanticSerializationError:
        return _stdlib_dumps(message).encode()  # raises the standard library's TypeError (or ValueError)
    if b"NaN" in data or b"Infinity" in data:  # a non-finite number, or only those letters in a string
        return _stdlib_dumps(message).encode()
    return data


def dumps(message: object) -> str:
    """The compact JSON text of a message (``ValueError`` for ``NaN`` or infinities, ``TypeError`` for non-JSON)."""
    return dump_bytes(message).decode()


def loads(raw: bytes | str) -> object:
    """The JSON value in ``raw`` (UTF-8 if bytes). Raises ``ValueError`` (``UnicodeDecodeError`` included), also
    for a value nested too deeply to decode."""
    try:
        return from_json(raw, cache_strings="keys")
    except ValueError:
        pass  # refused: not JSON (json.loads raises its own error), too deep, or a lone surrogate escape
    try:
        return json.loads(raw.decode() if isinstance(raw, bytes) else raw)  # UTF-8 only, never UTF-16/32
    except RecursionError:
        raise ValueError("nested too deeply to decode") from None
