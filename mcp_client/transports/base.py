"""The contract between the session and a transport.

A :class:`Transport` is a recipe (what users pass to ``Client``: ``stdio(...)``, ``http(...)``); connecting it
yields a :class:`Connection`, which owns the bytes, processes and sockets. Incoming traffic goes to a
:class:`MessageHandler` (the session), which routes it by id and token. A connection never interprets MCP beyond
what its framing needs. The wire form of a cancellation is the connection's own: it knows what it sent (over
Streamable HTTP at 2026-07-28 closing the response stream is the cancellation; elsewhere it is a
``notifications/cancelled`` message), so nobody above it passes the era in or asks which transport it is.
"""

from __future__ import annotations

import abc
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from mcp_client._types import JSONObject, RequestId
from mcp_client.errors import MCPClientError, TransportError
from mcp_client.events import CancelMethod

__all__ = ["JSONObject", "Connection", "MessageHandler", "RequestId", "Transport"]


class MessageHandler(Protocol):
    """Where a connection delivers what it reads. Implemented by the session; called from reader tasks.

    Optional hooks, looked up with ``getattr``: ``on_stderr(line)`` (a line of a server process's stderr),
    ``on_batch_begin()`` / ``on_batch_end()`` around the messages of one chunk read together, and
    ``waiting_on_a_person()``, a context manager that stops the idle clocks of the calls in flight while a person
    is asked something on the transport's side (an OAuth sign-in in the browser).
    """

    def on_message(self, message: JSONObject, stream: RequestId | None = None) -> None:
        """A well-formed JSON object arrived; ``stream`` is the request on whose response stream it came, when the
        transport has such streams (Streamable HTTP), else ``None``."""

    def on_invalid(self, detail: str, raw: bytes | None, request_id: RequestId | None) -> None:
        """Something arrived that is not a message (bad JSON, not an object, oversized). ``request_id`` is set
        when the broken message could still be attributed to a request, so that request can fail at once."""

    def on_request_failed(self, request_id: RequestId, error: MCPClientError) -> None:
        """One request failed on its own channel (HTTP: a broken stream, a refused sign-in); nothing else does."""

    def on_closed(self, error: TransportError) -> None:
        """The shared channel is gone (the process died, stdout closed): every request on it fails."""


class Connection(abc.ABC):
    """One live connection to a server."""

    @abc.abstractmethod
    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        """Write a request. Raises :class:`TransportError` with ``written`` saying whether it may have left."""

    def try_send_request(self, message: JSONObject, *, server_busy: bool = False) -> bool:
        """Write a request at once if that cannot block, and say so; ``False`` (the default): nothing was written,
        use :meth:`send_request`. Raises :class:`TransportError` like it. Lets the common case skip a cancel scope.

        ``server_busy``: earlier requests on this connection still await their answers, so the transport may hold
        this one until the end of the loop turn and write it together with the others of the turn (stdio)."""
        return False

    @abc.abstractmethod
    async def send_notification(self, message: JSONObject) -> None:
        """Write a notification (best effort; raises :class:`TransportError`)."""

    @abc.abstractmethod
    async def send_response(self, message: JSONObject) -> None:
        """Answer a server-initiated request (2025-11-25 only)."""

    def try_cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod | None:
        """Put the cancellation on the wire at once if that cannot block, and say how; ``None`` (the default):
        nothing was written, use :meth:`cancel`. Raises :class:`TransportError` like it."""
        return None

    @abc.abstractmethod
    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        """Put a cancellation of ``request_id`` on the wire in the form this transport requires for the protocol era
        the request was sent in."""

    def release(self, request_id: RequestId) -> None:  # noqa: B027 - optional hook, a no-op by default
        """The request ended; free whatever the connection holds for it (an HTTP response stream)."""

    @property
    def process_id(self) -> int | None:
        """The server's process id for stdio connections, else None."""
        return None


class Transport(abc.ABC):
    """How to reach a server. Immutable; connecting it yields a :class:`Connection`.

    Shown (``repr``) by its :attr:`description` only, the endpoint's one redacted name, whatever a subclass is
    made with: a dataclass's own ``repr`` would show its URL, headers, arguments and environment whole.
    """

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.__repr__ = Transport.__repr__  # type: ignore[method-assign]  # (in the class: a dataclass keeps it)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description!r})"

    @abc.abstractmethod
    def connect(self, handler: MessageHandler) -> AbstractAsyncContextManager[Connection]:
        """Bring the connection up; leaving the context shuts it down cleanly (bounded)."""

    @property
    @abc.abstractmethod
    def description(self) -> str:
        """A short human-readable name of the endpoint, for errors and logs."""

    @property
    def carries_headers(self) -> bool:
        """True when each request can carry headers of its own (HTTP), so per-call ``Mcp-Param-*`` can be sent."""
        return False

    @property
    def handshake_only(self) -> bool:
        """True when the transport carries only the protocol versions that start with ``initialize`` (HTTP+SSE,
        which predates the stateless protocol): the session then starts without the ``server/discover`` probe."""
        return False

    @property
    def era_cache_key(self) -> str | None:
        """Under which key the protocol era that worked is remembered across connections (HTTP: the origin)."""
        return None
