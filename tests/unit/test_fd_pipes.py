"""FdWriter: a write cut by a cancellation finishes its line before the next one; one cut before its first byte
is dropped whole."""

from __future__ import annotations

import os

import anyio
import pytest

from mcp_client.transports.stdio._fd_pipes import FdPipe, FdWriter

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    data = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            return bytes(data)
        if not chunk:
            return bytes(data)
        data += chunk


async def test_a_cut_line_is_finished_before_the_next_and_nothing_is_glued() -> None:
    pipe = FdPipe.open(child_reads=True)
    server_end = pipe.child_end
    assert server_end is not None
    writer = FdWriter(pipe)
    big = b"a" * 1_000_000 + b"\n"  # far more than a pipe holds
    try:
        with anyio.move_on_after(0.1):
            await writer.send(big)
        assert writer.mid_line
        assert not writer.try_send(b"small\n")  # would glue: declined
        received = bytearray(drain(server_end))
        assert 0 < len(received) < len(big)
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.send, b"next\n")
            while not received.endswith(b"next\n"):
                await anyio.wait_readable(server_end)
                received += drain(server_end)
        assert bytes(received) == big + b"next\n"
        assert writer.try_send(b"small\n")
        assert drain(server_end) == b"small\n"
    finally:
        pipe.close()


async def test_a_write_cancelled_before_its_first_byte_is_dropped() -> None:
    pipe = FdPipe.open(child_reads=True)
    server_end = pipe.child_end
    assert server_end is not None
    writer = FdWriter(pipe)
    try:
        while writer.try_send(b"x" * 512):  # fill the pipe
            pass
        with anyio.move_on_after(0.05):
            await writer.send(b"never\n")
        assert not writer.mid_line
        filled = drain(server_end)
        assert set(filled) == {ord("x")}
        await writer.send(b"after\n")
        assert drain(server_end) == b"after\n"
    finally:
        pipe.close()


async def test_a_closed_pipe_is_a_broken_resource() -> None:
    pipe = FdPipe.open(child_reads=True)
    pipe.spawned()  # the only read end is gone: writing is EPIPE
    writer = FdWriter(pipe)
    with pytest.raises(anyio.BrokenResourceError):
        await writer.send(b"hello\n")
    await writer.aclose()
    with pytest.raises(anyio.ClosedResourceError):
        await writer.send(b"hello\n")
