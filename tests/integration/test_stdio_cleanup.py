"""A closed stdio client leaves nothing behind while the loop still runs: no pipe, no subprocess transport.

Leaving it to the garbage collector is not enough: on trio the process's stdout and stderr streams held two pipe
fds each until a collection ran, and on asyncio a subprocess transport whose stderr pipe had not seen its end yet
was closed by its ``__del__`` after the loop was gone ("RuntimeError: Event loop is closed"), after an idle
timeout, a maximum or Ctrl-C against a server that keeps running once its stdin closes.
"""

from __future__ import annotations

import asyncio.base_subprocess
import gc
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from mcp_client import Client, Event, MaxTimeout, ServerStderr, TimeoutPolicy
from mcp_client.transports.stdio._transport import ShutdownTimings, StdioTransport
from tests.integration.helpers import text_of
from tests.integration.test_stdio_process import MINI_SERVER

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=None, maximum=30, connect=30)
QUICK = ShutdownTimings(after_close_stdin=0.2, after_sigterm=2, after_sigkill=2)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@contextmanager
def no_garbage_collection() -> Iterator[None]:
    """What a closed client leaves behind must be gone by reference counting alone."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def mini(*flags: str) -> StdioTransport:
    return StdioTransport(sys.executable, ("-c", MINI_SERVER, *flags), shutdown=QUICK)


@contextmanager
def no_unclosed_transport() -> Iterator[None]:
    """Fail if a subprocess transport of the loop is still open once the client returned: its ``__del__`` would
    close it later, and after the loop is closed that raises "Event loop is closed"."""
    yield
    gc.collect()
    unclosed = [
        repr(thing)
        for thing in gc.get_objects()
        if isinstance(thing, asyncio.base_subprocess.BaseSubprocessTransport) and not thing.is_closing()
    ]
    assert unclosed == []


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds through /proc (Linux)")
async def test_ten_closed_clients_leave_no_fd_open() -> None:
    async with Client(mini(), timeout=POLICY):
        pass  # the first start may open what lives as long as the loop (a wake-up pipe, a child watcher)
    with no_garbage_collection():
        before = open_fds()
        for _ in range(10):
            async with Client(mini(), timeout=POLICY) as client:
                await client.call_tool("env", {"name": "HOME"})
        after = open_fds()
    assert after == before, f"{after - before} fds left open by 10 closed clients"


@pytest.mark.parametrize("flags", [("--stop-reading",), ("--stop-reading", "--stubborn-child")])
async def test_a_server_that_outlives_its_stdin_leaves_no_transport_open(flags: tuple[str, ...]) -> None:
    """After a maximum, against a server that keeps running once its stdin closes (and has a child of its own that
    holds its stderr and outlives SIGTERM): shut down by the ladder, every transport closed before return."""
    with no_unclosed_transport():
        async with Client(mini(*flags), timeout=POLICY) as client:
            with pytest.raises(MaxTimeout):
                await client.call_tool("env", {"name": "HOME"}, timeout=TimeoutPolicy(idle=None, maximum=0.2))


async def test_a_cancelled_client_closes_its_process_before_the_loop_ends() -> None:
    """Ctrl-C, as the host sees it: the task running the client is cancelled mid-call."""
    with no_unclosed_transport(), anyio.move_on_after(0.5):
        async with Client(mini("--stubborn-child", "--stop-reading"), timeout=POLICY) as client:
            await client.call_tool("env", {"name": "X" * 4_000_000})


async def test_a_write_cut_by_the_maximum_is_finished_before_the_next_message() -> None:
    """The server reads nothing for two seconds: a 4 MB request fills the pipe and its maximum cuts the write half
    way. The rest of that line goes out before the next request, which is answered: never glued to a half line."""
    events: list[Event] = []
    async with Client(mini("--pause-reading"), timeout=POLICY, on_event=events.append) as client:
        with pytest.raises(MaxTimeout):
            await client.call_tool("env", {"name": "X" * 4_000_000}, timeout=TimeoutPolicy(idle=None, maximum=0.3))
        with anyio.fail_after(20):
            result = await client.call_tool("env", {"name": "HOME"}, timeout=TimeoutPolicy(idle=None, maximum=15))
    assert json.loads(text_of(result))["value"] == os.environ.get("HOME")
    assert [e for e in events if isinstance(e, ServerStderr)] == []  # the server read two whole lines, no error
