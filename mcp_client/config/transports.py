"""What the ``type`` (or ``transport``) key of an ``mcp.json`` server entry means, and the transport it builds.

Hosts spell the kinds differently (``"http"``, ``"streamable-http"``, ``"streamableHttp"``...); ``"sse"`` is the
HTTP+SSE transport of 2024-11-05 that Claude Desktop's and Cursor's files still name. An entry without the key is
stdio with ``command`` and Streamable HTTP (which falls back to HTTP+SSE by itself) with ``url``. The HTTP
stacks are imported only when an entry needs one. Pure apart from that import; :mod:`mcp_client.config.load` calls it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from mcp_client.config.values import problem
from mcp_client.transports.base import Transport

__all__ = ["check_kind", "url_transport"]

_HTTP_KINDS = frozenset({"http", "streamable-http", "streamableHttp", "streamable_http"})
_SSE_KINDS = frozenset({"sse"})
_STDIO_KINDS = frozenset({"stdio"})


def check_kind(kind: str | None, *, has_command: bool) -> None:
    """Raise the configuration problem of an unknown kind, or of a kind that does not fit the entry's keys."""
    if kind is None:
        return
    if kind not in _HTTP_KINDS | _SSE_KINDS | _STDIO_KINDS:
        raise problem("unknown transport {kind}; expected 'stdio', 'http' or 'sse'", kind=json.dumps(kind))
    if (kind in _STDIO_KINDS) != has_command:
        needs = "'command'" if kind in _STDIO_KINDS else "'url'"
        raise problem("transport {kind} needs {needs}", kind=json.dumps(kind), needs=needs)


def url_transport(kind: str | None, url: str, headers: Mapping[str, str]) -> Transport:
    """The transport of an entry with a ``url``: HTTP+SSE for ``"sse"``, else Streamable HTTP."""
    if kind in _SSE_KINDS:
        from mcp_client.transports.sse import sse

        return sse(url, headers=headers)
    from mcp_client.transports.http import http

    return http(url, headers=headers)
