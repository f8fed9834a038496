"""How an HTTP error status to a request becomes that request's outcome.

A 429 or 503 asks the client to come back later: a :class:`~mcp_client.TransportError` with ``status_code`` and
``retry_after`` (from ``Retry-After``) that the retry policy honours; it counts as written (a gateway may answer
so after the server behind it ran the tool). Any other error status
carrying a JSON-RPC error is that error, answering the POST whatever id it names (``-32022`` at 400 or
``-32601`` at 404 raise the right :class:`~mcp_client.ServerError`, and the era probe can fall back). A 4xx
without one becomes a synthetic JSON-RPC error (``-32601`` for 404/405, else ``-32600``); a 5xx without one is
a :class:`~mcp_client.TransportError`. Pure: reads the status, headers and body it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_client._types import JSONObject
from mcp_client.errors import TransportError
from mcp_client.transports._http_status import BACK_OFF_STATUSES, parse_retry_after
from mcp_client.transports._json import loads

if TYPE_CHECKING:
    from mcp_client.transports.http._engine import Answer

__all__ = ["outcome_of_error_status"]


def outcome_of_error_status(response: Answer, body: bytes) -> TransportError | JSONObject:
    """The failure of the request ``response`` answers, or the JSON-RPC ``error`` object to answer it with."""
    status = response.status_code
    if status in BACK_OFF_STATUSES:
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        detail = f"HTTP {status} {response.reason_phrase}".rstrip()
        if retry_after is not None:
            detail += f" (retry after {retry_after:g} s)"
        # The request reached something that answered: a gateway may send 429/503 after the server behind it ran
        # the tool, so the status proves nothing about whether it ran. Only the retry policy decides a re-send.
        return TransportError(detail, written=True, status_code=status, retry_after=retry_after)
    try:
        parsed = loads(body) if body.strip() else None
    except ValueError:
        parsed = None
    error_body = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error_body, dict):
        if status >= 500:
            return TransportError(f"HTTP {status} {response.reason_phrase}".rstrip(), written=True, status_code=status)
        code = -32601 if status in (404, 405) else -32600
        error_body = {"code": code, "message": f"HTTP {status} {response.reason_phrase}".rstrip()}
    return error_body
