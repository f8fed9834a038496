"""How a value travels in an MCP HTTP header (2026-07-28): as it is when that is safe, else base64-encoded.

The spec's rule for ``Mcp-Name`` and ``Mcp-Param-*`` values: a value that cannot travel as a plain header
(non-ASCII, control characters, leading or trailing whitespace), or that would be mistaken for an encoded one, is
sent as ``=?base64?<base64 of UTF-8>?=``. A protocol fact used by the tool headers (:mod:`.tool_headers`) and the
HTTP transport alike, so it lives here, below both. Pure: imports only the standard library.
"""

from __future__ import annotations

import base64
import re

__all__ = ["encode_header_value"]

_SENTINEL = re.compile(r"=\?base64\?.*\?=", re.DOTALL | re.IGNORECASE)


def encode_header_value(value: str) -> str:
    """``value`` as-is when it is a safe plain header value, else ``=?base64?...?=`` of its UTF-8 bytes.

    Safe: visible ASCII and inner spaces, and not itself shaped like an encoded value (a plain ``=?base64?...?=``
    would be decoded by the server, so it is encoded too). A tab counts as a control character, as the conformance
    suite and the reference SDK treat it, although RFC 9110 would allow it inside a field value.
    """
    plain = all(" " <= char <= "~" for char in value) and value == value.strip(" ")
    if plain and _SENTINEL.fullmatch(value) is None:
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode("ascii") + "?="
