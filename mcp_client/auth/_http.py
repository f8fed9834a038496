"""The side exchanges of authorization (metadata, registration, token requests) and URL helpers.

Side exchanges go through their own client (the host's, of either line, if it gave one to :class:`OAuth`),
never through the MCP connection's, so the MCP client's auth never recurses into them. Redirects are not
followed, and answers are read up to :data:`MAX_DOCUMENT` bytes (after inflation), by the one bounded reader of
:mod:`mcp_client.transports.bounded_body`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from mcp_client._httpx import as_httpx2
from mcp_client._redact import redacted_url
from mcp_client.transports.bounded_body import ACCEPT_ENCODING, read_body
from mcp_client.transports.origin import same_origin as _same_origin

if TYPE_CHECKING:
    from mcp_client._httpx import EitherAsyncClient, EitherHeaders


__all__ = ["MAX_DOCUMENT", "Answer", "canonical", "fetch", "origin", "resource_covers", "same_origin", "shown"]

MAX_DOCUMENT = 1024 * 1024
"""Largest metadata document or token response read, in bytes."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A side exchange's answer: status, headers and the JSON body (None if it was not JSON)."""

    status: int
    headers: EitherHeaders
    body: Any

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return 200 <= self.status < 300

    def json_object(self) -> dict[str, Any] | None:
        """The body if it is a JSON object."""
        return self.body if isinstance(self.body, dict) else None


async def fetch(
    http: EitherAsyncClient,
    method: str,
    url: str,
    *,
    data: Mapping[str, str] | None = None,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Answer:
    """One side exchange. Raises the ``HTTPError`` of ``http``'s line when no answer came."""
    client = as_httpx2(http)  # the two lines' clients have the same API
    request_headers = {"Accept": "application/json", **(headers or {}), "Accept-Encoding": ACCEPT_ENCODING}
    if json_body is not None:
        request = client.build_request(method, url, json=json_body, headers=request_headers)
    else:
        request = client.build_request(
            method, url, data=dict(data) if data is not None else None, headers=request_headers
        )
    response = await client.send(request, stream=True, follow_redirects=False)
    try:
        raw = await read_body(response, MAX_DOCUMENT)
    finally:
        await response.aclose()
    body: Any = None
    if raw.complete:
        try:
            body = json.loads(raw.data) if raw.data.strip() else None
        except ValueError:
            body = None
    return Answer(response.status_code, response.headers, body)


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` as written (no trailing slash): the 2025-03-26 authorization base."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def same_origin(a: str, b: str) -> bool:
    """RFC 6454 origin equality (scheme, host, port with defaults filled in), read as the HTTP library connects:
    the package's one reading (:func:`mcp_client.transports.origin.same_origin`)."""
    return _same_origin(a, b)


def canonical(url: str) -> str:
    """The canonical server URI (RFC 8707 / MCP): lower-case scheme and host, no fragment, no query, no trailing
    slash unless the path is only ``/``."""
    parts = urlsplit(url)
    path = parts.path
    if len(path) > 1:
        path = path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the protected resource ``resource`` (from metadata) is the MCP server at ``server_url``: same
    origin, and its path is the server's path or a parent of it (segment-wise). No query or fragment allowed."""
    parts = urlsplit(resource)
    if parts.fragment or parts.query or not parts.scheme or not parts.netloc:
        return False
    if not same_origin(resource, server_url):
        return False
    mine = [s for s in parts.path.split("/") if s]
    theirs = [s for s in urlsplit(server_url).path.split("/") if s]
    return theirs[: len(mine)] == mine


def shown(url: str) -> str:
    """``url`` as an error shows it: the package's one redacted name (:func:`mcp_client._redact.redacted_url`)."""
    return redacted_url(url)
