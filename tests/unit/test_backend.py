"""The async backend seam: one look at the running loop gives each backend's fast paths, on the loop's own clock."""

from __future__ import annotations

import sys

import anyio
import pytest

from mcp_client._backend import ASYNCIO_TIMER_LEAD, current_backend
from mcp_client._waiter import FutureWaiter, TrioWaiter

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


async def test_the_backend_is_the_running_loops_own(anyio_backend: str) -> None:
    backend = current_backend()
    assert backend.name == anyio_backend
    assert abs(backend.now() - anyio.current_time()) < 1.0  # the same clock
    waiter = backend.new_waiter()
    if backend.name == "asyncio":
        assert isinstance(waiter, FutureWaiter)
        assert backend.timer_lead == ASYNCIO_TIMER_LEAD
        assert backend.call_soon is not None
        assert backend.drives_pipes is (sys.platform != "win32")
    else:
        assert backend.name == "trio"
        assert isinstance(waiter, TrioWaiter)
        assert backend.timer_lead == 0.0
        assert backend.call_soon is None
        assert backend.drives_pipes is False


async def test_a_waiter_from_the_backend_wakes_when_set() -> None:
    waiter = current_backend().new_waiter()
    waiter.set()
    with anyio.fail_after(1):
        await waiter.wait()  # set before the wait: returns at once


def test_outside_a_loop_it_is_trio_that_is_looked_for() -> None:
    # No asyncio loop runs here, so the seam takes the caller for trio (trio.current_time then needs trio's loop).
    backend = current_backend()
    assert backend.name == "trio"
    assert backend.call_soon is None
