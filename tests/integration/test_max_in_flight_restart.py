"""``max_in_flight`` with a supervised server: the limit is the client's, shared by the runners of every process,
and a call that died with its process gives its slot back, so the one waiting behind it runs on the next one."""

from __future__ import annotations

import anyio
import pytest

from mcp_client import (
    Client,
    Event,
    RequestSent,
    RestartPolicy,
    ServerRestarted,
    SlotWaited,
    TimeoutPolicy,
    TransportError,
)
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of
from tests.integration.test_supervisor import RestartableMemory

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]


async def test_a_call_behind_one_that_died_runs_on_the_next_process() -> None:
    peer = ScriptedPeer(era="modern")
    restart = RestartPolicy(max_restarts=3, window=100, initial_backoff=1, max_backoff=1)
    events: list[Event] = []
    transport = RestartableMemory(peer.serve, restart=restart)
    timeout = TimeoutPolicy(idle=None, maximum=100, connect=30)
    async with Client(transport, timeout=timeout, on_event=events.append, max_in_flight=1) as client:
        limit = client._in_flight_limit
        assert limit is not None
        results: list[str] = []

        async def behind() -> None:
            results.append(text_of(await client.call_tool("echo", {"text": "next process"})))

        async with anyio.create_task_group() as group:
            group.start_soon(behind)
            with pytest.raises(TransportError):
                await client.call_tool("die", {"after": 2})
        assert results == ["next process"]
        assert (limit.in_flight, limit.waiting) == (0, 0)
    assert len([e for e in events if isinstance(e, ServerRestarted)]) == 1
    [waited] = [e for e in events if isinstance(e, SlotWaited)]
    assert waited.admitted
    assert waited.waited >= 2  # it waited behind "die", which held the slot until its process died
    sent = [e.target for e in events if isinstance(e, RequestSent) and e.method == "tools/call"]
    restarted = next(i for i, e in enumerate(events) if isinstance(e, ServerRestarted))
    assert sent == ["die", "echo"]
    assert any(isinstance(e, RequestSent) and e.target == "echo" for e in events[restarted:])
    assert peer.stats.connections == 2
