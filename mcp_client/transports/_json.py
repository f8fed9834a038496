"""JSON on the wire, both ways: :func:`dumps` writes every message of every transport; :func:`loads` is
``json.loads`` for UTF-8 bytes, minus its per-call regex passes.

Messages are written compact, in UTF-8 (non-ASCII characters are not escaped) and without ``NaN`` or
infinities, which are not JSON (``ValueError`` instead).

``json.loads`` spends more time skipping whitespace around the value (two regex matches) and sniffing the byte
encoding than the C scanner spends on a small message. MCP messages are UTF-8 (RFC 8259 for JSON on the wire; the
stdio transport says so outright), so the bytes are decoded as that and handed to the scanner directly; text with
whitespace around it takes ``json.loads``'s path. Same results and the same ``ValueError`` for what is not JSON.

A value nested deeper than the decoder's recursion limit (about a thousand levels) makes the scanner raise
``RecursionError``, which is no ``ValueError``: it is turned into one here, so every reader that reports bad JSON
reports this too, and no caller has to know.
"""

from __future__ import annotations

import json

__all__ = ["dumps", "loads"]

_scan = json.JSONDecoder().raw_decode

dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
"""The compact JSON text of a message (``ValueError`` for ``NaN`` or infinities, ``TypeError`` for non-JSON)."""


def loads(raw: bytes | str) -> object:
    """The JSON value in ``raw`` (UTF-8 if bytes). Raises ``ValueError`` (``UnicodeDecodeError`` included), also
    for a value nested too deeply to decode."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    try:
        value, end = _scan(text)
    except json.JSONDecodeError:
        return _json_loads(text)  # leading whitespace, or not JSON: its own error message
    except RecursionError:
        raise _too_deep() from None
    if end != len(text) and text[end:].strip(" \t\n\r"):  # JSON's own whitespace only, as json.loads allows
        return _json_loads(text)  # raises "Extra data" as json.loads would
    return value


def _json_loads(text: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:
        raise _too_deep() from None


def _too_deep() -> ValueError:
    return ValueError("nested too deeply to decode")
