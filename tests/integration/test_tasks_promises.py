"""The promises of a plain call hold for a task-backed one: whether it may have run is told truthfully, closing
the client ends the calls awaited elsewhere with a typed error and cancels their tasks, input is asked for once.

Against the scripted peer in both eras, on trio's MockClock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcp_client import (
    Call,
    Client,
    Event,
    MaxTimeout,
    RequestCancelled,
    TaskCancelSent,
    TimeoutPolicy,
)
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]
ERAS = [("modern", "2026-07-28"), ("legacy", "2025-11-25")]


async def task_made(call: Call[Any]) -> str:
    """Wait (bounded) until the server made the call's task; its id."""
    with anyio.fail_after(5):
        while call.task_id is None:
            await anyio.sleep(0.01)
    return call.task_id


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_maximum_between_polls_tells_the_model_the_task_may_have_run(
    connect: Connect, era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("task_work", {"seconds": 60}, timeout=TimeoutPolicy(idle=5, maximum=2.5))
    error = caught.value
    assert may_have_run(error) is Ran.MAYBE
    assert error.may_have_run is True
    assert "did not run" not in error.for_model
    assert "check its effects before calling it again" in error.for_model
    assert error.tool == "task_work"


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_cancelled_task_call_tells_the_model_it_may_have_run(connect: Connect, era: str, version: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client, client.tool_call("task_work", {"seconds": 60}) as call:
        await task_made(call)
        await anyio.sleep(1)
        call.cancel("user pressed stop")
        with pytest.raises(RequestCancelled) as caught:
            await call.result()
    assert may_have_run(caught.value) is Ran.MAYBE
    assert "did not run" not in caught.value.for_model


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_closing_the_client_ends_a_task_call_awaited_elsewhere_and_cancels_its_task(
    connect: Connect, events: list[Event], era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    caught: list[BaseException] = []
    async with anyio.create_task_group() as task_group, connect(peer) as client:

        async def caller() -> None:
            try:
                await client.call_tool("task_work", {"seconds": 60})
            except Exception as exc:  # what the caller sees, whatever it is
                caught.append(exc)

        task_group.start_soon(caller)
        await anyio.sleep(1)
        started = anyio.current_time()
        await client.aclose()  # while the caller, in a task of its own, waits for the task
        closing = anyio.current_time() - started
    (error,) = caught
    assert isinstance(error, RequestCancelled)
    assert may_have_run(error) is Ran.MAYBE
    assert closing < 1  # bounded by the cancel timeout, and here the peer answers at once
    task = peer.tasks.tasks["task-1"]
    assert (task.cancel_requests, task.status) == (1, "cancelled")
    assert [(e.task_id, e.acknowledged) for e in events if isinstance(e, TaskCancelSent)] == [("task-1", True)]
