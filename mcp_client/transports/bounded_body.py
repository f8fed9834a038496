"""The one reader of every HTTP body that comes off the network, bounded in what it holds and in what it inflates.

Every path that reads a response body reads it here: Streamable HTTP answers and error bodies (both engines), the
HTTP+SSE stream and its POST answers, the standalone GET stream, OAuth's documents and the 401/403 bodies of its
flow. A hostile server costs bounded memory whatever it sends:

* :func:`pieces` yields the body as it arrives. A ``gzip`` or ``deflate`` body is inflated here, at most
  :data:`PIECE` bytes at a time (a few KB of gzip can hold gigabytes), on every engine and either httpx line, so
  no library's decoder sets the size of what is held. Any other coding is refused (an ``httpx2.DecodingError``),
  never handed to the library's decoder: httpx 0.28 decodes each received chunk whole (64 KB of ``zstd`` are
  2 GB at once, and gzip under a coding it skips as unknown is inflated whole too). Every request asks only for
  what is inflated here (:data:`ACCEPT_ENCODING`), so a server that honours it is never refused.
* :func:`read_body` keeps at most ``limit`` bytes of it (after inflation) and says whether the body went on; the
  rest is never read. :func:`discard` reads and drops at most ``limit`` bytes, so a short body frees its
  connection for reuse and a long one costs no memory (its connection is closed instead).
* :func:`discard_before_retry`: httpx's auth loop reads, whole, each response it hands to a flow that then sends
  its request again (a 401 before a token refresh); the flow calls this first, so that read finds at most
  ``limit`` bytes, dropped. OAuth's flow does; :func:`bounded_auth` wraps any other auth a transport is given
  so that its flow does too.

Every generator opened on a body is closed when its reader stops (``aclosing``), never left to the garbage
collector. Touches only the responses it is given.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from contextlib import aclosing
from typing import Any, NamedTuple, Protocol

import httpx2

from mcp_client._httpx import HttpxLine

__all__ = [
    "ACCEPT_ENCODING",
    "MAX_RETRIED_BODY",
    "PIECE",
    "Body",
    "Streamed",
    "bounded_auth",
    "discard",
    "discard_before_retry",
    "pieces",
    "read_body",
]

PIECE = 64 * 1024
"""The most a compressed body is inflated at a time."""
MAX_RETRIED_BODY = 1024 * 1024
"""Bytes of a response read (and dropped) when an auth flow sends its request again."""
_INFLATED = frozenset({"gzip", "x-gzip", "deflate"})
"""The content codings inflated here; ``identity`` is none."""
ACCEPT_ENCODING = "gzip, deflate"
"""The ``Accept-Encoding`` of every request whose answer this module reads: the codings it inflates itself."""
_MAX_CODINGS = 2
"""More codings stacked on one body than this is refused (``gzip, gzip, ...`` is only ever a bomb's shape)."""


class Streamed(Protocol):
    """A streamed HTTP response: an ``httpx2.Response`` (or httpx's), or the core engine's answer."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    def aiter_raw(self) -> AsyncGenerator[bytes, None]: ...

    def aiter_bytes(self) -> AsyncGenerator[bytes, None]: ...


class Body(NamedTuple):
    """What :func:`read_body` read: at most its limit of bytes, and whether that was the whole body."""

    data: bytes
    complete: bool
    """False: the body went past the limit; ``data`` is its first ``limit`` bytes and the rest was not read."""


def codings(headers: Mapping[str, str]) -> list[str]:
    """The content codings of a body, in the order they were applied (``identity`` left out)."""
    value = headers.get("content-encoding")
    if not value:
        return []
    return [name for name in (part.strip().lower() for part in value.split(",")) if name and name != "identity"]


def inflatable(headers: Mapping[str, str]) -> bool:
    """Whether :func:`pieces` inflates the body itself (or it is not compressed at all)."""
    return all(name in _INFLATED for name in codings(headers))


def pieces(response: Streamed) -> AsyncGenerator[bytes, None]:
    """The body as it arrives, inflated :data:`PIECE` bytes at a time; close it (``aclosing``) when done early.

    Raises (while iterated): the ``DecodingError`` of httpx2 for a body that is not what its coding says, or whose
    coding is not one inflated here.
    """
    if getattr(response, "is_stream_consumed", False):
        return response.aiter_bytes()  # read already, and decoded, by whoever made it (an httpx mock, an auth flow)
    names = codings(response.headers)
    if not names:
        return response.aiter_raw()
    if all(name in _INFLATED for name in names):
        return _inflated(response.aiter_raw(), names)
    return refused(response.headers.get("content-encoding", ""))


async def refused(encoding: str) -> AsyncGenerator[bytes, None]:
    """A body that is not read: its content coding (``encoding``) is not one :func:`pieces` inflates."""
    raise httpx2.DecodingError(f"the answer's content encoding {encoding!r} is not supported")
    yield b""  # (an async generator)


async def read_body(response: Streamed, limit: int) -> Body:
    """At most ``limit`` bytes of the body (after inflation); holds at most ``limit`` plus one piece meanwhile."""
    kept = bytearray()
    async with aclosing(pieces(response)) as body:
        async for piece in body:
            room = limit - len(kept)
            if len(piece) > room:
                kept += piece[:room]
                return Body(bytes(kept), complete=False)
            kept += piece
    return Body(bytes(kept), complete=True)


async def discard(response: Streamed, limit: int) -> bool:
    """Read and drop at most ``limit`` bytes of the body; True when it ended within them."""
    seen = 0
    async with aclosing(pieces(response)) as body:
        async for piece in body:
            seen += len(piece)
            if seen > limit:
                return False
    return True


async def discard_before_retry(response: Any, limit: int) -> None:
    """In an httpx auth flow about to send its request again: leave ``response`` read, its body dropped after at
    most ``limit`` raw bytes (past them its connection is closed, not reused), so the auth loop's own read of it
    costs nothing. ``response`` is an ``httpx2.Response`` or an ``httpx.Response``, whichever client runs the flow.
    """
    library = sys.modules.get(type(response).__module__.partition(".")[0], httpx2)
    base: type = getattr(library, "AsyncByteStream", httpx2.AsyncByteStream)
    response.stream = _dropping_stream(base)(response.stream, limit)
    await response.aread()


def bounded_auth(line: HttpxLine, auth: Any) -> Any:
    """``auth`` (what a client of ``line`` takes as ``send(auth=...)``), its flow made to drop, bounded, the body of
    each response it asks past (:func:`discard_before_retry`); the client's own default is left as it is."""
    if auth is line.use_client_default:
        return auth
    made = _BOUNDED_AUTH.get(line.auth_base)
    if made is None:
        made = _BOUNDED_AUTH[line.auth_base] = _bounded_auth_class(line.auth_base)
    return made(auth)


_BOUNDED_AUTH: dict[type, type] = {}


def _bounded_auth_class(base: type) -> type:
    class BoundedAuth(base):  # type: ignore[misc]
        def __init__(self, auth: Any) -> None:
            self._auth = auth
            self.requires_request_body = bool(getattr(auth, "requires_request_body", False))
            # (an auth that needs the body reads it in its own flow, which httpx's base class runs)

        def sync_auth_flow(self, request: Any) -> Any:
            return self._auth.sync_auth_flow(request)

        async def async_auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
            flow = self._auth.async_auth_flow(request)
            try:
                request = await flow.__anext__()
                while True:
                    response = yield request
                    try:
                        request = await flow.asend(response)
                    except StopAsyncIteration:
                        return
                    await discard_before_retry(response, MAX_RETRIED_BODY)
            finally:
                await flow.aclose()

    return BoundedAuth


_DROPPING: dict[type, type] = {}


def _dropping_stream(base: type) -> type:
    """An ``AsyncByteStream`` of ``base``'s line that reads at most ``limit`` bytes of a stream and yields none."""
    made = _DROPPING.get(base)
    if made is not None:
        return made

    class Dropping(base):  # type: ignore[misc]
        def __init__(self, stream: Any, limit: int) -> None:
            self._stream = stream
            self._limit = limit

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            chunks = self._stream.__aiter__()
            try:
                async for chunk in chunks:
                    seen += len(chunk)
                    if seen > self._limit:
                        break
            finally:
                if hasattr(chunks, "aclose"):
                    await chunks.aclose()
            return
            yield b""  # (an async generator that yields nothing)

        async def aclose(self) -> None:
            await self._stream.aclose()

    _DROPPING[base] = Dropping
    return Dropping


async def _inflated(raw: AsyncGenerator[bytes, None], names: list[str]) -> AsyncGenerator[bytes, None]:
    if len(names) > _MAX_CODINGS:
        raise httpx2.DecodingError(f"the body is encoded {len(names)} times over ({', '.join(names)}): refused")
    layers = [_Inflater(name) for name in reversed(names)]  # the last coding applied is undone first
    async with aclosing(raw):
        async for chunk in raw:
            for piece in _through(layers, chunk):
                yield piece
    for piece in _through(layers, None):
        yield piece


def _through(layers: list[_Inflater], chunk: bytes | None) -> Iterator[bytes]:
    """``chunk`` (None: the end of the body) through every layer in turn, a bounded piece at a time."""
    if not layers:
        if chunk:
            yield chunk
        return
    first, rest = layers[0], layers[1:]
    for piece in first.feed(chunk) if chunk is not None else first.finish():
        yield from _through(rest, piece)
    if chunk is None:
        yield from _through(rest, None)


class _Inflater:
    """One ``gzip`` or ``deflate`` layer, inflated :data:`PIECE` bytes at a time (zlib's ``max_length`` and
    ``unconsumed_tail``). ``deflate`` is tried as zlib data first, then as raw deflate, as httpx does."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._gzip = name != "deflate"
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes) -> Iterator[bytes]:
        first, self._first = self._first, False
        try:
            piece = self._zlib.decompress(data, PIECE)
        except zlib.error as exc:
            if not first or self._gzip:
                raise self._error(exc) from exc
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, which some servers send
            yield from self.feed(data)
            return
        try:
            while piece:
                yield piece
                piece = self._zlib.decompress(self._zlib.unconsumed_tail, PIECE)
        except zlib.error as exc:
            raise self._error(exc) from exc

    def finish(self) -> Iterator[bytes]:
        try:
            piece = self._zlib.flush()
        except zlib.error as exc:
            raise self._error(exc) from exc
        if piece:
            yield piece

    def _error(self, exc: zlib.error) -> httpx2.DecodingError:
        return httpx2.DecodingError(f"the {self._name} body could not be decoded: {exc}")
