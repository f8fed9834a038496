"""One live HTTP+SSE connection (the transport of 2024-11-05): one GET stream in, one POST per message out.

:meth:`SseConnection.open` GETs the SSE URL and waits for the ``endpoint`` event (the URL, on the same origin,
every message is POSTed to); a listener task in the connection's task group then reads the stream to its end and
hands each ``message`` event to the session. A session's ``initialize`` opens its stream, so the call's deadline
(the client's connect budget) bounds the GET's headers and that first event. POSTs are accepted with 202 (any
2xx): answers and the server's own messages all come on the one stream, so nothing is kept of a POST's answer but
its status (its body is streamed and dropped, a bounded number of bytes: :mod:`mcp_client.transports.bounded_body`).

* A cancellation is a ``notifications/cancelled`` POST (the era of this transport knows no other form).
* The stream ending, or breaking, fails every request still waiting on it with a written
  :class:`~mcp_client.TransportError`. The server's session lived on that stream, so the next request raises
  :class:`~mcp_client.SessionExpired` (nothing written): the client starts a new session, whose ``initialize``
  opens a new stream, and sends the request once more.
* A 404 to a POST means the server no longer knows the session: :class:`~mcp_client.SessionExpired` too.
* Redirects are never followed, and an endpoint on another origin is refused (:mod:`._endpoint`).

It touches only its client (never closed here), the session's handler and its own task.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

import anyio
import anyio.abc
import httpx2

from mcp_client._httpx import HttpxLine, line_of
from mcp_client._log_guard import package_logger
from mcp_client._redact import redacted_url, scrub
from mcp_client._typed import sole_error
from mcp_client._types import JSONObject, RequestId
from mcp_client.errors import MCPClientError, SessionExpired, TransportError
from mcp_client.events import CancelMethod
from mcp_client.policy.ids import wire_id
from mcp_client.transports._http_status import BACK_OFF_STATUSES, parse_retry_after
from mcp_client.transports._json import dumps, loads, max_values_for
from mcp_client.transports._message_head import HEAD_SIZE, response_id_from_head
from mcp_client.transports._sse import SSEDecoder, SSEEvent
from mcp_client.transports.base import Connection, MessageHandler
from mcp_client.transports.bounded_body import ACCEPT_ENCODING, discard, pieces
from mcp_client.transports.sse._endpoint import message_endpoint
from mcp_client.transports.stream import batch_hooks, cancellation

__all__ = ["SseConnection"]

logger = package_logger("mcp_client.sse")

_SIDE_TIMEOUT = 30.0
"""Notifications, responses and cancellations: short exchanges with no policy of their own."""
_CLOSE_BUDGET = 2.0
_MAX_POST_ANSWER = 64 * 1024
"""Bytes of a POST's answer read (and dropped) so its connection can be reused; past them it is closed instead."""
_EVENT_STREAM = "text/event-stream"


class SseConnection(Connection):
    """The GET stream and the POSTs of one HTTP+SSE server. Call :meth:`open` before anything else."""

    def __init__(
        self,
        url: str,
        *,
        client: httpx2.AsyncClient,
        handler: MessageHandler,
        task_group: anyio.abc.TaskGroup,
        headers: Mapping[str, str] | None = None,
        auth: Any,
        max_message_size: int,
    ) -> None:
        """``auth`` is what each ``send`` of ``client`` gets as ``auth=`` (:func:`mcp_client._httpx.auth_for`)."""
        self._url = url
        self._where = redacted_url(url)
        self._client = client
        self._line: HttpxLine = line_of(client)
        self._auth = auth
        self._base_headers = {name.lower(): value for name, value in (headers or {}).items()}
        self._handler = handler
        self._batch_begin, self._batch_end = batch_hooks(handler)
        self._task_group = task_group
        self._max_message_size = max_message_size
        self._endpoint: str | None = None
        """Where messages go; None while no stream is up."""
        self._listener: anyio.CancelScope | None = None
        self._waiting: set[RequestId] = set()
        """Requests POSTed and not answered yet: a dropped stream fails them."""
        self._lost: str | None = None
        """Why the last stream ended, once one did (the next ``initialize`` opens a new one)."""
        self._closed = False

    @property
    def endpoint(self) -> str | None:
        """The message endpoint the server named, while its stream is up."""
        return self._endpoint

    async def open(self, *, first_event_within: float | None = None) -> None:
        """GET the SSE URL and wait for its ``endpoint`` event; the stream is then read in the background.

        ``first_event_within``: seconds the first event may take (a probe for a server of unknown kind: the GET
        stream of a Streamable HTTP server may stay quiet); None waits as long as the caller does.

        Raises:
            TransportError: the GET failed or was refused, the answer is not an event stream, or its first event
                is not a valid ``endpoint`` (``written=False``: no message was sent).
        """
        self._endpoint = await self._task_group.start(self._listen, first_event_within)
        self._lost = None

    # -- the stream --------------------------------------------------------------------------------------------

    async def _listen(self, first_event_within: float | None, *, task_status: anyio.abc.TaskStatus[str]) -> None:
        scope = anyio.CancelScope()
        self._listener = scope
        with scope:
            # Until the endpoint event, this task runs in the opener's cancel scope (a call's deadline bounds it);
            # a probe's own limit covers the GET's headers as well as its first event.
            opened_by = anyio.current_time() + _no_limit(first_event_within)
            response = None
            with anyio.CancelScope(deadline=opened_by):
                response = await self._get()
            if response is None:
                raise self._quiet(first_event_within)
            try:
                decoder = SSEDecoder(self._max_message_size)
                async with aclosing(pieces(response)) as chunks:
                    with anyio.CancelScope(deadline=opened_by) as waiting:
                        events = await self._first_events(chunks, decoder)
                    if waiting.cancelled_caught:
                        raise self._quiet(first_event_within)
                    task_status.started(message_endpoint(self._url, events[0].data))
                    reason = await self._read_stream(chunks, decoder, events[1:])
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_BUDGET):
                    await response.aclose()
            if not self._closed:
                self._lose(reason)

    def _quiet(self, first_event_within: float | None) -> TransportError:
        return TransportError(
            f"no event from {self._where} within {first_event_within:g} s: not an HTTP+SSE server", written=False
        )

    async def _get(self) -> httpx2.Response:
        headers = {**self._base_headers, "accept": _EVENT_STREAM, "cache-control": "no-store"}
        headers["accept-encoding"] = ACCEPT_ENCODING
        try:
            request = self._client.build_request("GET", self._url, headers=headers)
            response = await self._client.send(request, stream=True, follow_redirects=False, auth=self._auth)
        except MCPClientError:
            raise  # a refused sign-in is the caller's to see as it is
        except (self._line.invalid_url, ValueError, TypeError) as exc:
            raise TransportError(f"could not build the GET of {self._where}: {_describe(exc)}", written=False) from exc
        except self._line.http_error as exc:
            detail = f"could not open the SSE stream of {self._where}: {_describe(exc)}"
            raise TransportError(detail, written=False) from exc
        except Exception as exc:  # what no HTTP library maps (a port past 65535: OverflowError in a task group)
            detail = f"could not open the SSE stream of {self._where}: {_describe(exc)}"
            raise TransportError(detail, written=False) from exc
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if response.status_code != 200 or content_type != _EVENT_STREAM:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_BUDGET):
                await response.aclose()
            what = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
            raise TransportError(
                f"GET {self._where} did not open an SSE stream ({what}, content type {content_type or 'none'!r})",
                written=False,
                status_code=response.status_code,
            )
        return response

    async def _first_events(self, chunks: AsyncGenerator[bytes, None], decoder: SSEDecoder) -> list[SSEEvent]:
        """The events of the chunk that completed the first one, which must be ``endpoint``."""
        try:
            async for chunk in chunks:
                events = decoder.feed(chunk)
                if events:
                    if events[0].type != "endpoint":
                        raise TransportError(
                            f"the first event from {self._where} is {events[0].type!r}, not 'endpoint': "
                            "not an HTTP+SSE server",
                            written=False,
                        )
                    return events
        except self._line.http_error as exc:
            raise TransportError(f"the SSE stream of {self._where} broke off: {_describe(exc)}", written=False) from exc
        raise TransportError(f"the SSE stream of {self._where} ended before its endpoint event", written=False)

    async def _read_stream(
        self, chunks: AsyncGenerator[bytes, None], decoder: SSEDecoder, first: list[SSEEvent]
    ) -> str:
        """Deliver the stream's messages until it ends; why it ended."""
        self._deliver(first)
        try:
            async for chunk in chunks:
                events = decoder.feed(chunk)
                if events:
                    self._deliver(events)
        except self._line.http_error as exc:
            return f"broke off ({_describe(exc)})"
        except Exception as exc:  # nothing of one broken stream escapes into the task group
            logger.debug("the SSE stream of %s failed", self._where, exc_info=True)
            return f"failed ({_describe(exc)})"
        return "ended"

    def _deliver(self, events: list[SSEEvent]) -> None:
        """Hand one chunk's messages to the session, as one batch."""
        self._batch_begin()
        try:
            for event in events:
                message = self._message_of(event)
                if message is not None:
                    if "method" not in message:
                        self._answered(message.get("id"))
                    self._handler.on_message(message)
        finally:
            self._batch_end()

    def _message_of(self, event: SSEEvent) -> JSONObject | None:
        if event.type != "message":
            logger.debug("ignoring SSE event of type %r from %s", event.type, self._where)
            return None
        if not event.data.strip():
            return None  # a keep-alive
        head = event.data[:HEAD_SIZE]
        if event.oversized:
            detail = f"message larger than the {self._max_message_size}-byte limit was dropped"
            self._handler.on_invalid(detail, head, response_id_from_head(head))
            return None
        try:
            message = loads(event.data, max_values=max_values_for(self._max_message_size))
        except ValueError as exc:
            self._handler.on_invalid(f"not valid JSON ({exc})", head, response_id_from_head(head))
            return None
        if not isinstance(message, dict):
            self._handler.on_invalid(f"a JSON {type(message).__name__} is not a JSON-RPC message", head, None)
            return None
        return message

    def _answered(self, raw_id: object) -> None:
        request_id = wire_id(raw_id)
        if request_id is not None:
            self._waiting.discard(request_id)

    def _lose(self, reason: str) -> None:
        """The stream is gone: every request still waiting on it fails (it was POSTed: it may have run)."""
        self._endpoint = None
        self._lost = f"the SSE stream of {self._where} {reason}"
        waiting, self._waiting = self._waiting, set()
        for request_id in waiting:
            self._handler.on_request_failed(request_id, TransportError(self._lost, written=True))

    # -- the writing side --------------------------------------------------------------------------------------

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        if message.get("method") == "initialize" and self._endpoint is None and not self._closed:
            await self.open()  # a session lives on its stream: the first, or a new one after a lost stream
        request_id = wire_id(message.get("id"))
        if request_id is not None:
            self._waiting.add(request_id)
        try:
            await self._post(message, headers, timeout=None, request_id=request_id)
        except BaseException:
            if request_id is not None:
                self._waiting.discard(request_id)
            raise

    async def send_notification(self, message: JSONObject) -> None:
        await self._post(message, None, timeout=_SIDE_TIMEOUT)

    async def send_response(self, message: JSONObject) -> None:
        await self._post(message, None, timeout=_SIDE_TIMEOUT)

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        self.release(request_id)
        await self._post(cancellation(request_id, reason), None, timeout=_SIDE_TIMEOUT)
        return CancelMethod.NOTIFICATION

    def release(self, request_id: RequestId) -> None:
        self._waiting.discard(request_id)

    async def _post(
        self,
        message: JSONObject,
        extra: Mapping[str, str] | None,
        *,
        timeout: float | None,
        request_id: RequestId | None = None,
    ) -> None:
        what = message.get("method", "response")
        endpoint = self._endpoint
        if self._closed:
            raise TransportError(f"the connection to {self._where} is closed", written=False)
        if endpoint is None:
            lost = self._lost or f"the SSE stream of {self._where} is not open"
            raise SessionExpired(f"{lost}; the server's session went with it", session_id="", written=False)
        headers = self._base_headers.copy()
        for key, value in (extra or {}).items():
            headers[key.lower()] = value
        headers["content-type"] = "application/json"
        headers["accept-encoding"] = ACCEPT_ENCODING
        try:
            body = dumps(message).encode()
            options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
            request = self._client.build_request("POST", endpoint, content=body, headers=headers, **options)
        except (self._line.http_error, self._line.invalid_url, ValueError, TypeError) as exc:
            detail = f"could not build the POST of {what} to {redacted_url(endpoint)}: {_describe(exc)}"
            raise TransportError(detail, written=False) from exc
        try:
            response = await self._client.send(request, stream=True, follow_redirects=False, auth=self._auth)
            try:
                await discard(response, _MAX_POST_ANSWER)  # answers come on the stream: only a short body is read
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_BUDGET):
                    await response.aclose()
        except MCPClientError:
            raise
        except self._line.not_written as exc:
            detail = f"could not POST {what} to {redacted_url(endpoint)}: {_describe(exc)}"
            raise TransportError(detail, written=False) from exc
        except Exception as exc:  # (what no HTTP library maps, too) it may have been written
            detail = f"POST of {what} to {redacted_url(endpoint)} failed: {_describe(exc)}"
            raise TransportError(detail, written=True) from exc
        self._check(response, what, endpoint, request_id)

    def _check(self, response: httpx2.Response, what: object, endpoint: str, request_id: RequestId | None) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        detail = f"the server refused {what}: HTTP {status} {response.reason_phrase}".rstrip()
        if status == 404:  # the server no longer knows the session in the endpoint's query
            if request_id is not None:
                self._waiting.discard(request_id)  # (this one fails with the error raised here)
            self._lose(f"is of a session the server no longer knows ({redacted_url(endpoint)}: HTTP 404)")
            if self._listener is not None:
                self._listener.cancel()
            raise SessionExpired(detail, session_id="", written=False)
        retry_after = parse_retry_after(response.headers.get("retry-after")) if status in BACK_OFF_STATUSES else None
        raise TransportError(detail, written=True, status_code=status, retry_after=retry_after)

    async def close(self) -> None:
        """Stop reading the stream (its response is closed by the listener, bounded)."""
        self._closed = True
        self._endpoint = None
        if self._listener is not None:
            self._listener.cancel()


def _no_limit(seconds: float | None) -> float:
    return float("inf") if seconds is None else seconds


def _describe(exc: BaseException) -> str:
    """An HTTP library's exception as error text: any URL in it redacted, any configured secret hidden."""
    exc = sole_error(exc)  # (a group around one failure: that failure's text)
    return scrub(str(exc)) or type(exc).__name__
