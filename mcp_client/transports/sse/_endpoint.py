"""Where an HTTP+SSE server wants its messages POSTed, and which URLs are known to speak HTTP+SSE.

Pure: no I/O. The ``endpoint`` event's data is a URL relative to the SSE URL; it must stay on the SSE URL's
origin (scheme, host and port, read as the HTTP library connects: :mod:`mcp_client.transports.origin`), or a
server (or whatever sits between) could make the client POST its messages,
and the credentials on them, to another origin. :data:`KNOWN_SSE_ENDPOINTS` remembers, for this process, the
Streamable HTTP URLs that turned out to be HTTP+SSE servers, so ``http(url)`` goes straight to the GET next time.
"""

from __future__ import annotations

from urllib.parse import urljoin

from mcp_client._redact import redacted_url
from mcp_client.errors import TransportError
from mcp_client.transports.origin import Origin, origin, same_origin

__all__ = ["KNOWN_SSE_ENDPOINTS", "KnownSseEndpoints", "message_endpoint", "origin_of"]


def origin_of(url: str) -> Origin:
    """The origin of ``url``, as :func:`mcp_client.transports.origin.origin` reads it (raises ``ValueError``)."""
    return origin(url)


def message_endpoint(sse_url: str, data: bytes) -> str:
    """The absolute URL an ``endpoint`` event names, resolved against ``sse_url``; refused when it leaves the origin.

    Raises:
        TransportError: the data is not text, is empty, or names another origin (``written=False``).
    """
    try:
        relative = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise TransportError(
            f"the endpoint event of {redacted_url(sse_url)} is not UTF-8 text", written=False
        ) from None
    if not relative:
        raise TransportError(f"the endpoint event of {redacted_url(sse_url)} names no URL", written=False)
    endpoint = urljoin(sse_url, relative)
    if not same_origin(endpoint, sse_url):  # (a URL whose origin cannot be read is on no one's)
        raise TransportError(
            f"the server at {redacted_url(sse_url)} named a message endpoint on another origin "
            f"({redacted_url(endpoint)}); refused",
            written=False,
        )
    return endpoint


class KnownSseEndpoints:
    """The URLs given to ``http()`` that answered as HTTP+SSE servers, for this process (bounded, oldest out)."""

    def __init__(self, limit: int = 1024) -> None:
        self._urls: dict[str, None] = {}
        self._limit = limit

    def __contains__(self, url: object) -> bool:
        return url in self._urls

    def remember(self, url: str) -> None:
        """``url`` speaks HTTP+SSE."""
        if len(self._urls) >= self._limit and url not in self._urls:
            self._urls.pop(next(iter(self._urls)))
        self._urls[url] = None

    def forget(self, url: str) -> None:
        """``url`` no longer answers as an HTTP+SSE server."""
        self._urls.pop(url, None)


KNOWN_SSE_ENDPOINTS = KnownSseEndpoints()
"""The process-wide memory ``http()`` consults before its first POST."""
