"""The 2025-11-25 session machinery of the Streamable HTTP transport: what only a legacy session does.

* The ``Mcp-Session-Id`` ends when the server answers 404 to it (:meth:`_LegacySession._expired_by`).
* After ``notifications/initialized`` a standalone ``GET`` stream is held open for what the server sends on its
  own; a 405 means the server has none. It reconnects a bounded number of times, honouring the server's ``retry:``.
* SEP-1699: a request's SSE stream that ends without the response, after the server sent an event id, is resumed
  with ``GET`` + ``Last-Event-ID`` after the server's ``retry:`` (default 1 s), at most twice.
* Closing the connection ends the server's session with a ``DELETE`` (bounded, errors ignored).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from mcp_client._types import RequestId
from mcp_client.errors import SessionExpired
from mcp_client.transports._sse import SSEDecoder, SSEEvent
from mcp_client.transports.bounded_body import discard, pieces
from mcp_client.transports.http._events import _EventReader, _StreamState
from mcp_client.transports.http._state import (
    _CLOSE_BUDGET,
    _MAX_ERROR_BODY,
    _SIDE_TIMEOUT,
    _SSE,
    _closing_scope,
    _content_type,
    _describe,
    logger,
)

if TYPE_CHECKING:
    from mcp_client.transports.http._engine import Answer

_DEFAULT_RETRY = 1.0
"""Seconds to wait before resuming or reconnecting a stream when the server sent no ``retry:``."""
_RESUME_ATTEMPTS = 2
"""GETs with ``Last-Event-ID`` tried for one request whose stream ended without its response (2025-11-25)."""
_LISTEN_RECONNECTS = 2
"""Reconnects of the standalone GET stream in a row that bring no message before it is given up."""


class _LegacySession(_EventReader):
    """Session expiry, the standalone GET stream, resumption and the closing DELETE (2025-11-25)."""

    def _expired_by(self, response: Answer) -> SessionExpired | None:
        """A 404 to something that carried our session id: the session is gone. Sets the flag; None otherwise."""
        sent = response.request.headers.get("mcp-session-id")
        if response.status_code != 404 or sent is None:
            return None
        if sent == self._session_id:
            self.session_expired = True
            self._stop_listening()
        # The session id is a bearer of the session: it stays a fact of the error (session_id), never its text.
        logger.debug("the server no longer knows our session (HTTP 404)")
        return SessionExpired("the server ended the session (HTTP 404): a new session must be started", session_id=sent)

    @asynccontextmanager
    async def _get_stream(self, last_event_id: str | None) -> AsyncIterator[Answer]:
        """``GET`` the endpoint for an SSE stream, with the session headers (and ``Last-Event-ID`` to resume)."""
        headers = self._base_headers.copy()
        headers["accept"] = _SSE
        if self._session_id is not None:
            headers["mcp-session-id"] = self._session_id
        if self._version is not None:
            headers["mcp-protocol-version"] = self._version
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        response = await self._engine.send(self._engine.build("GET", headers, None, None))
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
                async with aclosing(pieces(response)) as chunks:
                    async for chunk in chunks:
                        events = decoder.feed(chunk)
                        state.saw(decoder)
                        if events:
                            brought = self._deliver_unsolicited(events) or brought
        except self._line.http_error as exc:
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
            except self._line.http_error as exc:
                logger.debug("resumption %d of request %s broke off: %s", attempt, request_id, exc)
        self._fail(request_id, f"{broke}, and {_RESUME_ATTEMPTS} attempts to resume it did not bring it", written=True)

    async def _end_session(self) -> None:
        """End the server's session with a DELETE, if there is one (bounded, errors ignored)."""
        if self._session_id is None or self.session_expired:
            return
        headers = {**self._base_headers, "mcp-session-id": self._session_id}
        if self._version is not None:
            headers["mcp-protocol-version"] = self._version
        with anyio.move_on_after(_CLOSE_BUDGET):
            try:
                response = await self._engine.send(self._engine.build("DELETE", headers, None, _SIDE_TIMEOUT))
                try:
                    await discard(response, _MAX_ERROR_BODY)
                finally:
                    with _closing_scope():
                        await response.aclose()
                logger.debug("DELETE of the session: HTTP %s", response.status_code)
            except self._line.http_error as exc:
                logger.debug("DELETE of the session failed: %s", _describe(exc))


class _StopListening(Exception):
    """The server has no standalone GET stream for us (405, an error status, not SSE): stop trying."""
