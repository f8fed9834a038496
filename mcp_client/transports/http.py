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
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import httpx
from httpx_sse import EventSource

from mcp_client.errors import TransportError
from mcp_client.events import CancelMethod
from mcp_client.transports._http_headers import encode_header_value, modern_version, routing_name
from mcp_client.transports.base import Connection, JSONObject, MessageHandler, RequestId, Transport
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE, _id_from_head

__all__ = ["DEFAULT_LIMITS", "DEFAULT_TIMEOUT", "HttpTransport", "encode_header_value", "http"]

logger = logging.getLogger("mcp_client.http")

DEFAULT_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=20)
"""No cap on connections (each streamed answer holds one): the number of calls in flight is the caller's business."""
DEFAULT_TIMEOUT = httpx.Timeout(connect=30.0, read=None, write=30.0, pool=None)
"""httpx's own clocks; reading is unbounded here because the request policy (idle, maximum) bounds it."""
_SIDE_TIMEOUT = httpx.Timeout(30.0)
"""Notifications, responses and the closing DELETE: short exchanges with no policy of their own."""
_CLOSE_BUDGET = 2.0
_MAX_ERROR_BODY = 1024 * 1024
_ACCEPT = "application/json, text/event-stream"
_NOT_WRITTEN = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)
_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


@dataclass(frozen=True, slots=True)
class HttpTransport(Transport):
    """POST to the MCP endpoint ``url``. Build it with :func:`http`."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    client: httpx.AsyncClient | None = field(default=None, compare=False)
    limits: httpx.Limits | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE

    @property
    def description(self) -> str:
        return self.url

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        owned = self.client is None
        client = self.client or httpx.AsyncClient(
            limits=self.limits or DEFAULT_LIMITS, timeout=DEFAULT_TIMEOUT, follow_redirects=False
        )
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


class _HttpConnection(Connection):
    def __init__(
        self,
        transport: HttpTransport,
        client: httpx.AsyncClient,
        handler: MessageHandler,
        task_group: anyio.abc.TaskGroup,
    ) -> None:
        self._url = transport.url
        self._base_headers = dict(transport.headers)
        self._max_message_size = transport.max_message_size
        self._client = client
        self._handler = handler
        self._task_group = task_group
        self._streams: dict[RequestId, anyio.CancelScope] = {}
        self._session_id: str | None = None
        """2025-11-25: the ``Mcp-Session-Id`` the server gave with its ``initialize`` answer."""
        self._version: str | None = None
        """The version for POSTs whose body does not name one: the legacy version chosen in ``initialize``, or the
        modern version of the last 2026-07-28 request."""
        self._closed = False

    # -- writing ------------------------------------------------------------------------------------------------

    def _headers(self, message: JSONObject, extra: Mapping[str, str] | None) -> httpx.Headers:
        headers = httpx.Headers(self._base_headers)
        if extra:
            headers.update(extra)
        headers["Accept"] = _ACCEPT
        headers["Content-Type"] = "application/json"
        version = modern_version(message)
        method = message.get("method")
        if version is not None:
            headers["MCP-Protocol-Version"] = version
            if isinstance(method, str):
                headers["Mcp-Method"] = method
            name = routing_name(message)
            if name is not None:
                headers["Mcp-Name"] = name
        elif method != "initialize":
            if self._version is not None:
                headers["MCP-Protocol-Version"] = self._version
            if self._session_id is not None:
                headers["Mcp-Session-Id"] = self._session_id
        return headers

    def _build(
        self, message: JSONObject, extra: Mapping[str, str] | None, timeout: httpx.Timeout | None
    ) -> httpx.Request:
        try:
            body = _encode(message).encode()
            headers = self._headers(message, extra)
            if timeout is None:
                return self._client.build_request("POST", self._url, content=body, headers=headers)
            return self._client.build_request("POST", self._url, content=body, headers=headers, timeout=timeout)
        except (httpx.HTTPError, httpx.InvalidURL, ValueError, TypeError) as exc:
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
        scope = anyio.CancelScope()
        previous = self._streams.pop(request_id, None)
        if previous is not None:
            previous.cancel()
        self._streams[request_id] = scope
        try:
            await self._task_group.start(self._exchange, request_id, method, request, scope)
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
            response = await self._client.send(request, follow_redirects=False)
        except _NOT_WRITTEN as exc:
            raise TransportError(f"could not POST {what} to {self._url}: {_describe(exc)}", written=False) from exc
        except httpx.HTTPError as exc:
            raise TransportError(f"POST of {what} to {self._url} failed: {_describe(exc)}", written=True) from exc
        if not 200 <= response.status_code < 300:
            raise TransportError(
                f"the server refused {what}: HTTP {response.status_code} {response.reason_phrase}", written=True
            )

    async def send_notification(self, message: JSONObject) -> None:
        await self._post(message)

    async def send_response(self, message: JSONObject) -> None:
        await self._post(message)

    async def cancel(self, request_id: RequestId, reason: str | None, *, modern: bool) -> CancelMethod:
        self.release(request_id)
        if modern:
            return CancelMethod.STREAM_CLOSE
        params: JSONObject = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        await self._post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
        return CancelMethod.NOTIFICATION_AND_STREAM_CLOSE

    def release(self, request_id: RequestId) -> None:
        scope = self._streams.pop(request_id, None)
        if scope is not None:
            scope.cancel()

    def _forget(self, request_id: RequestId, scope: anyio.CancelScope) -> None:
        if self._streams.get(request_id) is scope:
            del self._streams[request_id]

    async def close(self) -> None:
        """Stop every reader; at 2025-11-25 end the server's session with a DELETE (bounded, errors ignored)."""
        self._closed = True
        for scope in list(self._streams.values()):
            scope.cancel()
        self._streams.clear()
        if self._session_id is None:
            return
        headers = {"Mcp-Session-Id": self._session_id}
        if self._version is not None:
            headers["MCP-Protocol-Version"] = self._version
        with anyio.move_on_after(_CLOSE_BUDGET):
            try:
                response = await self._client.request(
                    "DELETE", self._url, headers=headers, timeout=_SIDE_TIMEOUT, follow_redirects=False
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
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            with scope:
                task_status.started()
                await self._send_and_read(request_id, method, request)
        except Exception as exc:  # one request's trouble never escapes into the task group
            logger.debug("request %s failed unexpectedly", request_id, exc_info=True)
            self._fail(request_id, f"the answer could not be read: {_describe(exc)}", written=True)
        finally:
            self._forget(request_id, scope)

    async def _send_and_read(self, request_id: RequestId, method: object, request: httpx.Request) -> None:
        response: httpx.Response | None = None
        for attempt in (1, 2):
            try:
                response = await self._client.send(request, stream=True, follow_redirects=False)
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
        try:
            await self._read(request_id, method, response)
        except httpx.HTTPError as exc:
            self._fail(request_id, f"the answer from {self._url} broke off: {_describe(exc)}", written=True)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_BUDGET):
                await response.aclose()

    async def _read(self, request_id: RequestId, method: object, response: httpx.Response) -> None:
        status = response.status_code
        if status == 202:
            self._fail(request_id, "server answered 202 to a request", written=True)
        elif 300 <= status < 400:
            location = response.headers.get("location")
            self._fail(request_id, f"HTTP {status}: redirect to {location!r} not followed", written=True)
        elif not 200 <= status < 300:
            await self._read_error(request_id, response)
        else:
            content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            if content_type == "text/event-stream":
                await self._read_events(request_id, method, response)
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
            self._handler.on_invalid(f"message larger than the {limit}-byte limit was dropped", body[:512], request_id)
            return
        message = self._parse(body, request_id)
        if message is None:
            return
        if "error" in message and message.get("id") is None and "method" not in message:
            message["id"] = request_id
        if not self._deliver(request_id, method, response, message):
            self._handler.on_invalid("the JSON answer is not the response to the request", body[:512], request_id)

    async def _read_events(self, request_id: RequestId, method: object, response: httpx.Response) -> None:
        async with aclosing(EventSource(response).aiter_sse()) as events:
            async for event in events:
                if not event.data:
                    continue  # priming event (legacy resumption) or an empty one
                if event.event not in ("message", ""):
                    logger.debug("ignoring SSE event of type %r for request %s", event.event, request_id)
                    continue
                raw = event.data.encode()
                if len(raw) > self._max_message_size:
                    limit = self._max_message_size
                    self._handler.on_invalid(
                        f"message larger than the {limit}-byte limit was dropped", raw[:512], _id_from_head(raw)
                    )
                    continue
                message = self._parse(raw, _id_from_head(raw))  # a broken answer fails its request at once
                if message is not None and self._deliver(request_id, method, response, message):
                    return
        self._fail(request_id, "the SSE stream ended without a response", written=True)

    async def _read_error(self, request_id: RequestId, response: httpx.Response) -> None:
        status = response.status_code
        body = await _read_body(response, _MAX_ERROR_BODY)
        try:
            parsed = json.loads(body) if body.strip() else None
        except ValueError:
            parsed = None
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if not isinstance(error, dict):
            if status >= 500:
                self._fail(request_id, f"HTTP {status} {response.reason_phrase}".rstrip(), written=True)
                return
            code = -32601 if status in (404, 405) else -32600
            error = {"code": code, "message": f"HTTP {status} {response.reason_phrase}".rstrip()}
        # The body answers this POST whatever id it names (servers that could not read ours send null).
        self._handler.on_message({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _parse(self, raw: bytes, request_id: RequestId | None) -> JSONObject | None:
        try:
            message = json.loads(raw)
        except ValueError as exc:
            self._handler.on_invalid(f"not valid JSON ({exc})", raw[:512], request_id)
            return None
        if not isinstance(message, dict):
            self._handler.on_invalid(
                f"a JSON {type(message).__name__} is not a JSON-RPC message", raw[:512], request_id
            )
            return None
        return message

    def _deliver(self, request_id: RequestId, method: object, response: httpx.Response, message: JSONObject) -> bool:
        """Hand ``message`` to the session; True if it was the response to ``request_id``."""
        answers = "method" not in message and _same_id(message.get("id"), request_id)
        if answers and method == "initialize":
            self._adopt_session(message, response)
        self._handler.on_message(message)
        return answers

    def _adopt_session(self, message: JSONObject, response: httpx.Response) -> None:
        """2025-11-25: remember the version the server chose and its session id, for every later POST."""
        result = message.get("result")
        if not isinstance(result, dict):
            return
        version = result.get("protocolVersion")
        if isinstance(version, str) and encode_header_value(version) == version:
            self._version = version
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


def _same_id(raw: object, request_id: RequestId) -> bool:
    if isinstance(raw, bool) or raw is None:
        return False
    return raw == request_id or str(raw) == str(request_id)


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    client: httpx.AsyncClient | None = None,
    limits: httpx.Limits | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
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
    """
    if client is not None and limits is not None:
        raise ValueError("limits= applies only to the client http() makes; configure your own client instead")
    return HttpTransport(
        url=url,
        headers=dict(headers) if headers is not None else {},
        client=client,
        limits=limits,
        max_message_size=max_message_size,
    )
