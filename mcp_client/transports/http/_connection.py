"""The connection of the Streamable HTTP transport: every message is a POST to one endpoint.

Requests are handed to a reader task each (:mod:`._reader`); notifications and responses are POSTed and accepted
with any 2xx. 2026-07-28 requests carry ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` from their body;
at 2025-11-25 the version the server chose in ``initialize`` and its ``Mcp-Session-Id`` go on every later POST.
Ending a request (answered, timed out, cancelled) closes its response stream: at 2026-07-28 that *is* the
cancellation; at 2025-11-25 ``notifications/cancelled`` is POSTed as well.

The spec's backwards compatibility: when a POST is refused with 400, 404 or 405 (and no JSON-RPC error in the
body, which only a Streamable HTTP server would send) before the server accepted any POST of the connection, and
a GET of the URL opens an event stream whose first event is ``endpoint``, the server speaks HTTP+SSE
(2024-11-05), and an :class:`~mcp_client.transports.sse._connection.SseConnection` carries everything from then
on (the refused request too, unless it was the ``server/discover`` probe, whose refusal is its answer). The GET is
tried once per connection. Such URLs are remembered for the process, so the next connection opens the stream
before its first POST.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import anyio

from mcp_client._redact import redacted_url, scrub
from mcp_client._typed import building_http_client
from mcp_client._types import JSONObject, RequestId
from mcp_client.errors import MCPClientError, TransportError
from mcp_client.events import CancelMethod
from mcp_client.transports._http_headers import modern_version, routing_name
from mcp_client.transports._http_status import parse_retry_after
from mcp_client.transports._json import dumps
from mcp_client.transports.base import Connection
from mcp_client.transports.bounded_body import discard
from mcp_client.transports.http._reader import _RequestReader
from mcp_client.transports.http._state import (
    _ACCEPT,
    _MAX_ERROR_BODY,
    _SIDE_TIMEOUT,
    _closing_scope,
    _describe,
    _shut_down,
    logger,
)
from mcp_client.transports.sse._connection import SseConnection
from mcp_client.transports.sse._endpoint import KNOWN_SSE_ENDPOINTS
from mcp_client.transports.stream import cancellation

if TYPE_CHECKING:
    from mcp_client.transports.http._engine import Answer

_FIRST_EVENT_WITHIN = 5.0
"""How long the fallback's GET may take to send its first event: an HTTP+SSE server sends ``endpoint`` at once,
while the GET stream of a Streamable HTTP server may stay quiet for good."""


class _HttpConnection(_RequestReader, Connection):
    """One live connection to a Streamable HTTP endpoint: the writing side, cancellation and close."""

    _sse: SseConnection | None = None
    """Set once the server turned out to speak HTTP+SSE: everything goes through it from then on."""
    _requests_sent = 0
    """The connection's first request opens the stream of a URL known to speak HTTP+SSE."""
    _no_fallback = False
    """A GET of the URL opened no HTTP+SSE stream once: the refusals stand from then on."""

    def _sse_connection(self) -> SseConnection:
        with building_http_client(redacted_url(self._url)):  # (the core engine makes its fallback client only now)
            client, auth = self._engine.stream_client()
        return SseConnection(
            self._url,
            client=client,
            handler=self._handler,
            task_group=self._task_group,
            headers=self._base_headers,
            auth=auth,
            max_message_size=self._max_message_size,
        )

    async def _fall_back(self, request_id: RequestId, method: object, response: Answer) -> bool:
        """A request was refused as an HTTP+SSE server refuses a POST to its SSE URL. Until the server accepted one
        of our POSTs (then it speaks Streamable HTTP), any request's refusal is the cue, however late it came (a
        slow server's 405 to a probe that timed out comes back for ``initialize``): GET the URL once, and if it is
        an HTTP+SSE stream send the refused request over it (not the ``server/discover`` probe: its refusal is
        its answer)."""
        if self._accepted or self._legacy or self._closed or self._no_fallback:
            return False
        async with self._fallback_lock:  # requests refused together open one stream
            if self._sse is None:
                if self._accepted or self._closed or self._no_fallback:
                    return False
                sse = self._sse_connection()
                try:
                    await sse.open(first_event_within=_FIRST_EVENT_WITHIN)
                except TransportError as exc:
                    self._no_fallback = True
                    logger.debug("%s refused a POST and is no HTTP+SSE server either (%s)", self._where, exc)
                    return False
                logger.info(
                    "%s speaks HTTP+SSE (2024-11-05); its messages go to %s",
                    self._where,
                    redacted_url(sse.endpoint or ""),
                )
                self._sse = sse
                KNOWN_SSE_ENDPOINTS.remember(self._url)
        message = self._unaccepted.pop(request_id, None)
        if method == "server/discover" or message is None:
            return False  # the refusal answers the probe: the session goes on with initialize, over the stream
        await self._sse.send_request(message)
        return True

    async def _open_known_sse(self) -> None:
        """The URL spoke HTTP+SSE before: open its stream first (and forget it if it no longer does)."""
        sse = self._sse_connection()
        try:
            await sse.open(first_event_within=_FIRST_EVENT_WITHIN)
        except TransportError as exc:
            logger.info("%s no longer opens an HTTP+SSE stream (%s); POSTing", self._where, exc)
            KNOWN_SSE_ENDPOINTS.forget(self._url)
            return
        self._sse = sse

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

    def _build(self, message: JSONObject, extra: Mapping[str, str] | None, timeout: float | None) -> object:
        try:
            return self._engine.build("POST", self._headers(message, extra), dumps(message).encode(), timeout)
        except (self._line.http_error, self._line.invalid_url, ValueError, TypeError, AttributeError) as exc:
            raise TransportError(
                f"could not build the HTTP request to {self._where}: {scrub(str(exc))}", written=False
            ) from exc

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        if self._closed:
            raise TransportError(f"the connection to {self._where} is closed", written=False)
        self._requests_sent += 1
        if self._requests_sent == 1 and self._url in KNOWN_SSE_ENDPOINTS:
            await self._open_known_sse()
        if self._sse is not None:
            await self._sse.send_request(message, headers=headers)
            return
        request_id: RequestId = message["id"]
        if not self._accepted:
            self._unaccepted[request_id] = message  # (sent again over HTTP+SSE if it is refused as such)
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
            raise TransportError(f"the connection to {self._where} is closed", written=False)
        request = self._build(message, None, _SIDE_TIMEOUT)
        what = message.get("method", "response")
        try:
            response = await self._engine.send(request)
            try:
                await discard(response, _MAX_ERROR_BODY)  # read to its end, so its connection can be reused
            finally:
                with _closing_scope():
                    await response.aclose()
        except MCPClientError:
            raise  # an auth failure (sign-in refused, ...) is the caller's to see as it is
        except self._line.not_written as exc:
            raise TransportError(f"could not POST {what} to {self._where}: {_describe(exc)}", written=False) from exc
        except self._line.http_error as exc:
            raise TransportError(f"POST of {what} to {self._where} failed: {_describe(exc)}", written=True) from exc
        status = response.status_code
        if 200 <= status < 300:
            self._accept()
            return
        detail = f"the server refused {what}: HTTP {status} {response.reason_phrase}"
        expired = self._expired_by(response)
        if expired is not None:
            raise expired
        raise TransportError(
            detail, written=True, status_code=status, retry_after=parse_retry_after(response.headers.get("retry-after"))
        )

    async def send_notification(self, message: JSONObject) -> None:
        if self._sse is not None:
            await self._sse.send_notification(message)
            return
        await self._post(message)
        if message.get("method") == "notifications/initialized" and self._legacy and not self._closed:
            self._start_listening()

    async def send_response(self, message: JSONObject) -> None:
        if self._sse is not None:
            await self._sse.send_response(message)
            return
        await self._post(message)

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        if self._sse is not None:
            return await self._sse.cancel(request_id, reason)
        closed = self.try_cancel(request_id, reason)
        if closed is not None:
            return closed
        self.release(request_id)
        await self._post(cancellation(request_id, reason))
        return CancelMethod.NOTIFICATION_AND_STREAM_CLOSE

    def try_cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod | None:
        """2026-07-28: closing the response stream is the cancellation, and that needs no waiting. (Requests that
        can be cancelled are sent once the era is settled: a legacy session is one whose ``initialize`` we adopted.)"""
        if self._legacy or self._sse is not None:
            return None
        self.release(request_id)
        return CancelMethod.STREAM_CLOSE

    def release(self, request_id: RequestId) -> None:
        if self._sse is not None:
            self._sse.release(request_id)
        scope = self._streams.pop(request_id, None)
        if scope is not None:
            scope.cancel()
            # The reader closes the response once it runs again; shutting the socket now means the server sees
            # the stream end in this loop turn, not after the reader's wake-up and httpx's close path.
            _shut_down(self._open_responses.pop(request_id, None))

    async def close(self) -> None:
        """Stop every reader; at 2025-11-25 end the server's session with a DELETE (bounded, errors ignored)."""
        self._closed = True
        if self._sse is not None:
            await self._sse.close()
        self._stop_listening()
        for scope in list(self._streams.values()):
            scope.cancel()
        self._streams.clear()
        await self._end_session()
