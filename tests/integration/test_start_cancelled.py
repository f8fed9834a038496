"""A client's start cancelled while it waits (a caller's deadline passing during ``initialize``): it ends with the
caller's cancellation, on either loop, and that cancellation's chain of contexts ends. On asyncio it once came back
as its own context (CPython's exit stack, closed while the cancellation was handled), and anyio's task group spun
forever, at full CPU, on the task that ended with it: the Temporal worker's shutdown after a start that a call's
maximum cut short. Each kind of transport is started and cancelled; the guard only stops a hang."""

from __future__ import annotations

import sys

import anyio
import pytest

from mcp_client import Client, TimeoutPolicy, memory, stdio
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

NEVER_ANSWERS = "import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n"


def _client(kind: str) -> Client:
    policy = TimeoutPolicy(idle=None, maximum=100, connect=30)
    if kind == "memory":
        peer = ScriptedPeer(era="legacy")
        peer.method_delays["initialize"] = 1000
        return Client(memory(peer.serve), timeout=policy)
    return Client(stdio(sys.executable, ["-c", NEVER_ANSWERS]), timeout=policy)


def _chain_ends(error: BaseException) -> bool:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None:
        if any(current is link for link in chain):
            return False
        chain.append(current)
        current = current.__context__
    return True


@pytest.mark.parametrize("kind", ["memory", "stdio"])
async def test_a_start_cancelled_while_initialize_waits_ends_with_a_cancellation_whose_chain_ends(kind: str) -> None:
    caught: list[BaseException] = []
    client = _client(kind)
    # (Not in a task of a task group: with the defect back, that group would spin instead of failing this test.)
    with anyio.fail_after(20), anyio.move_on_after(0.5) as waited:
        try:
            async with client:
                pass
        except BaseException as exc:
            caught.append(exc)
            raise
    assert waited.cancelled_caught
    assert len(caught) == 1
    assert isinstance(caught[0], anyio.get_cancelled_exc_class())
    assert _chain_ends(caught[0])
