"""A hostile HTTP/1.1 server on a loopback socket, scripted per request, for the tests of the bounded body reader.

``HostileHttp(route)`` calls ``await route(request)`` for every request (:class:`Seen`: method, target, headers,
body) and writes the :class:`Reply` it returns: a body given as bytes goes out with its ``Content-Length``; one
given as an async iterator is written piece by piece as it is produced (chunked, unless the reply names its own
``Content-Length``), so a body of any size, a stream that never ends, or headers that never come (a route that
never returns) cost the server nothing. :func:`filler` is such a body. Every request is kept in ``requests``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc

__all__ = ["HostileHttp", "Reply", "Seen", "filler"]

_PIECE = b"x" * 65536


@dataclass(frozen=True)
class Seen:
    method: str
    target: str
    """The path and query."""
    headers: dict[str, str]
    """Lower-case names."""
    body: bytes

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]


@dataclass
class Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | AsyncIterator[bytes] = b""


async def filler(size: int) -> AsyncIterator[bytes]:
    """``size`` bytes of ``x``, 64 KiB at a time (one shared piece: the server holds nothing per byte sent)."""
    sent = 0
    while sent < size:
        piece = _PIECE if size - sent >= len(_PIECE) else _PIECE[: size - sent]
        sent += len(piece)
        yield piece


class HostileHttp:
    """See the module documentation."""

    def __init__(self, route: Callable[[Seen], Awaitable[Reply]]) -> None:
        self.route = route
        self.requests: list[Seen] = []
        self.base = ""
        """``http://127.0.0.1:<port>`` while serving."""

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[str]:
        """The server's base URL while the block runs."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self.base = f"http://127.0.0.1:{port}"
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, self._serve)
            yield self.base
            tg.cancel_scope.cancel()

    async def _serve(self, stream: anyio.abc.ByteStream) -> None:
        buffer = b""
        try:
            async with stream:
                while True:
                    while b"\r\n\r\n" not in buffer:
                        buffer += await stream.receive()
                    raw_head, buffer = buffer.split(b"\r\n\r\n", 1)
                    request_line, *lines = raw_head.decode("latin-1").split("\r\n")
                    method, target, _ = request_line.split(" ", 2)
                    headers: dict[str, str] = {}
                    for line in lines:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                    length = int(headers.get("content-length", "0"))
                    while len(buffer) < length:
                        buffer += await stream.receive()
                    seen = Seen(method, target, headers, buffer[:length])
                    buffer = buffer[length:]
                    self.requests.append(seen)
                    await self._write(stream, await self.route(seen))
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
            return  # the client went away (a bounded reader closes a body it stops reading)

    async def _write(self, stream: anyio.abc.ByteStream, reply: Reply) -> None:
        headers = {name.lower(): value for name, value in reply.headers.items()}
        streamed = not isinstance(reply.body, bytes)
        if isinstance(reply.body, bytes):
            headers["content-length"] = str(len(reply.body))
        elif "content-length" not in headers:
            headers["transfer-encoding"] = "chunked"
        chunked = headers.get("transfer-encoding") == "chunked"
        head = f"HTTP/1.1 {reply.status} Whatever\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        await stream.send(head.encode("latin-1") + b"\r\n")
        if not streamed:
            assert isinstance(reply.body, bytes)
            if reply.body:
                await stream.send(reply.body)
            return
        assert not isinstance(reply.body, bytes)
        try:
            async for piece in reply.body:
                if piece:
                    await stream.send(b"%x\r\n%b\r\n" % (len(piece), piece) if chunked else piece)
        finally:
            closing = getattr(reply.body, "aclose", None)
            if closing is not None:
                await closing()  # (the client may stop reading: nothing of ours is left to the collector)
        if chunked:
            await stream.send(b"0\r\n\r\n")
