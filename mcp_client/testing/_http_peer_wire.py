"""HTTP/1.1 framing for :mod:`mcp_client.testing.http_peer`: reading requests, writing heads, chunks and SSE events.

Just enough of RFC 9112 for a test server that must control every byte: request heads, ``Content-Length`` and
chunked request bodies, persistent connections, and response bodies that are either sized or chunked. Nothing here
knows about MCP.
"""

from __future__ import annotations

import http
from dataclasses import dataclass, field

import anyio
from anyio.abc import ByteReceiveStream

__all__ = [
    "LAST_CHUNK",
    "MalformedRequest",
    "RequestHead",
    "RequestReader",
    "chunk",
    "response_head",
    "sse_event",
]

MAX_HEAD_SIZE = 64 * 1024
"""Largest request head (request line and headers) accepted."""
MAX_BODY_SIZE = 64 * 1024 * 1024
"""Largest request body accepted."""
LAST_CHUNK = b"0\r\n\r\n"
"""The end of a chunked body."""

_STREAM_ERRORS = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class MalformedRequest(Exception):
    """The bytes received are not an HTTP/1.1 request this server can read (answered with 400, then closed)."""


@dataclass
class RequestHead:
    """One HTTP request as received: request line, headers (in order, names as sent) and the whole body."""

    method: str
    target: str
    version: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The value of the last header called ``name`` (case-insensitive), or None."""
        wanted = name.lower()
        found: str | None = None
        for key, value in self.headers:
            if key.lower() == wanted:
                found = value
        return found

    @property
    def path(self) -> str:
        """The target without its query string."""
        return self.target.partition("?")[0]

    @property
    def keep_alive(self) -> bool:
        """Whether the client wants the connection kept open after the response (HTTP/1.1 default: yes)."""
        tokens = {token.strip().lower() for token in (self.header("connection") or "").split(",")}
        if self.version == "HTTP/1.0":
            return "keep-alive" in tokens
        return "close" not in tokens


class RequestReader:
    """Buffered reading of requests from one connection; also tells when the client closed it."""

    def __init__(self, stream: ByteReceiveStream) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self.eof = False
        """Set once the client closed its side (or the connection broke)."""

    async def _fill(self) -> bool:
        """Receive more bytes into the buffer; False at end of stream."""
        if self.eof:
            return False
        try:
            data = await self._stream.receive()
        except _STREAM_ERRORS:
            self.eof = True
            return False
        self._buffer += data
        return True

    async def wait_for_request(self) -> bool:
        """Wait until the next request starts arriving; False when the client closed the connection instead."""
        return bool(self._buffer) or await self._fill()

    async def wait_closed(self) -> None:
        """Return once the client has closed the connection. Bytes arriving meanwhile (pipelining) are kept."""
        while await self._fill():
            pass

    async def read_request(self) -> RequestHead | None:
        """The next whole request, or None if the connection closed cleanly before one began."""
        while (end := self._buffer.find(b"\r\n\r\n")) < 0:
            if len(self._buffer) > MAX_HEAD_SIZE:
                raise MalformedRequest("request head too large")
            if not await self._fill():
                if self._buffer.strip():
                    raise MalformedRequest("connection closed in the middle of a request head")
                return None
        head = bytes(self._buffer[:end]).decode("latin-1")
        del self._buffer[: end + 4]
        request_line, *header_lines = head.lstrip("\r\n").split("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise MalformedRequest(f"bad request line {request_line!r}")
        request = RequestHead(parts[0], parts[1], parts[2])
        for line in header_lines:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise MalformedRequest(f"bad header line {line!r}")
            request.headers.append((name, value.strip(" \t")))
        if "chunked" in (request.header("transfer-encoding") or "").lower():
            request.body = await self._read_chunked()
        else:
            length = request.header("content-length")
            try:
                size = int(length) if length is not None else 0
            except ValueError:
                raise MalformedRequest(f"bad Content-Length {length!r}") from None
            if not 0 <= size <= MAX_BODY_SIZE:
                raise MalformedRequest(f"bad Content-Length {length!r}")
            request.body = await self._read_exact(size)
        return request

    async def _read_exact(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not await self._fill():
                raise MalformedRequest("connection closed in the middle of a request body")
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    async def _read_line(self) -> bytes:
        while (end := self._buffer.find(b"\r\n")) < 0:
            if len(self._buffer) > MAX_HEAD_SIZE or not await self._fill():
                raise MalformedRequest("bad chunked body")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 2]
        return line

    async def _read_chunked(self) -> bytes:
        body = bytearray()
        while True:
            size_text = (await self._read_line()).partition(b";")[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise MalformedRequest(f"bad chunk size {size_text!r}") from None
            if size == 0:
                while await self._read_line():  # trailers, up to the blank line
                    pass
                return bytes(body)
            body += await self._read_exact(size)
            if await self._read_line():
                raise MalformedRequest("chunk not followed by CRLF")
            if len(body) > MAX_BODY_SIZE:
                raise MalformedRequest("request body too large")


def response_head(status: int, headers: list[tuple[str, str]], *, reason: str | None = None) -> bytes:
    """A status line and headers, up to and including the blank line."""
    if reason is None:
        try:
            reason = http.HTTPStatus(status).phrase
        except ValueError:
            reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (``data`` must not be empty: an empty chunk ends the body)."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def sse_event(data: bytes, *, event: str | None = "message") -> bytes:
    """An SSE event carrying ``data`` (one ``data:`` line per line of it), ended by a blank line."""
    lines = [b"event: " + event.encode()] if event is not None else []
    lines += [b"data: " + line for line in data.split(b"\n")]
    return b"\r\n".join(lines) + b"\r\n\r\n"
