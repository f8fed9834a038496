"""PipeWriter: the server's stdin as an asyncio pipe transport, written without a loop turn per write."""

from __future__ import annotations

import asyncio
import os

import anyio
import anyio.lowlevel
import anyio.streams.stapled
import pytest

from mcp_client.transports.stdio._loop_pipes import CORK_LIMIT, PipeWriter, _WriterProtocol
from mcp_client.transports.stream import LineConnection

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the loop's own pipes exist on asyncio only


async def open_writer() -> tuple[PipeWriter, int]:
    read_fd, write_fd = os.pipe()
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(lambda: _WriterProtocol(loop), os.fdopen(write_fd, "wb", 0))
    return PipeWriter(transport, protocol), read_fd


async def test_try_send_writes_at_once_until_the_buffer_is_full_then_declines() -> None:
    writer, read_fd = await open_writer()
    try:
        assert writer.try_send(b"hello\n")
        assert os.read(read_fd, 100) == b"hello\n"
        chunk = b"x" * 65536
        sent = 0
        while writer.try_send(chunk):  # the kernel pipe fills, then the transport's buffer, then it pauses
            sent += 1
            assert sent < 1000, "the writer never reported a full buffer"
        assert not writer.try_send(b"more\n")  # declined: nothing written, the caller takes the waiting path
        finished = anyio.Event()

        async def send_when_room() -> None:
            await writer.send(b"waits\n")
            finished.set()

        os.set_blocking(read_fd, False)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send_when_room)
                received = b""
                while not finished.is_set() or not received.endswith(b"waits\n"):
                    try:
                        received = (received + os.read(read_fd, 1 << 20))[-16:]
                    except BlockingIOError:
                        await anyio.lowlevel.checkpoint()
        assert writer.try_send(b"room again\n")
    finally:
        writer.abort()
        os.close(read_fd)


async def test_a_write_to_a_closed_pipe_raises_broken_resource() -> None:
    writer, read_fd = await open_writer()
    os.close(read_fd)
    with pytest.raises(anyio.BrokenResourceError):
        writer.try_send(b"lost\n")
    with pytest.raises(anyio.BrokenResourceError):
        await writer.send(b"lost\n")
    writer.abort()


async def test_line_connection_takes_the_fast_path_only_with_a_stream_that_offers_it() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](10)
    plain = LineConnection(anyio.streams.stapled.StapledObjectStream(send, receive))  # type: ignore[arg-type]
    assert not plain.try_send_request({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    send.close()
    receive.close()

    writer, read_fd = await open_writer()
    try:
        fast = LineConnection(writer)
        assert fast.try_send_request({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert os.read(read_fd, 100) == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    finally:
        writer.abort()
        os.close(read_fd)


class _CountingWrites:
    """Counts the writes a pipe transport is handed (the writer's only way to the pipe)."""

    def __init__(self, writer: PipeWriter) -> None:
        self.writes: list[bytes] = []
        transport = writer._transport
        real = transport.write

        def write(data: bytes | bytearray | memoryview) -> None:
            self.writes.append(bytes(data))
            real(data)

        transport.write = write  # type: ignore[method-assign]


def _read_now(read_fd: int) -> bytes:
    os.set_blocking(read_fd, False)
    try:
        return os.read(read_fd, 1 << 16)
    except BlockingIOError:
        return b""


async def test_corked_writes_wait_for_the_end_of_the_loop_turn_and_leave_in_one_write() -> None:
    writer, read_fd = await open_writer()
    counting = _CountingWrites(writer)
    try:
        assert writer.try_send(b"one\n", corked=True)
        assert writer.try_send(b"two\n", corked=True)
        assert writer.try_send(b"three\n", corked=True)
        assert _read_now(read_fd) == b""  # held: nothing left in this turn
        await anyio.lowlevel.checkpoint()  # the loop turn ends
        assert counting.writes == [b"one\ntwo\nthree\n"]
        assert _read_now(read_fd) == b"one\ntwo\nthree\n"
    finally:
        writer.abort()
        os.close(read_fd)


async def test_a_write_that_is_not_corked_leaves_at_once_after_what_was_corked_before_it() -> None:
    writer, read_fd = await open_writer()
    counting = _CountingWrites(writer)
    try:
        assert writer.try_send(b"request 1\n", corked=True)
        assert writer.try_send(b"cancel 1\n")  # a cancellation is never held, nor put before its request
        assert _read_now(read_fd) == b"request 1\ncancel 1\n"
        await writer.send(b"notification\n")
        await anyio.lowlevel.checkpoint()  # the flush the cork queued finds nothing left to write
        assert counting.writes == [b"request 1\ncancel 1\n", b"notification\n"]
    finally:
        writer.abort()
        os.close(read_fd)


async def test_closing_the_writer_flushes_what_was_corked_and_abort_drops_it() -> None:
    writer, read_fd = await open_writer()
    assert writer.try_send(b"last\n", corked=True)
    await writer.aclose()
    assert _read_now(read_fd) == b"last\n"
    os.close(read_fd)

    writer, read_fd = await open_writer()
    counting = _CountingWrites(writer)
    assert writer.try_send(b"dropped\n", corked=True)
    writer.abort()
    await anyio.lowlevel.checkpoint()
    assert counting.writes == []
    os.close(read_fd)


async def test_a_request_is_corked_only_while_others_await_their_answers() -> None:
    writer, read_fd = await open_writer()
    try:
        connection = LineConnection(writer)
        assert connection.try_send_request({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert _read_now(read_fd) == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'  # a lone request: at once
        assert connection.try_send_request({"jsonrpc": "2.0", "id": 2, "method": "ping"}, server_busy=True)
        assert _read_now(read_fd) == b""
        await anyio.lowlevel.checkpoint()
        assert _read_now(read_fd) == b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'
    finally:
        writer.abort()
        os.close(read_fd)


async def test_corked_writes_go_out_at_once_past_the_limit_and_before_closing() -> None:
    writer, read_fd = await open_writer()
    os.set_blocking(read_fd, False)
    try:
        assert writer.try_send(b"a\n")
        assert os.read(read_fd, 10) == b"a\n"
        big = b"y" * (CORK_LIMIT // 2) + b"\n"
        assert writer.try_send(big, corked=True)
        with pytest.raises(BlockingIOError):
            os.read(read_fd, 10)
        assert writer.try_send(big, corked=True)  # past the limit: written in this turn, as far as the pipe takes it
        received = os.read(read_fd, 1 << 20)
        assert received
        while len(received) < 2 * len(big):
            try:
                received += os.read(read_fd, 1 << 20)
            except BlockingIOError:  # the pipe's capacity is one limit: the transport writes the rest when it can
                await anyio.lowlevel.checkpoint()
        assert received == big + big
        assert writer.try_send(b"last\n", corked=True)
        await writer.aclose()  # what is corked is written before the end of input
        os.set_blocking(read_fd, True)
        assert os.read(read_fd, 100) == b"last\n"
        assert os.read(read_fd, 100) == b""
    finally:
        writer.abort()
        os.close(read_fd)
