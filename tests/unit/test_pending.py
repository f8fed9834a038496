"""The one drain loop (``mcp_client._pending.Pending``): the session's background cancels and the task driver's
cancels and task phases all close by it."""

from __future__ import annotations

import anyio
import pytest

from mcp_client.session.pending import Pending

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]


async def test_the_wait_ends_when_the_last_piece_of_work_ends() -> None:
    pending = Pending()
    pending.add()
    pending.add()

    async def finish_later() -> None:
        await anyio.sleep(1)
        pending.done()
        await anyio.sleep(1)
        pending.done()

    async with anyio.create_task_group() as group:
        group.start_soon(finish_later)
        started = anyio.current_time()
        await pending.drained(10)
        assert anyio.current_time() - started == pytest.approx(2)
    assert len(pending) == 0


async def test_the_wait_is_bounded_and_free_when_nothing_is_pending() -> None:
    pending = Pending()
    started = anyio.current_time()
    await pending.drained(5)
    assert anyio.current_time() == started
    pending.add()
    await pending.drained(5)
    assert anyio.current_time() - started == pytest.approx(5)
    assert len(pending) == 1
