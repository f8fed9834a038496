"""Our SSE decoder against httpx2's own SSE support, on the same response body: CPU per event, parsed to JSON.

Usage::

    python -m benchmarks.sse [--events N] [--repeats N]

The body is what mcp 2.3.0's server sends for a burst of progress notifications: one ``event: message`` /
``data: {...}`` event per chunk, CRLF line ends. Each side reads an ``httpx2.Response`` streaming those chunks from
memory and turns every event into a JSON object: ours with :class:`mcp_client.transports._sse.SSEDecoder` on the
raw chunks and :func:`mcp_client.transports._json.loads` on each event's bytes (what the transport does), httpx2's
with ``httpx2.EventSource`` (text decoding, its line splitter and event decoder) and ``json.loads`` of each
event's text. No socket and no server: only the decoding differs. Median of the repeats, on CPU time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import httpx2

from mcp_client.transports._json import loads
from mcp_client.transports._sse import SSEDecoder

__all__ = ["main", "measure"]


def _chunks(events: int) -> list[bytes]:
    chunks = []
    for step in range(1, events + 1):
        message = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p1", "progress": step, "total": events},
        }
        chunks.append(b"event: message\r\ndata: " + json.dumps(message).encode() + b"\r\n\r\n")
    return chunks


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


def _response(chunks: list[bytes]) -> httpx2.Response:
    request = httpx2.Request("POST", "http://127.0.0.1/mcp")
    headers = {"content-type": "text/event-stream"}
    return httpx2.Response(200, headers=headers, stream=_Body(chunks), request=request)


async def _ours(response: httpx2.Response) -> int:
    decoder = SSEDecoder(32 * 1024 * 1024)
    parsed = 0
    async for chunk in response.aiter_raw():
        for event in decoder.feed(chunk):
            if isinstance(loads(event.data), dict):
                parsed += 1
    return parsed


async def _httpx2(response: httpx2.Response) -> int:
    parsed = 0
    async for event in httpx2.EventSource(response):
        if isinstance(json.loads(event.data), dict):
            parsed += 1
    return parsed


async def measure(events: int, repeats: int) -> dict[str, float]:
    """CPU microseconds per event for each decoder (median over ``repeats``)."""
    chunks = _chunks(events)
    decoders: dict[str, Callable[[httpx2.Response], Awaitable[int]]] = {"ours": _ours, "httpx2": _httpx2}
    samples: dict[str, list[float]] = {name: [] for name in decoders}
    for _ in range(repeats):
        for name, decode in decoders.items():  # interleaved
            response = _response(chunks)
            started = time.process_time()
            parsed = await decode(response)
            samples[name].append((time.process_time() - started) / events * 1e6)
            if parsed != events:
                raise RuntimeError(f"{name} parsed {parsed} of {events} events")
    return {f"{name}_us_per_event": statistics.median(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: print the figures as JSON and as a ratio."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sse", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    result = anyio.run(measure, args.events, args.repeats)
    print(json.dumps(result))
    print(f"ours / httpx2.EventSource: {result['ours_us_per_event'] / result['httpx2_us_per_event']:.2f}x")


if __name__ == "__main__":
    main()
