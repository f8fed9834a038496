"""The two lines of the httpx API that mcp_client works with: httpx2 (its own) and httpx 0.28 (a caller's).

httpx2 is the maintained continuation of httpx: the same API under another import name, with classes of its own.
An ``httpx.URL`` or an ``httpx.Auth`` means nothing to an ``httpx2.AsyncClient`` (and the reverse), and an
``httpx2.ConnectError`` is no ``httpx.HTTPError``. Code that is handed a client of either line asks
:func:`line_of` which line it belongs to and takes from the :class:`HttpxLine` what must match it: URLs, the auth
sentinel and adapter, the exception classes. mcp_client builds its own clients on httpx2 (a dependency); httpx is
never imported here unless it is already loaded (then a caller may hand us its objects) or an auth must be adapted
to it.

Internally both lines are typed as httpx2: their APIs are the same, so a caller's ``httpx.AsyncClient`` is cast
to ``httpx2.AsyncClient`` where it enters (:func:`as_httpx2`).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import httpx2

if TYPE_CHECKING:
    from typing import TypeAlias

    import httpx

    EitherAsyncClient: TypeAlias = httpx2.AsyncClient | httpx.AsyncClient
    """An ``AsyncClient`` of either line (for annotations only: it exists for the type checker)."""
    EitherHeaders: TypeAlias = httpx2.Headers | httpx.Headers

__all__ = ["HTTPX2", "HttpxLine", "as_httpx2", "auth_for", "http_errors", "line_of"]


@dataclass(frozen=True, slots=True)
class HttpxLine:
    """One line of the httpx API (httpx2, or a caller's httpx 0.28): what code must take from the library a client
    belongs to. (Not a line of text: those are :mod:`mcp_client.transports.stream`'s.)"""

    name: str
    """``"httpx2"`` or ``"httpx"``."""
    module: ModuleType
    http_error: type[Exception]
    """The base of everything the line raises for a failed exchange (``HTTPError``)."""
    connect_error: type[Exception]
    invalid_url: type[Exception]
    not_written: tuple[type[Exception], ...]
    """Failures that mean the request never left: no connection, no pool slot, a URL scheme the client lacks."""
    auth_base: type
    use_client_default: object
    """The sentinel ``send(auth=...)`` takes for "the client's own auth"."""

    def url(self, value: str) -> Any:
        """``value`` parsed as this line's ``URL`` (raises :attr:`invalid_url`)."""
        return self.module.URL(value)


def _line(name: str, module: Any) -> HttpxLine:
    return HttpxLine(
        name=name,
        module=module,
        http_error=module.HTTPError,
        connect_error=module.ConnectError,
        invalid_url=module.InvalidURL,
        not_written=(module.ConnectError, module.ConnectTimeout, module.PoolTimeout, module.UnsupportedProtocol),
        auth_base=module.Auth,
        use_client_default=module.USE_CLIENT_DEFAULT,
    )


HTTPX2 = _line("httpx2", httpx2)
_lines: dict[ModuleType, HttpxLine] = {httpx2: HTTPX2}
"""Each httpx module seen, by the module itself (held here, so its identity is never reused), and its line."""


def _httpx() -> ModuleType | None:
    """httpx if it is loaded (a caller's objects can only be httpx's then), else None. Never imports it."""
    module = sys.modules.get("httpx")
    return module if module is not None and module is not httpx2 else None  # httpx2.alias_httpx() maps one to the other


def _httpx_line(module: ModuleType) -> HttpxLine:
    line = _lines.get(module)
    if line is None:
        line = _lines[module] = _line("httpx", module)
    return line


def line_of(client: object) -> HttpxLine:
    """The line ``client`` (an ``AsyncClient``) belongs to: httpx if it is an ``httpx.AsyncClient``, else httpx2."""
    module = _httpx()
    if module is not None and isinstance(client, module.AsyncClient):
        return _httpx_line(module)
    return HTTPX2


def http_errors() -> tuple[type[Exception], ...]:
    """``HTTPError`` of every line loaded in this process: what an exchange on a client of either line may raise."""
    module = _httpx()
    if module is None:
        return (httpx2.HTTPError,)
    return (httpx2.HTTPError, _httpx_line(module).http_error)


def as_httpx2(client: httpx2.AsyncClient | httpx.AsyncClient) -> httpx2.AsyncClient:
    """``client`` typed as httpx2 (the two lines have the same API); the object itself is untouched."""
    return cast(httpx2.AsyncClient, client)


def auth_for(line: HttpxLine, auth: object | None) -> Any:
    """What to pass as ``send(auth=...)`` to a client of ``line``: its sentinel when there is no auth, the auth
    itself when it is of that line, else an adapter of that line that runs the auth's own flow (an auth of the other
    line reads and sets the same attributes of requests and responses, so its flow works on either)."""
    if auth is None:
        return line.use_client_default
    if isinstance(auth, line.auth_base):
        return auth
    if line is HTTPX2:
        return _Httpx2Adapter(auth)
    return _httpx_adapter(auth)


class _Httpx2Adapter(httpx2.Auth):
    """An auth of the httpx line, run by an httpx2 client."""

    def __init__(self, auth: Any) -> None:
        self._auth = auth
        self.requires_request_body = bool(getattr(auth, "requires_request_body", False))
        self.requires_response_body = bool(getattr(auth, "requires_response_body", False))

    def sync_auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        flow: Generator[httpx2.Request, httpx2.Response, None] = self._auth.sync_auth_flow(request)
        return flow

    def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow: AsyncGenerator[httpx2.Request, httpx2.Response] = self._auth.async_auth_flow(request)
        return flow


def _httpx_adapter(auth: object) -> Any:
    """An auth of the httpx2 line, run by an httpx client (the class is made once httpx is in use)."""
    global _HttpxAdapter
    if _HttpxAdapter is None:
        import httpx

        class HttpxAdapter(httpx.Auth):
            def __init__(self, auth: Any) -> None:
                self._auth = auth
                self.requires_request_body = bool(getattr(auth, "requires_request_body", False))
                self.requires_response_body = bool(getattr(auth, "requires_response_body", False))

            def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
                flow: Generator[httpx.Request, httpx.Response, None] = self._auth.sync_auth_flow(request)
                return flow

            def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
                flow: AsyncGenerator[httpx.Request, httpx.Response] = self._auth.async_auth_flow(request)
                return flow

        _HttpxAdapter = HttpxAdapter
    return _HttpxAdapter(auth)


_HttpxAdapter: Any = None
