"""The network backend under the core engine's pool: httpcore2's own, with streams that say who wrote to them.

At 2026-07-28 cancelling a request is closing its response stream, and the connection shuts the socket under it at
once (docs/design.md, "Cancelling over HTTP shuts the socket, then lets the reader close"). httpcore2 names that
socket only with the response (its ``network_stream`` extension), and a server that starts its answer only with
the first SSE event (the Python SDK's does) sends no headers while a tool runs: a request cancelled then would
reach the server only after its reader task woke and httpcore2's error path closed the connection. So the pool is
given this backend (``network_backend=``, httpcore2's public hook): it opens connections through httpcore2's
backend for the running loop (trio's on trio, anyio's otherwise, as httpcore2 picks) and wraps each stream so that
a write names the stream to the request being sent (:data:`WRITING`, set by the engine around each send). Reads,
``get_extra_info`` and close go straight to httpcore2's stream: the wrapper costs one call per write, nothing per
read.

It touches nothing but the streams httpcore2's backend opens.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

import httpcore2

from mcp_client._backend import current_backend

if TYPE_CHECKING:
    import ssl

__all__ = ["WRITING", "TrackingBackend", "Written"]


class Written(Protocol):
    """What a request being sent records: the stream it was written to."""

    network_stream: httpcore2.AsyncNetworkStream | None


WRITING: ContextVar[Written | None] = ContextVar("mcp_client_http_writing", default=None)
"""The request the current task is sending through the pool, if any (set and reset by the engine's ``send``)."""


class _TrackingStream(httpcore2.AsyncNetworkStream):
    """httpcore2's stream, whose writes tell :data:`WRITING`'s request which stream carries it."""

    __slots__ = ("_stream", "aclose", "get_extra_info", "read")

    def __init__(self, stream: httpcore2.AsyncNetworkStream) -> None:
        self._stream = stream
        # Bound methods of the inner stream: no extra frame per read.
        self.read = stream.read  # type: ignore[method-assign]
        self.aclose = stream.aclose  # type: ignore[method-assign]
        self.get_extra_info = stream.get_extra_info  # type: ignore[method-assign]

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        sending = WRITING.get()
        if sending is not None:
            sending.network_stream = self._stream
        await self._stream.write(buffer, timeout)

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        return _TrackingStream(await self._stream.start_tls(ssl_context, server_hostname, timeout))


class TrackingBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's network backend for the running loop, chosen at the first connection; its streams tracked."""

    __slots__ = ("_backend",)

    def __init__(self) -> None:
        self._backend: httpcore2.AsyncNetworkBackend | None = None

    def _chosen(self) -> httpcore2.AsyncNetworkBackend:
        if self._backend is None:
            self._backend = httpcore2.TrioBackend() if current_backend().name == "trio" else httpcore2.AnyIOBackend()
        return self._backend

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._chosen().connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return _TrackingStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._chosen().connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        return _TrackingStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._chosen().sleep(seconds)
