"""The HTTP+SSE transport of 2024-11-05: a GET stream carries everything the server sends; every message the
client sends is a POST to the endpoint the stream's first event names.

Remote servers that never moved to Streamable HTTP still speak it, and hosts' ``mcp.json`` files name it
``"type": "sse"``. The modules: ``_endpoint`` (pure: the endpoint event's URL and its origin check, and the
URLs ``http()`` found to be HTTP+SSE), ``_connection`` (the stream's reader and the POSTs), ``_transport``
(:func:`sse` and the client it makes). ``http()`` uses the connection for its fallback. This package re-exports
the public names.
"""

from __future__ import annotations

from mcp_client.transports.sse._transport import SseTransport, sse

__all__ = ["SseTransport", "sse"]
