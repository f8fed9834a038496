"""The state one Streamable HTTP connection keeps, and the small pieces every layer of it reads.

:class:`_ConnectionState` is the bottom of the connection's layers (state, then SSE events, then the 2025-11-25
session, then the per-request reader, then the connection itself): the caller's settings, the reader scopes and
open responses of the requests in flight, the era's session fields, and the helpers that parse a body, fail one
request or adopt a 2025-11-25 session. It touches nothing but its own fields and the session's handler.

The layers are one line of classes, one file each, each importing only the file below it (``_transport`` >
``_connection`` > ``_reader`` > ``_session`` > ``_events`` > ``_state``): the fields are declared here, once, and
the transport hands the connection its settings as a value (:class:`ConnectionSettings`), so nothing here knows
:class:`~mcp_client.transports.http.HttpTransport`.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from mcp_client._httpx import HTTPX2, HttpxLine
from mcp_client._log_guard import package_logger
from mcp_client._redact import scrub
from mcp_client._typed import sole_error
from mcp_client._types import JSONObject, RequestId
from mcp_client.errors import TransportError
from mcp_client.policy.ids import wire_id
from mcp_client.transports._http_headers import encode_header_value
from mcp_client.transports._json import loads, max_values_for
from mcp_client.transports._message_head import HEAD_SIZE, response_id_from_head
from mcp_client.transports.base import MessageHandler
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE, batch_hooks

if TYPE_CHECKING:
    from mcp_client.transports.http._engine import Answer, Engine

logger = package_logger("mcp_client.http")

_SIDE_TIMEOUT = 30.0
"""Notifications, responses and the closing DELETE: short exchanges with no policy of their own."""
_CLOSE_BUDGET = 2.0
_DRAIN_BUDGET = 1.0
"""How long the end of an answered SSE stream is waited for, so its connection can be reused."""
_MAX_ERROR_BODY = 1024 * 1024
_ACCEPT = "application/json, text/event-stream"
_SSE = "text/event-stream"


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    """What a connection takes from its transport's settings, as a value."""

    url: str
    where: str
    """The URL as errors show it (no password, no query)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """The caller's headers."""
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE


class _ConnectionState:
    """What one connection knows; the layers above it read and write these fields."""

    def __init__(
        self,
        settings: ConnectionSettings,
        engine: Engine,
        handler: MessageHandler,
        task_group: anyio.abc.TaskGroup,
        line: HttpxLine = HTTPX2,
    ) -> None:
        self._url = settings.url
        self._where = settings.where
        """The URL as errors show it (no password, no query)."""
        self._base_headers = {name.lower(): value for name, value in settings.headers.items()}
        """The caller's headers, names in lower case: a plain dict is merged into each request far faster than
        an ``httpx2.Headers``, and lower case lets ours replace theirs by key."""
        self._line = line
        """The library whose exceptions the engine raises (httpx2, or a caller's httpx)."""
        self._max_message_size = settings.max_message_size
        self._engine = engine
        self._handler = handler
        self._batch_begin, self._batch_end = batch_hooks(handler)
        self._task_group = task_group
        self._streams: dict[RequestId, anyio.CancelScope] = {}
        self._open_responses: dict[RequestId, object] = {}
        """httpcore's network stream under each response being read, to cut it at once when its request ends."""
        self._session_id: str | None = None
        """2025-11-25: the ``Mcp-Session-Id`` the server gave with its ``initialize`` answer."""
        self._version: str | None = None
        """The version for POSTs whose body does not name one: the legacy version chosen in ``initialize``, or the
        modern version of the last 2026-07-28 request."""
        self._closed = False
        self._legacy = False
        """2025-11-25: an ``initialize`` answer was adopted, so the session headers, GET and DELETE apply."""
        self._listener: anyio.CancelScope | None = None
        self.session_expired = False
        """2025-11-25: the server answered 404 to our session id; a new ``initialize`` starts a new session."""
        self._accepted = False
        """The server answered a POST of ours with a 2xx: it speaks Streamable HTTP (no HTTP+SSE fallback)."""
        self._unaccepted: dict[RequestId, JSONObject] = {}
        """The requests in flight while no POST was accepted yet, which an HTTP+SSE fallback would send again."""
        self._fallback_lock = anyio.Lock()

    def _accept(self) -> None:
        """A POST of ours was answered with a 2xx."""
        if not self._accepted:
            self._accepted = True
            self._unaccepted.clear()

    def _parse(self, raw: bytes, request_id: RequestId | None, *, body: bool = False) -> JSONObject | None:
        """The JSON object in ``raw``, or None after reporting it (see :func:`_blame` for the request it fails)."""
        try:
            message = loads(raw, max_values=max_values_for(self._max_message_size))
        except ValueError as exc:
            self._handler.on_invalid(f"not valid JSON ({exc})", raw[:HEAD_SIZE], _blame(raw, request_id, body=body))
            return None
        if not isinstance(message, dict):
            detail = f"a JSON {type(message).__name__} is not a JSON-RPC message"
            self._handler.on_invalid(detail, raw[:HEAD_SIZE], _blame(raw, request_id, body=body))
            return None
        return message

    def _adopt_session(self, message: JSONObject, response: Answer) -> None:
        """2025-11-25: remember the version the server chose and its session id, for every later POST."""
        result = message.get("result")
        if not isinstance(result, dict):
            return
        version = result.get("protocolVersion")
        if isinstance(version, str) and encode_header_value(version) == version:
            self._version = version
            self._legacy = True
        session_id = response.headers.get("mcp-session-id")
        if session_id and all("!" <= char <= "~" for char in session_id):
            self._session_id = session_id

    def _fail(self, request_id: RequestId, detail: str, *, written: bool) -> None:
        self._handler.on_request_failed(request_id, TransportError(detail, written=written))


def _closing_scope() -> anyio.CancelScope:
    """Closing a response: shielded from the reader's cancellation, bounded on its own (one scope, one timer)."""
    return anyio.CancelScope(shield=True, deadline=anyio.current_time() + _CLOSE_BUDGET)


def _shut_down(network_stream: object) -> None:
    """Shut down the socket under an httpcore network stream, if it has one (HTTP/1.1 on asyncio or trio)."""
    get_extra_info = getattr(network_stream, "get_extra_info", None)
    if get_extra_info is None:
        return
    try:
        sock = get_extra_info("socket")
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError, TypeError):  # already closed, or not a socket we can shut: the close follows
        logger.debug("could not shut down the socket of a released response", exc_info=True)


def _content_type(response: Answer) -> str:
    value: str = response.headers.get("content-type", "")
    return value.partition(";")[0].strip().lower()


def _blame(raw: bytes, stream_of: RequestId | None, *, body: bool = False) -> RequestId | None:
    """The request a broken message fails at once, or None (it is only reported).

    A JSON body answers the POST it came back on, whatever it holds. An SSE event fails only the request whose
    stream carried it, and only when its head shows for certain that it is that request's response: an event on
    one request's stream never fails another, and the standalone GET stream fails none.
    """
    if stream_of is None:
        return None
    if body:
        return stream_of
    return stream_of if wire_id(response_id_from_head(raw)) == stream_of else None


def _describe(exc: BaseException) -> str:
    """An HTTP library's exception as error text: any URL in it redacted, any configured secret hidden."""
    exc = sole_error(exc)  # (a group around one failure: that failure's text)
    return scrub(str(exc)) or type(exc).__name__
