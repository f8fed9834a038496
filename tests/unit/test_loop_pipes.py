"""PipeWriter: the server's stdin as an asyncio pipe transport, written without a loop turn per write."""

from __future__ import annotations

import asyncio
import os

import anyio
import anyio.lowlevel
import anyio.streams.stapled
import pytest

from mcp_client.transports._loop_pipes import CORK_LIMIT, PipeWriter, _WriterProtocol
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


async def test_writes_of_one_loop_turn_after_the_first_go_out_together_at_its_end() -> None:
    writer, read_fd = await open_writer()
    os.set_blocking(read_fd, False)
    try:
        assert writer.try_send(b"first\n")
        assert os.read(read_fd, 100) == b"first\n"  # a lone write is not delayed
        assert writer.try_send(b"second\n")
        await writer.send(b"third\n")
        with pytest.raises(BlockingIOError):
            os.read(read_fd, 100)  # corked until the turn ends
        await anyio.lowlevel.checkpoint()
        assert os.read(read_fd, 100) == b"second\nthird\n"  # one write
        assert writer.try_send(b"next turn\n")
        assert os.read(read_fd, 100) == b"next turn\n"  # a new turn: its first write goes out at once again
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
        assert writer.try_send(big)
        with pytest.raises(BlockingIOError):
            os.read(read_fd, 10)
        assert writer.try_send(big)  # past the limit: written in this turn, as far as the pipe takes it
        received = os.read(read_fd, 1 << 20)
        assert received
        while len(received) < 2 * len(big):
            try:
                received += os.read(read_fd, 1 << 20)
            except BlockingIOError:  # the pipe's capacity is one limit: the transport writes the rest when it can
                await anyio.lowlevel.checkpoint()
        assert received == big + big
        assert writer.try_send(b"last\n")
        await writer.aclose()  # what is corked is written before the end of input
        os.set_blocking(read_fd, True)
        assert os.read(read_fd, 100) == b"last\n"
        assert os.read(read_fd, 100) == b""
    finally:
        writer.abort()
        os.close(read_fd)
