"""``max_in_flight`` against a real server: the official Python SDK's MCPServer (mcp 2.3.0) over stdio.

The server records how each call ended in the events file, so it says itself which calls reached it: a call whose
maximum passed in line never did. Real clock, wide margins.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from mcp_client import (
    Client,
    Event,
    MaxTimeout,
    RequestFinished,
    RequestSent,
    SlotWaited,
    TimeoutPolicy,
    stdio,
)
from tests.interop.conftest import EVENTS_ENV


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(
    command: list[str], events_file: Path, events: list[Event], on_event: Callable[[Event], None] | None = None
) -> Client:
    transport = stdio(command[0], command[1:], env={EVENTS_ENV: str(events_file)})
    policy = TimeoutPolicy(idle=20, maximum=60)

    def seen(event: Event) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    # (A long probe: on a loaded machine a late discover answer would send this modern server an initialize.)
    return Client(transport, timeout=policy, probe_timeout=20, on_event=seen, max_in_flight=2)


@pytest.mark.anyio
async def test_no_more_than_the_limit_is_in_flight_and_every_call_runs(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    async with _client(python_sdk_server_command, events_file, events) as client, anyio.create_task_group() as group:
        for n in range(6):
            group.start_soon(client.call_tool, "silent", {"seconds": 0.2, "tag": f"c{n}"})
    in_flight = most = 0
    for event in events:
        if isinstance(event, RequestSent) and event.method == "tools/call":
            in_flight += 1
            most = max(most, in_flight)
        elif isinstance(event, RequestFinished) and event.method == "tools/call":
            in_flight -= 1
    assert most == 2
    assert len([e for e in events if isinstance(e, SlotWaited) and e.admitted]) == 4
    assert sorted(events_file.read_text().splitlines()) == [f"c{n} completed" for n in range(6)]


@pytest.mark.anyio
async def test_a_call_whose_maximum_passes_in_line_never_reaches_the_server(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    holders_sent = anyio.Event()

    def count_holders(event: Event) -> None:
        sent = [e for e in events if isinstance(e, RequestSent) and e.method == "tools/call"]
        if len(sent) == 2:
            holders_sent.set()

    async with (
        _client(python_sdk_server_command, events_file, events, count_holders) as client,
        anyio.create_task_group() as group,
    ):
        for n in range(2):
            group.start_soon(client.call_tool, "silent", {"seconds": 2, "tag": f"holder{n}"})
        with anyio.fail_after(10):
            await holders_sent.wait()  # both slots are taken
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("silent", {"seconds": 0, "tag": "waiter"}, timeout=0.5)
    assert caught.value.request_ids == ()
    assert "did not run" in caught.value.for_model
    assert sorted(events_file.read_text().splitlines()) == ["holder0 completed", "holder1 completed"]
