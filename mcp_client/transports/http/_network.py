"""The network backend under the core engine's pool: anyio sockets with httpcore2's stream interface.

httpcore2 lets its pool be given a network backend (``network_backend=``, its public hook; the HTTP/1.1 state
machine, pooling and TLS policy stay httpcore2's and h11's). Ours opens the same anyio socket and TLS streams as
httpcore2's anyio backend, raises the same httpcore2 exceptions for the same anyio ones, and differs in three ways:

* **The socket is known as soon as a request is written.** At 2026-07-28 cancelling a request is closing its
  response stream, and the connection shuts the socket under it at once (docs/design.md, "Cancelling over HTTP
  shuts the socket, then lets the reader close"). httpcore2 names that socket only with the response, and a server
  that starts its answer with its first SSE event (the Python SDK's does) sends no headers while a tool runs. So
  a write names its stream to the request being sent (:data:`WRITING`, which the engine sets around each send).
* **One write per POST.** httpcore2 writes a request's head and its body separately (two sends, each a loop turn
  in anyio, and two TCP segments for the server to read); the head of a request with a body is held and goes out
  with the body, the bytes and their order unchanged.
* **No clock and no mapping context per read.** httpcore2's stream builds an exception table, a mapping context
  and a cancel scope (``fail_after``, even with no timeout) on every read and write; here a read without a
  timeout awaits the socket directly, and anyio's exceptions are mapped in ``except`` clauses, which cost nothing
  until one is raised. Each response in flight waits in one read, so this is memory per call as well as CPU.

It touches only the sockets it opens.
"""

from __future__ import annotations

import select
import ssl
import sys
from collections.abc import Awaitable, Iterable
from contextvars import ContextVar
from typing import Any, NoReturn, Protocol

import anyio
import anyio.abc
import anyio.streams.tls
import httpcore2

__all__ = ["WRITING", "NetworkBackend", "Written"]


class Written(Protocol):
    """What a request being sent records: the stream it was written to."""

    network_stream: httpcore2.AsyncNetworkStream | None
    """None until its first write."""

    @property
    def body_follows(self) -> bool:
        """True when httpcore2 writes a body after the head (so the head can wait for it)."""
        ...


WRITING: ContextVar[Written | None] = ContextVar("mcp_client_http_writing", default=None)
"""The request the current task is sending through the pool, if any (set and reset by the engine's ``send``)."""

_BROKEN = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream)


def _raise(mapped: type[Exception], exc: BaseException) -> NoReturn:
    raise mapped(exc) from exc  # as httpcore2's map_exceptions raises them


class _Stream(httpcore2.AsyncNetworkStream):
    """An anyio byte stream (a socket, or TLS over one) as httpcore2's pool reads and writes it."""

    __slots__ = ("_head", "_stream")

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self._stream = stream
        self._head = b""
        """A request's head, held for its body's write."""

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            if timeout is None:
                return await self._stream.receive(max_bytes)
            with anyio.fail_after(timeout):
                return await self._stream.receive(max_bytes)
        except anyio.EndOfStream:
            return b""
        except TimeoutError as exc:
            _raise(httpcore2.ReadTimeout, exc)
        except _BROKEN as exc:
            _raise(httpcore2.ReadError, exc)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        sending = WRITING.get()
        if sending is not None and sending.network_stream is None:  # the request's first write: its head
            sending.network_stream = self
            if sending.body_follows:
                self._head += buffer
                return
        if self._head:
            buffer, self._head = self._head + buffer, b""
        if not buffer:
            return
        try:
            if timeout is None:
                await self._stream.send(buffer)
            else:
                with anyio.fail_after(timeout):
                    await self._stream.send(buffer)
        except TimeoutError as exc:
            _raise(httpcore2.WriteTimeout, exc)
        except _BROKEN as exc:
            _raise(httpcore2.WriteError, exc)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                tls = await anyio.streams.tls.TLSStream.wrap(
                    self._stream,
                    ssl_context=ssl_context,
                    hostname=server_hostname,
                    standard_compatible=False,
                    server_side=False,
                )
        except Exception as exc:
            await self.aclose()
            if isinstance(exc, TimeoutError):
                _raise(httpcore2.ConnectTimeout, exc)
            if isinstance(exc, (anyio.BrokenResourceError, anyio.EndOfStream, ssl.SSLError)):
                _raise(httpcore2.ConnectError, exc)
            raise
        return _Stream(tls)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._stream.extra(anyio.streams.tls.TLSAttribute.ssl_object, None)
        if info == "client_addr":
            return self._stream.extra(anyio.abc.SocketAttribute.local_address, None)
        if info == "server_addr":
            return self._stream.extra(anyio.abc.SocketAttribute.remote_address, None)
        if info == "socket":
            return self._stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        if info == "is_readable":
            return _readable(self._stream.extra(anyio.abc.SocketAttribute.raw_socket, None))
        return None


def _readable(sock: Any) -> bool:
    """Whether a read would return at once (data, or the end a server's close left): an idle connection that is
    readable was closed by the server. A socket that is gone counts as readable, as in httpcore2."""
    fd = None if sock is None else sock.fileno()
    if fd is None or fd < 0:
        return True
    if sys.platform == "win32" or not hasattr(select, "poll"):
        ready, _, _ = select.select([fd], [], [], 0)
        return bool(ready)
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class NetworkBackend(httpcore2.AsyncNetworkBackend):
    """Opens TCP (or Unix) connections with anyio, on asyncio or trio; their streams are :class:`_Stream`."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        connecting = anyio.connect_tcp(remote_host=host, remote_port=port, local_host=local_address)
        return await _connected(connecting, timeout, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        return await _connected(anyio.connect_unix(path), timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


async def _connected(
    connecting: Awaitable[anyio.abc.SocketStream], timeout: float | None, socket_options: Iterable[Any] | None
) -> _Stream:
    """The socket ``connecting`` opens, within ``timeout``, with ``socket_options`` set; anyio's errors as
    httpcore2's."""
    try:
        with anyio.fail_after(timeout):
            stream = await connecting
    except TimeoutError as exc:  # (an OSError too: this one first)
        _raise(httpcore2.ConnectTimeout, exc)
    except (OSError, anyio.BrokenResourceError) as exc:
        _raise(httpcore2.ConnectError, exc)
    for option in socket_options or ():
        stream.extra(anyio.abc.SocketAttribute.raw_socket).setsockopt(*option)
    return _Stream(stream)
