"""Requests the server makes of the client at 2025-11-25: ``ping``, and elicitation, sampling and roots.

At 2025-11-25 a server may send requests of its own on the connection; the session routes them here (the era
decides whether they are accepted at all: at 2026-07-28 servers must not send any, and the same questions come as
input rounds of a call instead). Each is answered in a task of the client's task group, so the reader never waits:
``ping`` at once, the input methods by the host's handler while the idle clocks of the calls in flight are paused
(a person is answering), anything else with ``-32601``. A ``notifications/cancelled`` naming one of them ends its
handler, and then no response is sent, as the server expects none.

Bounded by the server: at most ``max_concurrent`` of the host's handlers run at once (the others wait their turn,
in order), and at most :data:`WAITING_PER_HANDLER` times that many of the server's requests are being answered at
all (waiting for a handler, running one, or waiting to write the answer to a server that does not read). A request
beyond that is not answered: it is dropped and reported (the server is flooding, or not reading its answers), so a
flood costs a bounded number of tasks, never one per request.

Part of the session layer: may touch the session's task group and the handler it is given; nothing above it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any

import anyio
import anyio.abc

from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject
from mcp_client.errors import ServerError, TransportError
from mcp_client.session.handlers import InputHandler

__all__ = [
    "DEFAULT_MAX_SERVER_REQUESTS",
    "INPUT_REQUEST_METHODS",
    "WAITING_PER_HANDLER",
    "ServerRequests",
    "check_max_server_requests",
]

logger = package_logger("mcp_client.session")

INPUT_REQUEST_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
"""The server's requests that the host's input handler answers."""

DEFAULT_MAX_SERVER_REQUESTS = 8
"""How many of the host's handlers (elicitation, sampling, roots) run at once for one connection, by default."""

WAITING_PER_HANDLER = 8
"""The server's requests being answered at once, per handler allowed to run: beyond, a request is dropped."""


def check_max_server_requests(value: object) -> int:
    """``value`` as a limit of handlers running at once.

    Raises:
        ValueError: it is not an integer of at least 1.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_server_requests must be an integer of at least 1, got {value!r}")
    return value


class ServerRequests:
    """The server's requests being answered on one connection."""

    def __init__(
        self,
        *,
        task_group: anyio.abc.TaskGroup,
        handler: InputHandler | None,
        waiting_on_a_person: Callable[[], AbstractContextManager[None]],
        send_response: Callable[[JSONObject], Awaitable[None]],
        send_timeout: float,
        max_concurrent: int = DEFAULT_MAX_SERVER_REQUESTS,
        on_dropped: Callable[[str], None] | None = None,
    ) -> None:
        check_max_server_requests(max_concurrent)
        self._task_group = task_group
        self._handler = handler
        self._waiting_on_a_person = waiting_on_a_person
        self._send_response = send_response
        self._send_timeout = send_timeout
        self._running: dict[str, anyio.CancelScope] = {}
        self._handlers = anyio.CapacityLimiter(max_concurrent)
        self._max_answering = max_concurrent * WAITING_PER_HANDLER
        self._answering = 0
        self._on_dropped = on_dropped
        self.dropped = 0
        """Requests of the server's dropped unanswered because too many were being answered already."""

    def accept(self, request_id: Any, method: str, params: JSONObject) -> None:
        """Answer the server's request ``request_id`` in the background, or drop it when too many are being
        answered already. Never blocks."""
        if self._answering >= self._max_answering:
            self.dropped += 1
            detail = (
                f"the server's {method} request was dropped unanswered: {self._answering} of its requests are being"
                " answered already"
            )
            logger.debug("%s", detail)
            if self._on_dropped is not None:
                self._on_dropped(detail)
            return
        self._answering += 1
        self._task_group.start_soon(self._answer, request_id, method, params)

    def withdraw(self, params: JSONObject) -> None:
        """The server cancelled a request it made (``notifications/cancelled``): stop answering it."""
        scope = self._running.get(_request_key(params.get("requestId")))
        if scope is not None:
            scope.cancel()

    async def _answer(self, request_id: Any, method: str, params: JSONObject) -> None:
        try:
            response = await self._response(request_id, method, params)
            if response is None:
                return  # the server cancelled its request: it expects no response
            with anyio.move_on_after(self._send_timeout):
                try:
                    await self._send_response(response)
                except TransportError as exc:
                    logger.debug("could not answer the server's %s: %s", method, exc)
        finally:
            self._answering -= 1

    async def _response(self, request_id: Any, method: str, params: JSONObject) -> JSONObject | None:
        response: JSONObject = {"jsonrpc": "2.0", "id": request_id}
        if method == "ping":
            response["result"] = {}
            return response
        if self._handler is None or method not in INPUT_REQUEST_METHODS:
            response["error"] = {"code": -32601, "message": f"the client does not handle {method}"}
            return response
        key = _request_key(request_id)
        with anyio.CancelScope() as scope:
            self._running[key] = scope
            try:
                async with self._handlers:  # waiting for a turn is cancelled by the server's cancellation too
                    with self._waiting_on_a_person():
                        response["result"] = await self._handler(method, params)
            except ServerError as exc:
                response["error"] = {"code": exc.code, "message": exc.message}
            except Exception:
                logger.exception("handler for the server's %s request failed", method)
                response["error"] = {"code": -32603, "message": "the client failed to handle the request"}
            finally:
                self._running.pop(key, None)
        return None if scope.cancelled_caught else response


def _request_key(raw: object) -> str:
    """A server's request id as a dict key: ids 7 and "7" are the same request."""
    return str(raw)
