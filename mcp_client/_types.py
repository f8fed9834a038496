"""The type aliases every layer speaks in: a JSON object and a JSON-RPC request id. Imports nothing of the package."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JSONObject", "RequestId"]

JSONObject: TypeAlias = dict[str, Any]
"""A JSON object as :func:`json.loads` gives it: a message, its ``params`` or ``result``."""

RequestId: TypeAlias = int | str
"""A JSON-RPC request id (ours are integers; a server's requests may use strings)."""
