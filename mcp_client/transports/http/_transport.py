"""The transport recipe :func:`http` builds, and the client it makes when the caller gives none.

Connecting an :class:`HttpTransport` yields an ``_HttpConnection`` inside a task group of its own. The client made
here is an ``httpx2.AsyncClient`` (httpcore2's pool hands each idle connection to one waiting request at a time)
and is closed with the connection. A caller's own client, of either line (``httpx2.AsyncClient`` or httpx 0.28's
``httpx.AsyncClient``), is used exactly as given: never modified, never closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import httpx2

from mcp_client._http_lines import as_httpx2
from mcp_client._redact import redacted_url
from mcp_client.transports.base import Connection, MessageHandler, Transport
from mcp_client.transports.http._connection import _HttpConnection
from mcp_client.transports.http._state import _CLOSE_BUDGET
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_LIMITS", "DEFAULT_TIMEOUT", "HttpTransport", "http"]

DEFAULT_LIMITS = httpx2.Limits(max_connections=None, max_keepalive_connections=20, keepalive_expiry=4.0)
"""No cap on connections (each streamed answer holds one): the number of calls in flight is the caller's business.
Idle connections are dropped after 4 s, before the 5 s after which common servers (uvicorn, Node) close them: with
equal timeouts a request could go out on a connection the server was closing, and fail with a read error."""
DEFAULT_TIMEOUT = httpx2.Timeout(connect=30.0, read=None, write=30.0, pool=None)
"""httpx2's own clocks; reading is unbounded here because the request policy (idle, maximum) bounds it."""


@dataclass(frozen=True, slots=True)
class HttpTransport(Transport):
    """POST to the MCP endpoint ``url``. Build it with :func:`http`."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    client: httpx2.AsyncClient | httpx.AsyncClient | None = field(default=None, compare=False)
    limits: httpx2.Limits | httpx.Limits | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    auth: httpx2.Auth | httpx.Auth | None = field(default=None, compare=False)

    @property
    def description(self) -> str:
        """The URL without its userinfo and query (either may hold a secret)."""
        return redacted_url(self.url)

    @property
    def carries_headers(self) -> bool:
        return True

    @property
    def era_cache_key(self) -> str | None:
        """The endpoint's origin and path: the era is a property of the server behind it."""
        url = httpx2.URL(self.url)
        return f"{url.scheme}://{url.netloc.decode('ascii')}{url.path}"

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        owned = self.client is None
        client = as_httpx2(self.client) if self.client is not None else _new_client(self.limits or DEFAULT_LIMITS)
        if self.auth is not None and getattr(self.auth, "waiting_on_a_person", "absent") is None:
            # A sign-in hook that waits for a person stops the idle clocks of the calls waiting on it.
            self.auth.waiting_on_a_person = getattr(handler, "waiting_on_a_person", None)  # type: ignore[union-attr]
        try:
            async with anyio.create_task_group() as tg:
                connection = _HttpConnection(self, client, handler, tg)
                try:
                    yield connection
                finally:
                    with anyio.CancelScope(shield=True):
                        await connection.close()
                    tg.cancel_scope.cancel()
        finally:
            if owned:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_BUDGET):
                    await client.aclose()


def _new_client(limits: httpx2.Limits | httpx.Limits) -> httpx2.AsyncClient:
    """The client :func:`http` makes: httpx2's own (environment proxies and all)."""
    if not isinstance(limits, httpx2.Limits):  # httpx's Limits: the same three numbers
        limits = httpx2.Limits(
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
        )
    return httpx2.AsyncClient(limits=limits, timeout=DEFAULT_TIMEOUT, follow_redirects=False)


def http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    client: httpx2.AsyncClient | httpx.AsyncClient | None = None,
    limits: httpx2.Limits | httpx.Limits | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    auth: httpx2.Auth | httpx.Auth | None = None,
) -> HttpTransport:
    """A transport to a Streamable HTTP MCP endpoint (2026-07-28 and 2025-11-25).

    Args:
        url: The MCP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``.
        headers: Sent on every POST (``Authorization`` and the like). The protocol's own headers win over these.
        client: An ``httpx2.AsyncClient``, or httpx 0.28's ``httpx.AsyncClient``, to use as given (its own limits,
            proxies, TLS, auth): it is never modified or closed here, and each library's exceptions are mapped to
            :class:`~mcp_client.TransportError`. Redirects are not followed whatever its setting. By default an
            ``httpx2.AsyncClient`` is made and closed here.
        limits: Connection limits of the client made here (default: no cap on connections, 20 kept alive).
            Not allowed together with ``client``.
        max_message_size: Largest message accepted from the server, in bytes; larger ones are dropped and the
            request they answer fails with a :class:`~mcp_client.ProtocolError`.
        auth: An ``httpx2.Auth`` or ``httpx.Auth`` for every request to the endpoint, e.g.
            :class:`mcp_client.auth.OAuth` (which is both); it is used with a caller-supplied ``client`` too, and an
            auth of the other line than the client's runs through an adapter.
    """
    if client is not None and limits is not None:
        raise ValueError("limits= applies only to the client http() makes; configure your own client instead")
    return HttpTransport(
        url=url,
        headers=dict(headers) if headers is not None else {},
        client=client,
        limits=limits,
        max_message_size=max_message_size,
        auth=auth,
    )
