"""The Streamable HTTP transport: every message is a POST to one endpoint; each request's answer is read from
its own HTTP response, a JSON body or an SSE stream.

* One task per request in flight reads that request's response, in the connection's task group. A failure there
  (a 5xx, a dropped stream) fails that request only, through ``on_request_failed``; nothing else is touched.
* HTTP error statuses that carry a JSON-RPC error are delivered to the session as the response to the request, so
  ``-32022`` at 400 or ``-32601`` at 404 raise the right :class:`~mcp_client.ServerError` (and the era probe can
  fall back). A 4xx without one becomes a synthetic JSON-RPC error (``-32601`` for 404/405, else ``-32600``);
  a 5xx without one is a :class:`~mcp_client.TransportError`.
* Ending a request (answered, timed out, cancelled) closes its response stream. At 2026-07-28 that *is* the
  cancellation; at 2025-11-25 ``notifications/cancelled`` is POSTed as well.
* 2026-07-28 requests carry ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` from their body. At
  2025-11-25 the version the server chose in ``initialize`` and its ``Mcp-Session-Id`` go on every later POST, and
  the session is ended with a ``DELETE`` on close.
* Redirects are never followed (so credentials never reach another origin); a 3xx fails the request.
* A request whose connection could not even be opened (``httpx.ConnectError``: nothing was written) is sent once
  more, transparently; if that fails too, the request fails with ``written=False``. Nothing else is re-sent.
* 2025-11-25 only: after ``notifications/initialized`` a standalone ``GET`` stream is held open for what the server
  sends on its own (requests such as ``elicitation/create`` go to the session, which answers them by POST); a 405
  means the server has none. It reconnects a bounded number of times, honouring the server's ``retry:``.
* 2025-11-25 only (SEP-1699): a request's SSE stream that ends without the response, after the server sent an
  event id, is resumed with ``GET`` + ``Last-Event-ID`` after the server's ``retry:`` (default 1 s), at most twice.
  At 2026-07-28 a broken stream simply fails its request (the session may re-issue it with a new id).
* The client made here (no ``client=`` given) hands each idle pooled connection to one waiting request at a time;
  see :mod:`mcp_client.transports._http_pool`. A caller's own client is used exactly as given.
* A 404 to a request that carried ``Mcp-Session-Id`` means the server ended the session: the request fails with
  :class:`SessionExpired` (``status_code=404``) and :attr:`_HttpConnection.session_expired` is set, so the client
  can start a new session. 429 and 503 fail the request with ``status_code`` and ``retry_after`` (from
  ``Retry-After``), which the retry policy honours. They count as written: a status code never proves that the
  request did not run (a gateway may answer 503 after the server behind it ran the tool).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import cast

import anyio
import anyio.abc
import httpx

from mcp_client.errors import MCPClientError, SessionExpired, TransportError
from mcp_client.events import CancelMethod
from mcp_client.policy.ids import wire_id
from mcp_client.transports._http_headers import encode_header_value, modern_version, routing_name
from mcp_client.transports._http_pool import fair_pool
from mcp_client.transports._http_status import BACK_OFF_STATUSES, parse_retry_after
from mcp_client.transports._json import dumps, loads
from mcp_client.transports._message_head import HEAD_SIZE, response_id_from_head
from mcp_client.transports._sse import SSEDecoder, SSEEvent
from mcp_client.transports.base import Connection, JSONObject, MessageHandler, RequestId, Transport
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE, batch_hooks, cancellation

__all__ = ["DEFAULT_LIMITS", "DEFAULT_TIMEOUT", "HttpTransport", "SessionExpired", "encode_header_value", "http"]

logger = logging.getLogger("mcp_client.http")

DEFAULT_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=20, keepalive_expiry=4.0)
"""No cap on connections (each streamed answer holds one): the number of calls in flight is the caller's business.
Idle connections are dropped after 4 s, before the 5 s after which common servers (uvicorn, Node) close them: with
equal timeouts a request could go out on a connection the server was closing, and fail with a read error."""
DEFAULT_TIMEOUT = httpx.Timeout(connect=30.0, read=None, write=30.0, pool=None)
"""httpx's own clocks; reading is unbounded here because the request policy (idle, maximum) bounds it."""
_SIDE_TIMEOUT = httpx.Timeout(30.0)
"""Notifications, responses and the closing DELETE: short exchanges with no policy of their own."""
_CLOSE_BUDGET = 2.0
_DRAIN_BUDGET = 1.0
"""How long the end of an answered SSE stream is waited for, so its connection can be reused."""
_MAX_ERROR_BODY = 1024 * 1024
_ACCEPT = "application/json, text/event-stream"
_SSE = "text/event-stream"
_DEFAULT_RETRY = 1.0
"""Seconds to wait before resuming or reconnecting a stream when the server sent no ``retry:``."""
_MAX_RETRY = 60.0
"""A ``retry:`` longer than this is taken as this (a broken server must not park a request for hours)."""
_RESUME_ATTEMPTS = 2
"""GETs with ``Last-Event-ID`` tried for one request whose stream ended without its response (2025-11-25)."""
_LISTEN_RECONNECTS = 2
"""Reconnects of the standalone GET stream in a row that bring no message before it is given up."""
_NOT_WRITTEN = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)


@dataclass(slots=True)
class _StreamState:
    """What one request's SSE stream told us about resuming it (2025-11-25): the last event id and ``retry:``."""

    last_event_id: str | None = None
    retry: float | None = None

    def saw(self, decoder: SSEDecoder) -> None:
        if decoder.last_event_id is not None:
            self.last_event_id = decoder.last_event_id or None  # an empty id clears it
        if decoder.retry is not None:
            self.retry = min(decoder.retry / 1000.0, _MAX_RETRY)


@dataclass(frozen=True, slots=True)
class HttpTransport(Transport):
    """POST to the MCP endpoint ``url``. Build it with :func:`http`."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    client: httpx.AsyncClient | None = field(default=None, compare=False)
    limits: httpx.Limits | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    auth: httpx.Auth | None = field(default=None, compare=False)

    @property
    def description(self) -> str:
        return self.url

    @property
    def carries_headers(self) -> bool:
        return True

    @property
    def era_cache_key(self) -> str | None:
        """The endpoint's origin and path: the era is a property of the server behind it."""
        url = httpx.URL(self.url)
        return f"{url.scheme}://{url.netloc.decode('ascii')}{url.path}"

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        owned = self.client is None
        client = self.client or _new_client(self.limits or DEFAULT_LIMITS)
        if self.auth is not None and getattr(self.auth, "waiting_on_a_person", "absent") is None:
            # A sign-in hook that waits for a person stops the idle clocks of the calls waiting on it.
            self.auth.waiting_on_a_person = getattr(handler, "waiting_on_a_person", None)  # type: ignore[attr-defined]
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


def _new_client(limits: httpx.Limits) -> httpx.AsyncClient:
    """The client :func:`http` makes: httpx's own (environment proxies and all), with its pools made fair."""
    client = httpx.AsyncClient(limits=limits, timeout=DEFAULT_TIMEOUT, follow_redirects=False)
    for transport in (client._transport, *client._mounts.values()):
        if isinstance(transport, httpx.AsyncHTTPTransport):
            fair_pool(transport._pool)
    return client


class _HttpConnection(Connection):
    def __init__(
        self,
        transport: HttpTransport,
        client: httpx.AsyncClient,
        handler: MessageHandler,
        task_group: anyio.abc.TaskGroup,
    ) -> None:
        self._url = transport.url
        self._base_headers = {name.lower(): value for name, value in transport.headers.items()}
        """The caller's headers, names in lower case: a plain dict is merged into each request far faster than
        an ``httpx.Headers``, and lower case lets ours replace theirs by key."""
        self._endpoint: httpx.URL | str = transport.url
        with suppress(httpx.InvalidURL):  # (an invalid URL fails each request as it is built, as a TransportError)
            self._endpoint = httpx.URL(transport.url)  # parsed once, not per request
        self._max_message_size = transport.max_message_size
        self._client = client
        self._auth: httpx.Auth | httpx._client.UseClientDefault = (
            transport.auth if transport.auth is not None else httpx.USE_CLIENT_DEFAULT
        )
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

    # -- writing ------------------------------------------------------------------------------------------------

    def _headers(self, message: JSONObject, extra: Mapping[str, str] | None) -> dict[str, str]:
        headers = self._base_headers.copy()
        if extra:
            for key, value in extra.items():
                headers[key.lower()] = value
        headers["accept"] = _ACCEPT
        headers["content-type"] = "application/json"
        version = modern_version(message)
        method = message.get("method")
        if version is not None:
            headers["mcp-protocol-version"] = version
            if isinstance(method, str):
                headers["mcp-method"] = method
            name = routing_name(message)
            if name is not None:
                headers["mcp-name"] = name
        elif method != "initialize":
            if self._version is not None:
                headers["mcp-protocol-version"] = self._version
            if self._session_id is not None:
                headers["mcp-session-id"] = self._session_id
        return headers

    def _build(
        self, message: JSONObject, extra: Mapping[str, str] | None, timeout: httpx.Timeout | None
    ) -> httpx.Request:
        try:
            body = dumps(message).encode()
            headers = self._headers(message, extra)
            if timeout is None:
                return self._client.build_request("POST", self._endpoint, content=body, headers=headers)
            return self._client.build_request("POST", self._endpoint, content=body, headers=headers, timeout=timeout)
        except (httpx.HTTPError, httpx.InvalidURL, ValueError, TypeError, AttributeError) as exc:
            raise TransportError(f"could not build the HTTP request to {self._url}: {exc}", written=False) from exc

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        if self._closed:
            raise TransportError(f"the connection to {self._url} is closed", written=False)
        request_id: RequestId = message["id"]
        method = message.get("method")
        request = self._build(message, headers, None)
        version = modern_version(message)
        if version is not None:
            self._version = version
        elif method == "initialize":  # a new legacy session starts: forget the old one
            self._version = None
            self._session_id = None
            self._legacy = False
            self.session_expired = False
            self._stop_listening()
        scope = anyio.CancelScope()
        previous = self._streams.pop(request_id, None)
        if previous is not None:
            previous.cancel()
        self._streams[request_id] = scope
        try:
            # Not start(): the caller need not wait a loop turn for the reader to begin. A release() before it runs
            # cancels its scope before it is entered, and then nothing is sent.
            self._task_group.start_soon(self._exchange, request_id, method, request, scope, version is not None)
        except BaseException:
            self._forget(request_id, scope)
            scope.cancel()
            raise

    async def _post(self, message: JSONObject) -> None:
        """POST a notification or a response: the server accepts it with 202 (any 2xx will do)."""
        if self._closed:
            raise TransportError(f"the connection to {self._url} is closed", written=False)
        request = self._build(message, None, _SIDE_TIMEOUT)
        what = message.get("method", "response")
        try:
            response = await self._client.send(request, follow_redirects=False, auth=self._auth)
        except MCPClientError:
            raise  # an auth failure (sign-in refused, ...) is the caller's to see as it is
        except _NOT_WRITTEN as exc:
            raise TransportError(f"could not POST {what} to {self._url}: {_describe(exc)}", written=False) from exc
        except httpx.HTTPError as exc:
            raise TransportError(f"POST of {what} to {self._url} failed: {_describe(exc)}", written=True) from exc
        status = response.status_code
        if 200 <= status < 300:
            return
        detail = f"the server refused {what}: HTTP {status} {response.reason_phrase}"
        expired = self._expired_by(response)
        if expired is not None:
            raise expired
        raise TransportError(
            detail, written=True, status_code=status, retry_after=parse_retry_after(response.headers.get("retry-after"))
        )

    async def send_notification(self, message: JSONObject) -> None:
        await self._post(message)
        if message.get("method") == "notifications/initialized" and self._legacy and not self._closed:
            self._start_listening()

    async def send_response(self, message: JSONObject) -> None:
        await self._post(message)

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        closed = self.try_cancel(request_id, reason)
        if closed is not None:
            return closed
        self.release(request_id)
        await self._post(cancellation(request_id, reason))
        return CancelMethod.NOTIFICATION_AND_STREAM_CLOSE

    def try_cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod | None:
        """2026-07-28: closing the response stream is the cancellation, and that needs no waiting. (Requests that
        can be cancelled are sent once the era is settled: a legacy session is one whose ``initialize`` we adopted.)"""
        if self._legacy:
            return None
        self.release(request_id)
        return CancelMethod.STREAM_CLOSE

    def release(self, request_id: RequestId) -> None:
        scope = self._streams.pop(request_id, None)
        if scope is not None:
            scope.cancel()
            # The reader closes the response once it runs again; shutting the socket now means the server sees
            # the stream end in this loop turn, not after the reader's wake-up and httpx's close path.
            _shut_down(self._open_responses.pop(request_id, None))

    def _forget(self, request_id: RequestId, scope: anyio.CancelScope) -> None:
        if self._streams.get(request_id) is scope:
            del self._streams[request_id]

    async def close(self) -> None:
        """Stop every reader; at 2025-11-25 end the server's session with a DELETE (bounded, errors ignored)."""
        self._closed = True
        self._stop_listening()
        for scope in list(self._streams.values()):
            scope.cancel()
        self._streams.clear()
        if self._session_id is None or self.session_expired:
            return
        headers = {**self._base_headers, "mcp-session-id": self._session_id}
        if self._version is not None:
            headers["mcp-protocol-version"] = self._version
        with anyio.move_on_after(_CLOSE_BUDGET):
            try:
                response = await self._client.request(
                    "DELETE", self._url, headers=headers, timeout=_SIDE_TIMEOUT, follow_redirects=False, auth=self._auth
                )
                logger.debug("DELETE of session %s: HTTP %s", self._session_id, response.status_code)
            except httpx.HTTPError as exc:
                logger.debug("DELETE of session %s failed: %s", self._session_id, exc)

    # -- reading one request's answer ---------------------------------------------------------------------------

    async def _exchange(
        self,
        request_id: RequestId,
        method: object,
        request: httpx.Request,
        scope: anyio.CancelScope,
        modern: bool,
    ) -> None:
        try:
            with scope:
                await self._send_and_read(request_id, method, request, modern)
        except MCPClientError as exc:  # an auth failure: typed already, and not a broken channel (not retried)
            self._handler.on_request_failed(request_id, exc)
        except Exception as exc:  # one request's trouble never escapes into the task group
            logger.debug("request %s failed unexpectedly", request_id, exc_info=True)
            self._fail(request_id, f"the answer could not be read: {_describe(exc)}", written=True)
        finally:
            self._forget(request_id, scope)

    async def _send_and_read(self, request_id: RequestId, method: object, request: httpx.Request, modern: bool) -> None:
        response: httpx.Response | None = None
        for attempt in (1, 2):
            try:
                response = await self._client.send(request, stream=True, follow_redirects=False, auth=self._auth)
                break
            except httpx.ConnectError as exc:
                if attempt == 1:
                    logger.debug("could not connect for request %s (%s); trying once more", request_id, exc)
                    continue
                self._fail(request_id, f"could not connect to {self._url}: {_describe(exc)}", written=False)
            except _NOT_WRITTEN as exc:
                self._fail(request_id, f"could not reach {self._url}: {_describe(exc)}", written=False)
            except httpx.HTTPError as exc:
                self._fail(request_id, f"the request to {self._url} failed: {_describe(exc)}", written=True)
            return
        assert response is not None
        network_stream = response.extensions.get("network_stream")
        if network_stream is not None:
            self._open_responses[request_id] = network_stream
        try:
            await self._read(request_id, method, response, modern)
        except httpx.HTTPError as exc:
            self._fail(request_id, f"the answer from {self._url} broke off: {_describe(exc)}", written=True)
        finally:
            if network_stream is not None and self._open_responses.get(request_id) is network_stream:
                del self._open_responses[request_id]
            with _closing_scope():
                await response.aclose()

    async def _read(self, request_id: RequestId, method: object, response: httpx.Response, modern: bool) -> None:
        status = response.status_code
        if status == 202:
            self._fail(request_id, "server answered 202 to a request", written=True)
        elif 300 <= status < 400:
            location = response.headers.get("location")
            self._fail(request_id, f"HTTP {status}: redirect to {location!r} not followed", written=True)
        elif not 200 <= status < 300:
            await self._read_error(request_id, response)
        else:
            content_type = _content_type(response)
            if content_type == _SSE:
                await self._read_events(request_id, method, response, modern)
            elif content_type == "application/json":
                body = await _read_body(response, self._max_message_size + 1)
                self._read_json(request_id, method, response, body)
            else:
                body = await _read_body(response, 512)
                detail = f"HTTP {status} answer with unexpected content type {content_type or 'none'!r}"
                self._handler.on_invalid(detail, body, request_id)

    def _read_json(self, request_id: RequestId, method: object, response: httpx.Response, body: bytes) -> None:
        if len(body) > self._max_message_size:
            limit = self._max_message_size
            self._handler.on_invalid(
                f"message larger than the {limit}-byte limit was dropped", body[:HEAD_SIZE], request_id
            )
            return
        message = self._parse(body, request_id, body=True)
        if message is None:
            return
        if "error" in message and message.get("id") is None and "method" not in message:
            message["id"] = request_id
        if not self._deliver(request_id, method, response, message):
            self._handler.on_invalid("the JSON answer is not the response to the request", body[:HEAD_SIZE], request_id)

    async def _read_events(self, request_id: RequestId, method: object, response: httpx.Response, modern: bool) -> None:
        """Read the request's SSE stream to its response; at 2025-11-25 resume a stream that ended too early."""
        state = _StreamState()
        try:
            if await self._consume(request_id, method, response, state):
                return
            broke = "the SSE stream ended without a response"
        except httpx.HTTPError as exc:
            broke = f"the answer from {self._url} broke off: {_describe(exc)}"
        if modern or not self._legacy or state.last_event_id is None:
            self._fail(request_id, broke, written=True)
            return
        await self._resume(request_id, method, state, broke)

    async def _resume(self, request_id: RequestId, method: object, state: _StreamState, broke: str) -> None:
        """SEP-1699 polling: after the server's ``retry:``, GET the rest of the answer with ``Last-Event-ID``."""
        for attempt in range(1, _RESUME_ATTEMPTS + 1):
            await anyio.sleep(state.retry if state.retry is not None else _DEFAULT_RETRY)
            assert state.last_event_id is not None
            logger.debug("resuming request %s after event %r (attempt %d)", request_id, state.last_event_id, attempt)
            try:
                async with self._get_stream(state.last_event_id) as response:
                    if response.status_code == 404 and (expired := self._expired_by(response)) is not None:
                        self._handler.on_request_failed(request_id, expired)
                        return
                    if not 200 <= response.status_code < 300 or _content_type(response) != _SSE:
                        what = f"HTTP {response.status_code} {_content_type(response) or ''}".rstrip()
                        self._fail(request_id, f"{broke}; resuming it failed ({what})", written=True)
                        return
                    if await self._consume(request_id, method, response, state):
                        return
            except httpx.HTTPError as exc:
                logger.debug("resumption %d of request %s broke off: %s", attempt, request_id, exc)
        self._fail(request_id, f"{broke}, and {_RESUME_ATTEMPTS} attempts to resume it did not bring it", written=True)

    async def _consume(
        self, request_id: RequestId, method: object, response: httpx.Response, state: _StreamState
    ) -> bool:
        """Deliver the stream's messages; True once the response to ``request_id`` was among them."""
        decoder = SSEDecoder(self._max_message_size)
        async with aclosing(_body_chunks(response)) as chunks:
            async for chunk in chunks:
                events = decoder.feed(chunk)
                state.saw(decoder)
                if events and self._deliver_events(request_id, method, response, events):
                    # The server ends the stream after the response: read to its end (bounded by the deadline
                    # _deliver gave the reader's scope) so the connection goes back to the pool instead of being
                    # closed; anything after the response is ignored.
                    async for _ in chunks:
                        pass
                    return True
        return False

    def _deliver_events(
        self, request_id: RequestId, method: object, response: httpx.Response, events: list[SSEEvent]
    ) -> bool:
        """Hand one chunk's events to the session as one batch; True once the response was among them (what
        follows it is dropped)."""
        self._batch_begin()
        try:
            for event in events:
                message = self._event_message(event, request_id)
                if message is not None and self._deliver(request_id, method, response, message):
                    return True
            return False
        finally:
            self._batch_end()

    def _event_message(self, event: SSEEvent, request_id: RequestId | None) -> JSONObject | None:
        """The JSON-RPC message of one SSE event, or None (priming, keep-alive, other event types, broken data)."""
        if not event.data:
            return None  # priming event (legacy resumption) or an empty one
        if event.type != "message":
            logger.debug("ignoring SSE event of type %r (request %s)", event.type, request_id)
            return None
        if event.oversized:
            limit = self._max_message_size
            self._handler.on_invalid(
                f"message larger than the {limit}-byte limit was dropped", event.data, _blame(event.data, request_id)
            )
            return None
        return self._parse(event.data, request_id)

    async def _read_error(self, request_id: RequestId, response: httpx.Response) -> None:
        status = response.status_code
        expired = self._expired_by(response)
        if expired is not None:
            self._handler.on_request_failed(request_id, expired)
            return
        body = await _read_body(response, _MAX_ERROR_BODY)
        if status in BACK_OFF_STATUSES:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            detail = f"HTTP {status} {response.reason_phrase}".rstrip()
            if retry_after is not None:
                detail += f" (retry after {retry_after:g} s)"
            # The request reached something that answered: a gateway may send 429/503 after the server behind it ran
            # the tool, so the status proves nothing about whether it ran. Only the retry policy decides a re-send.
            error = TransportError(detail, written=True, status_code=status, retry_after=retry_after)
            self._handler.on_request_failed(request_id, error)
            return
        try:
            parsed = loads(body) if body.strip() else None
        except ValueError:
            parsed = None
        error_body = parsed.get("error") if isinstance(parsed, dict) else None
        if not isinstance(error_body, dict):
            if status >= 500:
                failure = TransportError(
                    f"HTTP {status} {response.reason_phrase}".rstrip(), written=True, status_code=status
                )
                self._handler.on_request_failed(request_id, failure)
                return
            code = -32601 if status in (404, 405) else -32600
            error_body = {"code": code, "message": f"HTTP {status} {response.reason_phrase}".rstrip()}
        # The body answers this POST whatever id it names (servers that could not read ours send null).
        self._handler.on_message({"jsonrpc": "2.0", "id": request_id, "error": error_body})

    def _expired_by(self, response: httpx.Response) -> SessionExpired | None:
        """A 404 to something that carried our session id: the session is gone. Sets the flag; None otherwise."""
        sent = response.request.headers.get("mcp-session-id")
        if response.status_code != 404 or sent is None:
            return None
        if sent == self._session_id:
            self.session_expired = True
            self._stop_listening()
        logger.debug("the server no longer knows session %s (HTTP 404)", sent)
        return SessionExpired(
            f"the server ended session {sent!r} (HTTP 404): a new session must be started", session_id=sent
        )

    # -- the standalone GET stream (2025-11-25) -----------------------------------------------------------------

    @asynccontextmanager
    async def _get_stream(self, last_event_id: str | None) -> AsyncIterator[httpx.Response]:
        """``GET`` the endpoint for an SSE stream, with the session headers (and ``Last-Event-ID`` to resume)."""
        headers = httpx.Headers(self._base_headers)
        headers["Accept"] = _SSE
        if self._session_id is not None:
            headers["Mcp-Session-Id"] = self._session_id
        if self._version is not None:
            headers["MCP-Protocol-Version"] = self._version
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        request = self._client.build_request("GET", self._url, headers=headers)
        response = await self._client.send(request, stream=True, follow_redirects=False, auth=self._auth)
        try:
            yield response
        finally:
            with _closing_scope():
                await response.aclose()

    def _start_listening(self) -> None:
        self._stop_listening()
        scope = anyio.CancelScope()
        self._listener = scope
        self._task_group.start_soon(self._listen, scope)

    def _stop_listening(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None

    async def _listen(self, scope: anyio.CancelScope) -> None:
        """Hold the standalone GET stream open; hand what arrives to the session. Never raises."""
        state = _StreamState()
        idle_reconnects = 0
        try:
            with scope:
                while not self._closed:
                    if await self._listen_once(state):
                        idle_reconnects = 0
                    else:
                        idle_reconnects += 1
                    if idle_reconnects > _LISTEN_RECONNECTS or self._listener is not scope:
                        return
                    await anyio.sleep(state.retry if state.retry is not None else _DEFAULT_RETRY)
        except _StopListening:
            pass
        except Exception:  # the GET stream is optional: its trouble never reaches anything else
            logger.debug("the standalone GET stream failed", exc_info=True)
        finally:
            if self._listener is scope:
                self._listener = None

    async def _listen_once(self, state: _StreamState) -> bool:
        """One GET; True if it brought at least one message. Raises _StopListening when there is no stream to have."""
        brought = False
        try:
            async with self._get_stream(state.last_event_id) as response:
                status = response.status_code
                if status == 405:
                    logger.debug("the server offers no standalone GET stream (HTTP 405)")
                    raise _StopListening
                if not 200 <= status < 300 or _content_type(response) != _SSE:
                    self._expired_by(response)
                    logger.debug("no standalone GET stream: HTTP %s %s", status, _content_type(response))
                    raise _StopListening
                decoder = SSEDecoder(self._max_message_size)
                async with aclosing(_body_chunks(response)) as chunks:
                    async for chunk in chunks:
                        events = decoder.feed(chunk)
                        state.saw(decoder)
                        if events:
                            brought = self._deliver_unsolicited(events) or brought
        except httpx.HTTPError as exc:
            logger.debug("the standalone GET stream broke off: %s", exc)
        return brought

    def _deliver_unsolicited(self, events: list[SSEEvent]) -> bool:
        """Hand the GET stream's events to the session as one batch; True if any was a message."""
        brought = False
        self._batch_begin()
        try:
            for event in events:
                message = self._event_message(event, None)
                if message is not None:
                    brought = True
                    self._handler.on_message(message)
        finally:
            self._batch_end()
        return brought

    # -- helpers ------------------------------------------------------------------------------------------------

    def _parse(self, raw: bytes, request_id: RequestId | None, *, body: bool = False) -> JSONObject | None:
        """The JSON object in ``raw``, or None after reporting it (see :func:`_blame` for the request it fails)."""
        try:
            message = loads(raw)
        except ValueError as exc:
            self._handler.on_invalid(f"not valid JSON ({exc})", raw[:HEAD_SIZE], _blame(raw, request_id, body=body))
            return None
        if not isinstance(message, dict):
            detail = f"a JSON {type(message).__name__} is not a JSON-RPC message"
            self._handler.on_invalid(detail, raw[:HEAD_SIZE], _blame(raw, request_id, body=body))
            return None
        return message

    def _deliver(self, request_id: RequestId, method: object, response: httpx.Response, message: JSONObject) -> bool:
        """Hand ``message`` to the session; True if it was the response to ``request_id``."""
        answers = "method" not in message and wire_id(message.get("id")) == request_id
        if answers:
            # Answered: releasing the request must not cut the stream's end (its connection goes back to the pool),
            # but the end must come soon. (Called in the reader's task: the scope is the one it runs in.)
            scope = self._streams.pop(request_id, None)
            if scope is not None:
                scope.deadline = anyio.current_time() + _DRAIN_BUDGET
            self._open_responses.pop(request_id, None)
            if method == "initialize":
                self._adopt_session(message, response)
        self._handler.on_message(message, request_id)
        return answers

    def _adopt_session(self, message: JSONObject, response: httpx.Response) -> None:
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


async def _read_body(response: httpx.Response, limit: int) -> bytes:
    """Up to ``limit`` bytes of the body (the rest is not read)."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


def _body_chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The body as it arrives: raw when the server did not compress it (no decoder pass), else decoded."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    chunks = response.aiter_raw() if encoding in ("", "identity") else response.aiter_bytes()
    return cast(AsyncGenerator[bytes, None], chunks)  # httpx types them as iterators; they are async generators


class _StopListening(Exception):
    """The server has no standalone GET stream for us (405, an error status, not SSE): stop trying."""


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


def _content_type(response: httpx.Response) -> str:
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
    return str(exc) or type(exc).__name__


def http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    client: httpx.AsyncClient | None = None,
    limits: httpx.Limits | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    auth: httpx.Auth | None = None,
) -> HttpTransport:
    """A transport to a Streamable HTTP MCP endpoint (2026-07-28 and 2025-11-25).

    Args:
        url: The MCP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``.
        headers: Sent on every POST (``Authorization`` and the like). The protocol's own headers win over these.
        client: An ``httpx.AsyncClient`` to use as given (its own limits, proxies, TLS, auth); it is never closed
            here. Redirects are not followed whatever its setting. By default a client is made and closed here.
        limits: Connection limits of the client made here (default: no cap on connections, 20 kept alive).
            Not allowed together with ``client``.
        max_message_size: Largest message accepted from the server, in bytes; larger ones are dropped and the
            request they answer fails with a :class:`~mcp_client.ProtocolError`.
        auth: An ``httpx.Auth`` for every request to the endpoint, e.g. :class:`mcp_client.auth.OAuth`; it is used
            with a caller-supplied ``client`` too.
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
