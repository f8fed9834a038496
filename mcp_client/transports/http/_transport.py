"""The transport recipe :func:`http` builds, and the engine its connections send through.

Connecting an :class:`HttpTransport` yields an ``_HttpConnection`` inside a task group of its own. With no client
given, the engine is httpcore2's connection pool driven directly, or, where httpx2's client has work to do (an auth
flow, an environment proxy), an ``httpx2.AsyncClient`` made here (:func:`engine_kind` decides); either is closed
with the connection. A caller's own client, of either line (``httpx2.AsyncClient`` or httpx 0.28's
``httpx.AsyncClient``), is used exactly as given: never modified, never closed.
"""

from __future__ import annotations

import urllib.request
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import anyio
import httpx2

from mcp_client._httpx import HTTPX2, HttpxLine, as_httpx2, auth_for, line_of
from mcp_client._redact import redacted_url, remember_secrets
from mcp_client._typed import building_http_client
from mcp_client.transports._http_endpoint import endpoint_key, pause_clocks_while_signing_in
from mcp_client.transports.base import Connection, MessageHandler, Transport
from mcp_client.transports.bounded_body import bounded_auth
from mcp_client.transports.http._connection import _HttpConnection
from mcp_client.transports.http._engine import ClientEngine, CoreEngine, Engine
from mcp_client.transports.http._state import _CLOSE_BUDGET, ConnectionSettings
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

    def __post_init__(self) -> None:
        remember_secrets(self.url, self.headers)  # for the last line of defence (see mcp_client._redact)

    @property
    def description(self) -> str:
        """The URL without its userinfo, query and path secrets (see :func:`mcp_client._redact.redacted_url`)."""
        return redacted_url(self.url)

    @property
    def carries_headers(self) -> bool:
        return True

    @property
    def era_cache_key(self) -> str | None:
        """The endpoint's origin and path: the era is a property of the server behind it."""
        return endpoint_key(self.url)

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        with building_http_client(self.description):
            engine, line = _engine_for(self)
        pause_clocks_while_signing_in(self.auth, handler)
        try:
            async with anyio.create_task_group() as tg:
                settings = ConnectionSettings(self.url, self.description, self.headers, self.max_message_size)
                connection = _HttpConnection(settings, engine, handler, tg, line)
                try:
                    yield connection
                finally:
                    with anyio.CancelScope(shield=True):
                        await connection.close()
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_BUDGET):
                await engine.aclose()


EngineKind = Literal["httpcore2", "httpx2", "caller's client"]


def engine_kind(transport: HttpTransport) -> EngineKind:
    """Which engine a connection of ``transport`` sends through (docs/design.md, "HTTP: two engines").

    * ``"caller's client"``: ``client=`` was given; it is used as given.
    * ``"httpx2"``: an ``httpx2.AsyncClient`` made here, when httpx2's client has work to do: an ``auth=`` flow
      (its challenge and retry loop), a proxy named by the environment (``HTTP_PROXY``/``HTTPS_PROXY``/
      ``ALL_PROXY``, with ``NO_PROXY``), credentials in the URL, or a URL httpcore2 cannot be given as is.
    * ``"httpcore2"``: otherwise, httpcore2's connection pool driven directly.
    """
    if transport.client is not None:
        return "caller's client"
    if transport.auth is not None or _environment_names_a_proxy():
        return "httpx2"
    try:
        url = httpx2.URL(transport.url)
    except httpx2.InvalidURL:
        return "httpx2"  # every request fails as it is built, as it always has
    if url.scheme not in ("http", "https") or not url.host or url.userinfo:
        return "httpx2"
    return "httpcore2"


def _environment_names_a_proxy() -> bool:
    proxies = urllib.request.getproxies()
    return any(proxies.get(scheme) for scheme in ("http", "https", "all"))


def _engine_for(transport: HttpTransport) -> tuple[Engine, HttpxLine]:
    limits = transport.limits or DEFAULT_LIMITS
    kind = engine_kind(transport)
    if kind == "httpcore2":
        return CoreEngine(httpx2.URL(transport.url), _as_httpx2_limits(limits), DEFAULT_TIMEOUT), HTTPX2
    if transport.client is not None:
        client, owned = as_httpx2(transport.client), False
    else:
        client, owned = _new_client(limits), True
    line = line_of(client)
    endpoint: httpx2.URL | str = transport.url
    with suppress(line.invalid_url):  # an invalid URL fails each request as it is built, as a TransportError
        endpoint = line.url(transport.url)  # parsed once, not per request
    auth = bounded_auth(line, auth_for(line, transport.auth))  # (httpx reads a retried response whole otherwise)
    return ClientEngine(client, endpoint, auth, owned=owned), line


def _as_httpx2_limits(limits: httpx2.Limits | httpx.Limits) -> httpx2.Limits:
    if isinstance(limits, httpx2.Limits):
        return limits
    return httpx2.Limits(  # httpx's Limits: the same three numbers
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
    )


def _new_client(limits: httpx2.Limits | httpx.Limits) -> httpx2.AsyncClient:
    """The ``httpx2.AsyncClient`` :func:`http` makes when it needs one: httpx2's own (environment proxies and all)."""
    return httpx2.AsyncClient(limits=_as_httpx2_limits(limits), timeout=DEFAULT_TIMEOUT, follow_redirects=False)


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
            :class:`~mcp_client.TransportError`. Redirects are not followed whatever its setting. By default
            httpcore2's connection pool is driven directly, or an ``httpx2.AsyncClient`` is made when ``auth``, a
            proxy in the environment or credentials in ``url`` need one; either is closed with the connection.
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
