"""What an HTTP connection sends its exchanges through: httpcore2's connection pool, or an httpx ``AsyncClient``.

The connection builds a request (method, headers, body, timeout) and sends it; the answer comes back streamed, as
an :class:`Answer`: the few things the reader looks at (status, headers, the headers that were sent, httpcore's
network stream) and the body. Two engines produce them:

* :class:`CoreEngine` drives an ``httpcore2.AsyncConnectionPool`` directly: pooling, TLS, keep-alive and the
  HTTP/1.1 state machine stay httpcore2's; what httpx2's client adds on top (its ``Request``/``Response`` models,
  header normalisation, the auth and redirect loops, the exception wrapping per chunk) is not paid per request.
  It adds ``Host`` and ``Content-Length``, keeps cookies the way httpx2's client does, decodes ``gzip`` and
  ``deflate`` bodies (through the one bounded reader), and raises httpx2's exceptions (mapped from httpcore2's
  as httpx2 maps them), so the layers above see one exception tree.
* :class:`ClientEngine` sends through an ``httpx2.AsyncClient`` (or httpx 0.28's): a caller's own client, used as
  given, or the one :func:`~mcp_client.transports.http.http` makes when an auth flow or an environment proxy needs
  httpx2's client (the choice is :func:`~mcp_client.transports.http._transport.engine_kind`'s).

It touches the network only through the pool or the client it was given.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import httpcore2
import httpx2

from mcp_client._version import __version__
from mcp_client.transports.bounded_body import ACCEPT_ENCODING, inflatable, pieces, refused
from mcp_client.transports.http._network import WRITING, NetworkBackend

if TYPE_CHECKING:
    import ssl

__all__ = ["Answer", "ClientEngine", "CoreEngine", "Engine"]

USER_AGENT = f"mcp_client/{__version__}"
"""Sent by the engine over httpcore2 when the caller's headers name none."""


_SHARED_HEADERS = 256
"""Encoded header pairs kept for reuse (host, accept, content type, protocol version, method, tool names...)."""


class SentRequest(Protocol):
    """The request an answer belongs to, as far as the reader looks at it."""

    @property
    def headers(self) -> Mapping[str, str]: ...


class Answer(Protocol):
    """A streamed HTTP response: an ``httpx2.Response`` (or httpx's), or the core engine's own."""

    @property
    def status_code(self) -> int: ...

    @property
    def reason_phrase(self) -> str: ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Looked up by lower-case name."""
        ...

    @property
    def request(self) -> SentRequest: ...

    @property
    def extensions(self) -> Mapping[str, Any]: ...

    def aiter_raw(self) -> AsyncGenerator[bytes, None]: ...

    def aiter_bytes(self) -> AsyncGenerator[bytes, None]: ...

    async def aclose(self) -> None: ...


class Engine(Protocol):
    """Builds requests to the connection's endpoint and sends them, answers streamed."""

    def build(self, method: str, headers: dict[str, str], body: bytes | None, timeout: float | None) -> Any:
        """A request to the endpoint (``headers``: lower-case names); raises at once for what cannot be sent."""
        ...

    async def send(self, request: Any) -> Answer:
        """Send ``request``; its answer's body is left to be read (and the answer closed) by the caller."""
        ...

    def stream_client(self) -> tuple[Any, Any]:
        """An httpx client and the ``auth=`` for its sends, for the HTTP+SSE fallback's GET stream and POSTs."""
        ...

    async def aclose(self) -> None:
        """Close what this engine owns (a caller's client is not)."""
        ...


class ClientEngine:
    """Sends through an httpx ``AsyncClient``: redirects never followed, ``auth`` on every request."""

    def __init__(self, client: httpx2.AsyncClient, endpoint: httpx2.URL | str, auth: Any, *, owned: bool) -> None:
        self.client = client
        self._endpoint = endpoint
        self._auth = auth
        self._owned = owned

    def build(self, method: str, headers: dict[str, str], body: bytes | None, timeout: float | None) -> Any:
        headers = {**headers, "accept-encoding": ACCEPT_ENCODING}  # (not the client's: httpx 0.28 asks for zstd)
        if timeout is None:
            return self.client.build_request(method, self._endpoint, content=body, headers=headers)
        return self.client.build_request(method, self._endpoint, content=body, headers=headers, timeout=timeout)

    async def send(self, request: Any) -> Answer:
        response: httpx2.Response = await self.client.send(
            request, stream=True, follow_redirects=False, auth=self._auth
        )
        return response

    def stream_client(self) -> tuple[Any, Any]:
        return self.client, self._auth

    async def aclose(self) -> None:
        if self._owned:
            await self.client.aclose()


_EXCEPTIONS: dict[type[Exception], type[httpx2.HTTPError]] = {
    httpcore2.ConnectTimeout: httpx2.ConnectTimeout,
    httpcore2.ReadTimeout: httpx2.ReadTimeout,
    httpcore2.WriteTimeout: httpx2.WriteTimeout,
    httpcore2.PoolTimeout: httpx2.PoolTimeout,
    httpcore2.TimeoutException: httpx2.TimeoutException,
    httpcore2.ConnectError: httpx2.ConnectError,
    httpcore2.ReadError: httpx2.ReadError,
    httpcore2.WriteError: httpx2.WriteError,
    httpcore2.NetworkError: httpx2.NetworkError,
    httpcore2.ProxyError: httpx2.ProxyError,
    httpcore2.UnsupportedProtocol: httpx2.UnsupportedProtocol,
    httpcore2.LocalProtocolError: httpx2.LocalProtocolError,
    httpcore2.RemoteProtocolError: httpx2.RemoteProtocolError,
    httpcore2.ProtocolError: httpx2.ProtocolError,
}
"""httpcore2's exceptions and the httpx2 ones they are raised as (the same table as httpx2's own transport)."""


def _as_httpx2(exc: Exception) -> Exception | None:
    """The httpx2 exception for an httpcore2 one; None for anything else."""
    for cls in type(exc).__mro__:
        mapped = _EXCEPTIONS.get(cls)
        if mapped is not None:
            return mapped(str(exc))
    return None


class _CoreRequest:
    """A request for the pool. It keeps only what httpcore2 needs; its headers are decoded when asked for (a 404's
    check of the session id it carried), not held a second time while its answer streams. Once written it knows
    its network stream, before any answer arrives (:mod:`._network`)."""

    __slots__ = ("body_follows", "core", "method", "network_stream")

    def __init__(self, core: httpcore2.Request, method: str, *, body_follows: bool) -> None:
        self.core = core
        self.method = method
        self.body_follows = body_follows
        self.network_stream: httpcore2.AsyncNetworkStream | None = None

    def get_extra_info(self, info: str) -> Any:
        """The network stream's ``get_extra_info`` (its socket, to cut a cancelled request); None before it."""
        return None if self.network_stream is None else self.network_stream.get_extra_info(info)

    @property
    def headers(self) -> dict[str, str]:
        return {name.decode("ascii"): value.decode("ascii") for name, value in self.core.headers}


class _CoreAnswer:
    """httpcore2's response with the face of the :class:`Answer` protocol."""

    __slots__ = ("_stream", "extensions", "headers", "request", "status_code")

    def __init__(self, response: httpcore2.Response, request: _CoreRequest, headers: dict[str, str]) -> None:
        self.status_code = response.status
        self.headers = headers
        self.request = request
        self.extensions = response.extensions
        self._stream: Any = response.stream

    @property
    def reason_phrase(self) -> str:
        phrase = self.extensions.get("reason_phrase")
        if isinstance(phrase, bytes) and phrase:
            return phrase.decode("ascii", errors="replace")
        return httpx2.codes.get_reason_phrase(self.status_code)

    async def aiter_raw(self) -> AsyncGenerator[bytes, None]:
        chunks = self._stream.__aiter__()  # httpcore2's own generator: closed here, never left to the collector
        try:
            async for chunk in chunks:
                yield chunk
        except Exception as exc:
            if (mapped := _as_httpx2(exc)) is None:
                raise
            raise mapped from exc
        finally:
            try:
                if hasattr(chunks, "aclose"):
                    await chunks.aclose()
            except Exception as exc:
                if (mapped := _as_httpx2(exc)) is None:
                    raise
                raise mapped from exc
            finally:
                await self.aclose()

    def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        """The body decoded: ``gzip`` and ``deflate`` as the one bounded reader inflates them, a piece at a time
        (:mod:`mcp_client.transports.bounded_body`); no other coding is asked for or read."""
        if inflatable(self.headers):
            return pieces(self)
        return refused(self.headers.get("content-encoding", ""))

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        except Exception as exc:
            if (mapped := _as_httpx2(exc)) is None:
                raise
            raise mapped from exc


class CoreEngine:
    """Sends through an ``httpcore2.AsyncConnectionPool`` of its own, to one endpoint (http or https)."""

    def __init__(self, endpoint: httpx2.URL, limits: httpx2.Limits, timeout: httpx2.Timeout) -> None:
        self._endpoint = endpoint
        self._url = httpcore2.URL(
            scheme=endpoint.raw_scheme, host=endpoint.raw_host, port=endpoint.port, target=endpoint.raw_path
        )
        self._host = endpoint.netloc.decode("ascii")
        ssl_context: ssl.SSLContext | None = None
        if endpoint.scheme == "https":
            ssl_context = httpx2.create_ssl_context()  # httpx2's TLS defaults (certifi, SSL_CERT_FILE/DIR)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=NetworkBackend(),
        )
        self._extensions = {"timeout": timeout.as_dict()}
        """The extensions of every request without a timeout of its own (httpcore2 only reads them)."""
        self._encoded: dict[tuple[str, str], tuple[bytes, bytes]] = {}
        self._cookies: httpx2.Cookies | None = None
        """Cookies the server set, sent back as httpx2's client would (None until the first ``Set-Cookie``)."""
        self._timeout = timeout
        self._fallback_client: httpx2.AsyncClient | None = None
        """Made only for a server that turns out to speak HTTP+SSE (rare): the pool carries no GET stream of ours."""

    def build(self, method: str, headers: dict[str, str], body: bytes | None, timeout: float | None) -> _CoreRequest:
        encoded = [] if "host" in headers else [self._encoded_header("host", self._host)]
        encoded += [self._encoded_header(name, value) for name, value in headers.items()]
        if "user-agent" not in headers:
            encoded.append(self._encoded_header("user-agent", USER_AGENT))
        if body is not None:
            encoded.append((b"content-length", b"%d" % len(body)))
        if self._cookies:
            cookie = httpx2.Request(method, self._endpoint, cookies=self._cookies).headers.get("cookie")
            if cookie is not None:
                encoded.append((b"cookie", cookie.encode("ascii")))
        if timeout is None:
            extensions = self._extensions
        else:
            extensions = {"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout)}
        core = httpcore2.Request(method, self._url, content=body, extensions=extensions)
        core.headers = encoded  # already bytes: not copied and checked a second time
        return _CoreRequest(core, method, body_follows=body is not None)

    def _encoded_header(self, name: str, value: str) -> tuple[bytes, bytes]:
        """``(name, value)`` as ASCII bytes; the pairs every request repeats are made once and shared."""
        pair = self._encoded.get((name, value))
        if pair is None:
            pair = (name.encode("ascii"), value.encode("ascii"))
            if len(self._encoded) < _SHARED_HEADERS:
                self._encoded[(name, value)] = pair
        return pair

    async def send(self, request: _CoreRequest) -> Answer:
        writing = WRITING.set(request)
        try:
            response = await self._pool.handle_async_request(request.core)
        except Exception as exc:
            if (mapped := _as_httpx2(exc)) is None:
                raise
            raise mapped from exc
        finally:
            WRITING.reset(writing)
        request.core.stream = ()  # the body was sent: not held while the answer streams
        headers: dict[str, str] = {}
        for raw_name, raw_value in response.headers:
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if "set-cookie" in headers:
            self._keep_cookies(request, response)
        return _CoreAnswer(response, request, headers)

    def _keep_cookies(self, request: _CoreRequest, response: httpcore2.Response) -> None:
        if self._cookies is None:
            self._cookies = httpx2.Cookies()
        sent = httpx2.Request(request.method, self._endpoint)
        self._cookies.extract_cookies(httpx2.Response(response.status, headers=response.headers, request=sent))

    def stream_client(self) -> tuple[Any, Any]:
        if self._fallback_client is None:
            self._fallback_client = httpx2.AsyncClient(timeout=self._timeout, follow_redirects=False)
        return self._fallback_client, None

    async def aclose(self) -> None:
        if self._fallback_client is not None:
            await self._fallback_client.aclose()
        await self._pool.aclose()
