"""Reading one request's answer: the POST is sent and its response read, as JSON or as an SSE stream.

One task per request in flight runs :meth:`_RequestReader._exchange`, in the connection's task group. A failure
there (a 5xx, a dropped stream) fails that request only, through ``on_request_failed``; nothing else is touched.
A request whose connection could not even be opened (a ``ConnectError``: nothing was written) is sent once
more, transparently; if that fails too, the request fails with ``written=False``. A 3xx fails the request
(redirects are never followed). Ending a request cancels its reader's scope, which closes the response.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from mcp_client._types import RequestId
from mcp_client.errors import MCPClientError
from mcp_client.transports._json import loads
from mcp_client.transports._message_head import HEAD_SIZE
from mcp_client.transports.bounded_body import Body, read_body
from mcp_client.transports.http._events import _StreamState
from mcp_client.transports.http._session import _LegacySession
from mcp_client.transports.http._state import (
    _MAX_ERROR_BODY,
    _SSE,
    _closing_scope,
    _content_type,
    _describe,
    logger,
)
from mcp_client.transports.http._status import outcome_of_error_status

if TYPE_CHECKING:
    from mcp_client.transports.http._engine import Answer

_REFUSED_BY_OLD_SERVERS = frozenset({400, 404, 405})
"""What an HTTP+SSE server answers a POST to its SSE URL: the spec's cue to try a GET there."""


def _is_jsonrpc_error(body: bytes) -> bool:
    try:
        parsed = loads(body) if body.strip() else None
    except ValueError:
        return False
    return isinstance(parsed, dict) and isinstance(parsed.get("error"), dict)


class _RequestReader(_LegacySession):
    """Sends one request and reads its answer to the end (the layer under the connection's writing side)."""

    async def _fall_back(self, request_id: RequestId, method: object, response: Answer) -> bool:
        """The connection's hook for the HTTP+SSE fallback: True when it took over the refused request."""
        return False

    async def _exchange(
        self,
        request_id: RequestId,
        method: object,
        request: object,
        scope: anyio.CancelScope,
        modern: bool,
    ) -> None:
        # What release() shuts: the core engine's request knows its socket once written, before any answer (a
        # server may send no headers until its first event); an httpx client's answer names it. (The sending is
        # inline, not a method of its own: a call in flight waits here, and each frame it waits in is its memory.)
        self._open_responses[request_id] = request
        try:
            with scope:
                for attempt in (1, 2):
                    try:
                        response = await self._engine.send(request)
                        break
                    except self._line.connect_error as exc:
                        if attempt == 1:
                            logger.debug("could not connect for request %s (%s); trying once more", request_id, exc)
                            continue
                        detail, written = f"could not connect to {self._where}: {_describe(exc)}", False
                    except self._line.not_written as exc:
                        detail, written = f"could not reach {self._where}: {_describe(exc)}", False
                    except self._line.http_error as exc:
                        detail, written = f"the request to {self._where} failed: {_describe(exc)}", True
                    self._fail(request_id, detail, written=written)
                    return
                await self._read_answer(request_id, method, request, response, modern)
        except MCPClientError as exc:  # an auth failure: typed already, and not a broken channel (not retried)
            self._handler.on_request_failed(request_id, exc)
        except Exception as exc:  # one request's trouble never escapes into the task group
            logger.debug("request %s failed unexpectedly", request_id, exc_info=True)
            self._fail(request_id, f"the answer could not be read: {_describe(exc)}", written=True)
        finally:
            if self._open_responses.get(request_id) is request:
                del self._open_responses[request_id]
            self._forget(request_id, scope)

    async def _read_answer(
        self, request_id: RequestId, method: object, request: object, response: Answer, modern: bool
    ) -> None:
        """Read the answer to its end and close it; its socket is what release() shuts meanwhile."""
        held = request
        network_stream = response.extensions.get("network_stream")
        if network_stream is not None and self._open_responses.get(request_id) is request:
            self._open_responses[request_id] = held = network_stream
        try:
            await self._read(request_id, method, response, modern)
        except self._line.http_error as exc:
            self._fail(request_id, f"the answer from {self._where} broke off: {_describe(exc)}", written=True)
        finally:
            if self._open_responses.get(request_id) is held:
                del self._open_responses[request_id]
            with _closing_scope():
                await response.aclose()

    async def _read(self, request_id: RequestId, method: object, response: Answer, modern: bool) -> None:
        status = response.status_code
        if status == 202:
            self._fail(request_id, "server answered 202 to a request", written=True)
        elif 300 <= status < 400:
            location = response.headers.get("location")
            self._fail(request_id, f"HTTP {status}: redirect to {location!r} not followed", written=True)
        elif not 200 <= status < 300:
            await self._read_error(request_id, response, method)
        else:
            self._accept()
            content_type = _content_type(response)
            if content_type == _SSE:
                await self._read_events(request_id, method, response, modern)
            elif content_type == "application/json":
                self._read_json(request_id, method, response, await read_body(response, self._max_message_size))
            else:
                head = (await read_body(response, 512)).data
                detail = f"HTTP {status} answer with unexpected content type {content_type or 'none'!r}"
                self._handler.on_invalid(detail, head, request_id)

    def _read_json(self, request_id: RequestId, method: object, response: Answer, read: Body) -> None:
        body = read.data
        if not read.complete:
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

    async def _read_events(self, request_id: RequestId, method: object, response: Answer, modern: bool) -> None:
        """Read the request's SSE stream to its response; at 2025-11-25 resume a stream that ended too early."""
        state = _StreamState()
        try:
            if await self._consume(request_id, method, response, state):
                return
            broke = "the SSE stream ended without a response"
        except self._line.http_error as exc:
            broke = f"the answer from {self._where} broke off: {_describe(exc)}"
        if modern or not self._legacy or state.last_event_id is None:
            self._fail(request_id, broke, written=True)
            return
        await self._resume(request_id, method, state, broke)

    async def _read_error(self, request_id: RequestId, response: Answer, method: object = None) -> None:
        expired = self._expired_by(response)
        if expired is not None:
            self._handler.on_request_failed(request_id, expired)
            return
        body = (await read_body(response, _MAX_ERROR_BODY)).data  # its head is all an error needs
        if (
            response.status_code in _REFUSED_BY_OLD_SERVERS
            and not _is_jsonrpc_error(body)  # a Streamable HTTP server that answered in JSON-RPC: no old server
            and await self._fall_back(request_id, method, response)
        ):
            return
        outcome = outcome_of_error_status(response, body)
        if isinstance(outcome, MCPClientError):
            self._handler.on_request_failed(request_id, outcome)
            return
        # The body answers this POST whatever id it names (servers that could not read ours send null).
        self._handler.on_message({"jsonrpc": "2.0", "id": request_id, "error": outcome})

    def _forget(self, request_id: RequestId, scope: anyio.CancelScope) -> None:
        if self._streams.get(request_id) is scope:
            del self._streams[request_id]
        self._unaccepted.pop(request_id, None)
