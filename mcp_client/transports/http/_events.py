"""Reading the SSE stream of one request's answer: decoded events become messages handed to the session.

A stream's events are handed on one chunk at a time (one batch for the session), attributed to the request whose
stream they came on; the response to that request ends the reading, and what follows it is only drained so the
connection can go back to the pool. :class:`_StreamState` remembers what a 2025-11-25 resumption needs.
"""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from mcp_client._types import JSONObject, RequestId
from mcp_client.policy.ids import wire_id
from mcp_client.transports._sse import SSEDecoder, SSEEvent
from mcp_client.transports.bounded_body import pieces
from mcp_client.transports.http._state import (
    _DRAIN_BUDGET,
    _blame,
    _ConnectionState,
    logger,
)

if TYPE_CHECKING:
    from mcp_client.transports.http._engine import Answer

_MAX_RETRY = 60.0
"""A ``retry:`` longer than this is taken as this (a broken server must not park a request for hours)."""


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


class _EventReader(_ConnectionState):
    """Consumes SSE streams and delivers their messages (the layer above the connection's state)."""

    async def _consume(self, request_id: RequestId, method: object, response: Answer, state: _StreamState) -> bool:
        """Deliver the stream's messages; True once the response to ``request_id`` was among them."""
        decoder = SSEDecoder(self._max_message_size)
        async with aclosing(pieces(response)) as chunks:
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

    def _deliver_events(self, request_id: RequestId, method: object, response: Answer, events: list[SSEEvent]) -> bool:
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

    def _deliver(self, request_id: RequestId, method: object, response: Answer, message: JSONObject) -> bool:
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
