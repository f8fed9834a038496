"""Server-controlled text made visible: no control character reaches a terminal, a log or a model raw.

A server chooses its name, its tools' names and descriptions, results, progress and log messages, error messages
and the lines its process writes to stderr. Any of them may hold terminal escapes (OSC 52 writes the clipboard,
OSC 0 the window title, CSI 2J clears the screen, a carriage return overwrites the line, a bidi override reorders
it). :func:`visible` writes every control character other than newline and tab as its Python escape (``\\x1b``,
``\\r``, ``\\u202e``): the C0 controls, DEL, the C1 controls and the bidirectional embeddings, overrides,
isolates and marks, and lone surrogates (which no terminal can be written). It is the package's one escape:
``for_model``, the CLI's console and the package's log records all use it (log records through
:mod:`mcp_client._log_guard`). Pure; nothing of the package.
"""

from __future__ import annotations

__all__ = ["json_text", "visible"]

_KEPT = {"\n", "\t"}
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]
"""Bidirectional embeddings, overrides, isolates and marks: they reorder what the reader sees."""


def _escape(code: int) -> str:
    named = {0x0D: "\\r", 0x0B: "\\x0b", 0x0C: "\\x0c"}
    if code in named:
        return named[code]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_SURROGATES = range(0xD800, 0xE000)
"""Lone surrogates: JSON may carry them (``"\\ud800"``) and the reader accepts them, but no terminal encoding can
write one: printed raw, the CLI ended in a ``UnicodeEncodeError`` traceback."""

_BEYOND_C0 = [0x7F, *range(0x80, 0xA0), *_BIDI, *_SURROGATES]
"""DEL, the C1 controls, the bidi marks and lone surrogates: what a terminal acts on (or cannot be written to it)
besides the C0 controls (which JSON escapes)."""

_TABLE: dict[int, str] = {code: _escape(code) for code in [*range(0x20), *_BEYOND_C0] if chr(code) not in _KEPT}


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written out as an escape (a lone surrogate too)."""
    return text.translate(_TABLE)


_JSON_TABLE: dict[int, str] = {code: f"\\u{code:04x}" for code in _BEYOND_C0}
"""What JSON itself leaves raw though a terminal acts on it (C1 controls such as the 8-bit CSI ``\\x9b``, DEL,
bidi overrides), as JSON escapes: the document still parses to the same strings."""


def json_text(document: str) -> str:
    """A JSON document (written with ``ensure_ascii=False``) safe for a terminal: JSON escapes the C0 controls,
    this the rest. Only strings can hold these characters, so the escapes are JSON's own ``\\uXXXX``."""
    return document.translate(_JSON_TABLE)
