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

What a message costs to read is bounded by what it holds, not only by its size: 32 MiB of ``{},`` is ten million
dictionaries (about 5 s of the event loop and 825 MiB), while 32 MiB of one string takes 50 ms. Reading holds the
interpreter's lock (a worker thread would freeze the loop all the same), so a message that may hold more than
``max_values`` values is refused before it is decoded, with :class:`TooManyValues` (a ``ValueError``). The count is
taken at C speed: first an upper bound in one pass (commas and opening brackets, strings' included); only a message
that passes it is counted again without what its strings hold, so a long text full of commas (a CSV file, JSON as
text) is read like any text, and a message of many values costs a few passes before it is refused. The default,
:data:`DEFAULT_MAX_VALUES`, is one value per :data:`BYTES_PER_VALUE` bytes of the default 32 MiB size limit; a
transport's ``max_message_size`` raises both (:func:`max_values_for`).
"""

from __future__ import annotations

import json

from pydantic_core import PydanticSerializationError, from_json, to_json

from mcp_client.protocol.json_values import BYTES_PER_VALUE, values_beyond

__all__ = ["BYTES_PER_VALUE", "DEFAULT_MAX_VALUES", "TooManyValues", "dump_bytes", "dumps", "loads", "max_values_for"]

DEFAULT_MAX_VALUES = 32 * 1024 * 1024 // BYTES_PER_VALUE
"""Most values one message may hold by default (131,072: about 30 ms of decoding at worst, a few MiB)."""


class TooManyValues(ValueError):
    """A message that may hold more values than the limit: refused before it is decoded."""


def max_values_for(max_message_size: int) -> int:
    """The values a message may hold under the size limit ``max_message_size`` (at least the default)."""
    return max(DEFAULT_MAX_VALUES, max_message_size // BYTES_PER_VALUE)


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


def loads(raw: bytes | str, *, max_values: int = DEFAULT_MAX_VALUES) -> object:
    """The JSON value in ``raw`` (UTF-8 if bytes). Raises ``ValueError`` (``UnicodeDecodeError`` included), also
    for a value nested too deeply to decode, and :class:`TooManyValues` for one that may hold more than
    ``max_values`` values."""
    if len(raw) > max_values and values_beyond(raw, max_values):
        raise TooManyValues(f"more than {max_values:,} values in one message")
    try:
        return from_json(raw, cache_strings="keys")
    except ValueError:
        pass  # refused: not JSON (json.loads raises its own error), too deep, or a lone surrogate escape
    try:
        return json.loads(raw.decode() if isinstance(raw, bytes) else raw)  # UTF-8 only, never UTF-16/32
    except RecursionError:
        raise ValueError("nested too deeply to decode") from None
