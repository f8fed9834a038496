"""What a call in flight holds: its coroutine frames are most of its memory, so the package keeps them few.

A tool call waiting for its answer is a chain of coroutines, each holding a frame with its arguments and locals
(about 400 bytes each), for as long as the call lives; with thousands of calls in flight they are also what the
cyclic collector walks. The chain of the plain call (no callback that needs a task of its own) is ``call_tool``,
the runner's ``_live`` (the call's attempts, retries and input rounds inline), ``run_attempt`` and the waiter's
``wait``. Against the scripted peer, in memory, on asyncio and trio.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from types import CoroutineType
from typing import Any

import anyio
import pytest

import mcp_client
from mcp_client import Client, Event, RequestSent, TimeoutPolicy
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

PACKAGE = Path(mcp_client.__file__).parent


def package_frames(coroutine: Coroutine[Any, Any, Any]) -> list[str]:
    """The names of the package's coroutines in the await chain that starts at ``coroutine``, outermost first."""
    names: list[str] = []
    current: object = coroutine
    while isinstance(current, CoroutineType):
        frame = current.cr_frame
        if frame is not None and Path(frame.f_code.co_filename).is_relative_to(PACKAGE):
            names.append(frame.f_code.co_name)
        current = current.cr_await
    return names


async def test_a_plain_call_in_flight_is_four_frames_of_the_package(
    connect: Callable[..., Client], events: list[Event]
) -> None:
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=30, maximum=60)) as client:
        call = client.call_tool("slow", {"seconds": 30})
        async with anyio.create_task_group() as group:
            group.start_soon(_await, call)
            with anyio.fail_after(10):
                while not any(isinstance(event, RequestSent) and event.target == "slow" for event in events):
                    await anyio.sleep(0.001)
            held = package_frames(call)
            group.cancel_scope.cancel()
    assert held == ["call_tool", "_live", "run_attempt", "wait"]


async def _await(coroutine: Coroutine[Any, Any, Any]) -> None:
    await coroutine
