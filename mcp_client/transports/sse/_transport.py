"""The transport recipe :func:`sse` builds: an HTTP+SSE server (2024-11-05), reached through one GET stream.

Connecting an :class:`SseTransport` makes the connection inside a task group of its own; the session's
``initialize`` opens the stream, inside the client's connect budget (a server that is not there, or not HTTP+SSE,
or that answers the GET with headers and then nothing, fails the connect by that budget). The client made here
(no ``client=`` given) is an ``httpx2.AsyncClient`` closed with the connection; a caller's client of either line
is used as given.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import httpx2

from mcp_client._httpx import as_httpx2, auth_for, line_of
from mcp_client._redact import redacted_url, remember_secrets
from mcp_client._typed import building_http_client
from mcp_client.transports._http_endpoint import endpoint_key, pause_clocks_while_signing_in
from mcp_client.transports.base import Connection, MessageHandler, Transport
from mcp_client.transports.bounded_body import bounded_auth
from mcp_client.transports.sse._connection import SseConnection
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE

if TYPE_CHECKING:
    import httpx

__all__ = ["SseTransport", "sse"]

_CLOSE_BUDGET = 2.0
_TIMEOUT = httpx2.Timeout(connect=30.0, read=None, write=30.0, pool=None)
"""Reading is unbounded: the stream is quiet between messages, and the request policy bounds every call."""
_LIMITS = httpx2.Limits(max_connections=None, max_keepalive_connections=20, keepalive_expiry=4.0)


@dataclass(frozen=True, slots=True)
class SseTransport(Transport):
    """GET the SSE stream at ``url``, POST every message to the endpoint it names. Build it with :func:`sse`."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    client: httpx2.AsyncClient | httpx.AsyncClient | None = field(default=None, compare=False)
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    auth: httpx2.Auth | httpx.Auth | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        remember_secrets(self.url, self.headers)  # for the last line of defence (see mcp_client._redact)

    @property
    def description(self) -> str:
        return redacted_url(self.url)

    @property
    def handshake_only(self) -> bool:
        """HTTP+SSE predates the stateless protocol: only ``initialize`` eras are spoken over it."""
        return True

    @property
    def era_cache_key(self) -> str | None:
        """The SSE URL's origin and path (the key cached results are shared under)."""
        return endpoint_key(self.url)

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        owned = self.client is None
        with building_http_client(self.description):
            client = as_httpx2(self.client) if self.client is not None else _new_client()
        pause_clocks_while_signing_in(self.auth, handler)
        try:
            async with anyio.create_task_group() as tg:
                connection = SseConnection(
                    self.url,
                    client=client,
                    handler=handler,
                    task_group=tg,
                    headers=self.headers,
                    auth=bounded_auth(line_of(client), auth_for(line_of(client), self.auth)),
                    max_message_size=self.max_message_size,
                )
                try:
                    yield connection  # (its first initialize opens the stream, inside the call's deadline)
                finally:
                    await connection.close()
                tg.cancel_scope.cancel()
        finally:
            if owned:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_BUDGET):
                    await client.aclose()


def _new_client() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(limits=_LIMITS, timeout=_TIMEOUT, follow_redirects=False)


def sse(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    client: httpx2.AsyncClient | httpx.AsyncClient | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    auth: httpx2.Auth | httpx.Auth | None = None,
) -> SseTransport:
    """A transport to an HTTP+SSE MCP server, the transport of protocol 2024-11-05 that Streamable HTTP replaced.

    The client GETs ``url`` and reads an event stream; its first event, ``endpoint``, names the URL (relative to
    ``url``, and refused unless on the same origin) to which every message is POSTed. Answers and the server's
    own messages arrive on the stream. The session starts with ``initialize`` (2025-11-25, or the older version
    the server picks); calls run under the same policies as over any transport, and a cancellation is a
    ``notifications/cancelled`` POST. If the stream drops, the calls waiting on it fail with a
    :class:`~mcp_client.TransportError` and the next call starts a new session on a new stream.

    ``http(url)`` falls back to this transport by itself when a server refuses its first POST and answers a GET
    with an ``endpoint`` event; use ``sse()`` when the configuration says ``"type": "sse"``.

    Args:
        url: The SSE URL, e.g. ``"http://127.0.0.1:8000/sse"``.
        headers: Sent on the GET and on every POST (``Authorization`` and the like).
        client: An ``httpx2.AsyncClient``, or httpx 0.28's ``httpx.AsyncClient``, to use as given (never modified
            or closed here). By default an ``httpx2.AsyncClient`` is made and closed here. Redirects are not
            followed whatever its setting.
        max_message_size: Largest message accepted from the server, in bytes; larger ones are dropped and the
            request they answer fails with a :class:`~mcp_client.ProtocolError`.
        auth: An ``httpx2.Auth`` or ``httpx.Auth`` for the GET and every POST, e.g. :class:`mcp_client.auth.OAuth`.
    """
    return SseTransport(
        url=url,
        headers=dict(headers) if headers is not None else {},
        client=client,
        max_message_size=max_message_size,
        auth=auth,
    )
