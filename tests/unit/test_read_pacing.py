"""Reading a server's pipe in bursts: after a read of notifications alone, the next read waits ``BURST_PAUSE`` (what
the server writes meanwhile comes in one piece) while such pauses pay; after anything else (an answer) it follows at
once, and after a pause that found at most one notification, single notifications are read at once for
``PROBE_AFTER`` reads."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import anyio
import pytest

from mcp_client.transports.stdio._fd_pipes import FdPipe, read_fd
from mcp_client.transports.stdio._loop_pipes import _SplitterProtocol
from mcp_client.transports.stream import BURST_PAUSE, PROBE_AFTER, LineSplitter

pytestmark = pytest.mark.anyio

PROGRESS = json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1}}) + "\n"
ANSWER = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}) + "\n"


class _Handler:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def on_message(self, message: Any, stream: object = None) -> None:
        self.messages.append(message)

    def on_invalid(self, detail: str, raw: bytes, request_id: object) -> None: ...
    def on_request_failed(self, request_id: object, error: BaseException) -> None: ...
    def on_closed(self, error: BaseException | None) -> None: ...


def test_the_splitter_says_whether_a_chunk_held_several_notifications_alone() -> None:
    splitter = LineSplitter(_Handler(), max_message_size=1 << 20)  # type: ignore[arg-type]
    splitter.feed((PROGRESS * 3).encode())
    assert splitter.streaming
    splitter.feed((PROGRESS * 2 + ANSWER).encode())
    assert not splitter.streaming  # an answer in it: read on at once
    splitter.feed((PROGRESS + PROGRESS[:10]).encode())
    assert splitter.streaming  # notifications alone, and the last pause paid: try one
    splitter.feed((PROGRESS[10:] + PROGRESS).encode())
    assert splitter.streaming  # two were waiting after it


def test_after_a_pause_that_found_one_notification_single_ones_are_read_at_once_for_a_while() -> None:
    splitter = LineSplitter(_Handler(), max_message_size=1 << 20)  # type: ignore[arg-type]
    splitter.feed(PROGRESS.encode())
    assert splitter.streaming  # the first single notification tries a pause
    pattern = []
    for _ in range(2 * (PROBE_AFTER + 1)):
        splitter.feed(PROGRESS.encode())  # the server is no faster than the reader: one per read
        pattern.append(splitter.streaming)
    # the pause found one: PROBE_AFTER reads at once (this one included), then a pause is tried again
    assert pattern == ([False] * PROBE_AFTER + [True]) * 2
    splitter.feed((PROGRESS * 2).encode())  # ... and this one found two: the server sped up
    assert splitter.streaming
    splitter.feed((PROGRESS * 3).encode())
    assert splitter.streaming  # several again
    splitter.feed(PROGRESS.encode())
    assert not splitter.streaming  # the pause found only one: single ones are read at once again


class _ReadTransport(asyncio.ReadTransport):
    def __init__(self) -> None:
        super().__init__()
        self.reading = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_closing(self) -> bool:
        return False


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_loop_pipe_pauses_after_notifications_alone_and_never_after_an_answer() -> None:
    loop = asyncio.get_running_loop()
    handler = _Handler()
    splitter = LineSplitter(handler, max_message_size=1 << 20)  # type: ignore[arg-type]
    protocol = _SplitterProtocol(splitter, loop.create_future(), handler)  # type: ignore[arg-type]
    transport = _ReadTransport()
    protocol.connection_made(transport)

    protocol.data_received(ANSWER.encode())
    assert transport.reading
    assert protocol._resuming is None

    protocol.data_received(PROGRESS.encode())
    assert not transport.reading  # notifications alone: a pause is tried
    assert protocol._resuming is not None
    protocol._resume()
    protocol.data_received(PROGRESS.encode())
    assert transport.reading  # the pause found one more: the next reads follow at once
    assert protocol._resuming is None
    protocol.data_received((PROGRESS * 2).encode())
    assert not transport.reading
    resuming = protocol._resuming
    assert resuming is not None
    assert resuming.when() - loop.time() == pytest.approx(BURST_PAUSE, abs=0.05)
    protocol._resume()
    assert transport.reading
    assert protocol._resuming is None

    protocol.data_received((PROGRESS * 2).encode())
    assert protocol._resuming is not None
    protocol.connection_lost(None)  # the pipe ends while paused: the resume is dropped
    assert protocol._resuming is None


@pytest.mark.parametrize("pause", [BURST_PAUSE, None])
@pytest.mark.fake_clock
async def test_the_fd_reader_waits_the_pause_it_is_given_before_reading_again(pause: float | None) -> None:
    pipe = FdPipe.open(child_reads=False)
    assert pipe.child_end is not None
    child_end = pipe.child_end
    reads: list[tuple[bytes, float]] = []

    def on_chunk(chunk: bytes) -> float | None:
        reads.append((chunk, anyio.current_time()))
        if len(reads) == 1:
            os.write(child_end, b"second\n")  # already there when the reader looks again
            return pause
        pipe.close()
        return None

    os.write(child_end, b"first\n")
    with anyio.fail_after(5):
        await read_fd(pipe, on_chunk)
    assert [chunk for chunk, _ in reads] == [b"first\n", b"second\n"]
    waited = reads[1][1] - reads[0][1]
    if pause is None:
        assert waited == 0
    else:
        assert waited >= pause
