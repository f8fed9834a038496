"""The caller's own deadline on a real asyncio clock, where our timers run a little early and anyio's a little late.

The session sets its timers ``timer_lead`` early and waits out the last stretch; the caller's cancel scope fires
through its own loop timer, which the selector may deliver up to a millisecond after its time. The call must end
as the caller's cancellation in every case, never as a ``MaxTimeout`` of the policy.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from mcp_client import Client, TimeoutPolicy
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


async def test_a_callers_deadline_ends_the_call_as_the_callers_cancellation(connect: Callable[..., Client]) -> None:
    peer = ScriptedPeer(era="modern")
    async with connect(peer, timeout=TimeoutPolicy(idle=20, maximum=60)) as client:
        for _ in range(30):
            with anyio.move_on_after(0.01) as scope:
                await client.call_tool("silent", {"seconds": 30})
            assert scope.cancelled_caught
