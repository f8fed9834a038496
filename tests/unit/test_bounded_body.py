"""The one bounded reader of HTTP bodies (``transports/bounded_body.py``), on scripted responses: what it inflates
and how much at a time, what it keeps, what it drops, and that it closes what it stops reading."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx
import httpx2
import pytest

from mcp_client.transports.bounded_body import PIECE, discard, discard_before_retry, pieces, read_body

pytestmark = pytest.mark.anyio


class Scripted:
    """A streamed response: ``headers`` and raw ``chunks``; records whether its raw generator was closed early."""

    def __init__(self, chunks: list[bytes], encoding: str | None = None) -> None:
        self.headers = {"content-encoding": encoding} if encoding else {}
        self._chunks = chunks
        self.sent = 0
        self.closed_early = False

    async def aiter_raw(self) -> AsyncGenerator[bytes, None]:
        finished = False
        try:
            for chunk in self._chunks:
                self.sent += len(chunk)
                yield chunk
            finished = True
        finally:
            self.closed_early = not finished

    def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        raise AssertionError("the library's decoder is never asked for gzip or deflate")


def _split(data: bytes, size: int = 65536) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


async def _all(response: Scripted) -> list[bytes]:
    async with aclosing(pieces(response)) as body:
        return [piece async for piece in body]


async def test_a_gzip_bomb_is_inflated_a_piece_at_a_time() -> None:
    bomb = gzip.compress(b"A" * 20_000_000)
    got = await _all(Scripted(_split(bomb), "gzip"))
    assert max(len(piece) for piece in got) <= PIECE
    assert sum(len(piece) for piece in got) == 20_000_000


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS])
async def test_deflate_as_zlib_data_or_raw(wbits: int) -> None:
    compressor = zlib.compressobj(wbits=wbits)
    data = compressor.compress(b"hello " * 1000) + compressor.flush()
    assert b"".join(await _all(Scripted(_split(data, 100), "deflate"))) == b"hello " * 1000


async def test_stacked_codings_are_undone_in_turn_and_a_pile_of_them_is_refused() -> None:
    twice = gzip.compress(gzip.compress(b"x" * 1000))
    assert b"".join(await _all(Scripted([twice], "gzip, gzip"))) == b"x" * 1000
    with pytest.raises(httpx2.DecodingError, match="3 times"):
        await _all(Scripted([gzip.compress(twice)], "gzip, gzip, gzip"))
    with pytest.raises(httpx2.DecodingError):
        await _all(Scripted([b"not gzip at all"], "gzip"))


async def test_read_body_keeps_its_limit_and_stops_reading() -> None:
    response = Scripted([b"x" * 1000] * 100)
    body = await read_body(response, 2500)
    assert (len(body.data), body.complete) == (2500, False)
    assert response.sent == 3000
    assert response.closed_early
    whole = await read_body(Scripted([b"ab", b"cd"]), 4)
    assert whole == (b"abcd", True)


async def test_discard_drops_what_it_reads_and_stops_at_its_limit() -> None:
    response = Scripted([b"x" * 1000] * 100)
    assert not await discard(response, 4500)
    assert response.sent == 5000
    assert response.closed_early
    assert await discard(Scripted([b"x" * 10]), 10)


class _Endless:
    """A response body that would never end (counted as it is read), of either httpx line."""

    def __init__(self) -> None:
        self.read = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            self.read += 65536
            yield b"x" * 65536

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.parametrize("library", [httpx2, httpx])
async def test_the_auth_loop_finds_a_refusal_read_and_dropped(library: Any) -> None:
    """What httpx's auth loop reads of a response its flow asks past: at most the limit, kept nowhere."""
    endless = _Endless()

    class Stream(library.AsyncByteStream):  # type: ignore[misc]
        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in endless:
                yield chunk

        async def aclose(self) -> None:
            await endless.aclose()

    response = library.Response(401, stream=Stream())
    await discard_before_retry(response, 1_000_000)
    assert await response.aread() == b""  # (what the auth loop does next)
    assert endless.read <= 1_000_000 + 65536
    assert endless.closed
