"""Header values of the Streamable HTTP transport: the 2026-07-28 routing headers and their encoding.

At 2026-07-28 every POST repeats parts of its body in headers (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name``) so that gateways can route without parsing JSON; the server rejects a POST whose headers do not match
its body (``-32020``). A value that cannot travel as a plain header (non-ASCII, control characters, leading or
trailing whitespace), or that would be mistaken for an encoded one, is sent as ``=?base64?<base64 of UTF-8>?=``
(:func:`~mcp_client.protocol.header_values.encode_header_value`, a protocol fact shared with the tool headers).
"""

from __future__ import annotations

from typing import Any

from mcp_client._types import JSONObject
from mcp_client.protocol.era import PROTOCOL_VERSION_KEY
from mcp_client.protocol.header_values import encode_header_value

__all__ = ["encode_header_value", "modern_version", "routing_name"]

_NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def modern_version(message: JSONObject) -> str | None:
    """The 2026-07-28-style protocol version stamped in ``params._meta``, or None for a legacy message."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def routing_name(message: JSONObject) -> str | None:
    """The ``Mcp-Name`` value of a request (tool or prompt name, resource URI, task id), already encoded."""
    method = message.get("method")
    key = _NAME_PARAM.get(method) if isinstance(method, str) else None
    params = message.get("params")
    if key is None or not isinstance(params, dict):
        return None
    return _header_scalar(params.get(key))


def _header_scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return encode_header_value(value)
    return None
