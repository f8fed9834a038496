"""Interop over stdio with the official Python SDK's MCPServer (mcp 2.3.0), which speaks 2026-07-28.

Real process, real clock: the margins are wide (progress every 0.1 s against a 1 s idle timeout) so a loaded
machine does not flip the outcome. Cancellation is confirmed by the server itself: its tool's ``finally`` writes
"<tag> cancelled" to the events file.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcp_client import CancelMethod, CancelSent, Client, Event, IdleTimeout, IdleTimerReset, TimeoutPolicy, stdio
from tests.interop.conftest import EVENTS_ENV


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(command: list[str], events_file: Path, events: list[Event], policy: TimeoutPolicy) -> Client:
    transport = stdio(command[0], command[1:], env={EVENTS_ENV: str(events_file)})
    return Client(transport, timeout=policy, on_event=events.append)


async def _wait_for_line(events_file: Path, line: str, within: float = 10.0) -> list[str]:
    with anyio.move_on_after(within):
        while line not in events_file.read_text().splitlines():
            await anyio.sleep(0.05)
    return events_file.read_text().splitlines()


@pytest.mark.anyio
async def test_modern_session_lists_and_calls_tools(python_sdk_server_command: list[str], events_file: Path) -> None:
    """The probe settles on 2026-07-28 with a real modern server; tools list and call."""
    events: list[Event] = []
    async with _client(python_sdk_server_command, events_file, events, TimeoutPolicy(idle=20, maximum=60)) as client:
        assert client.protocol_version == "2026-07-28"
        names = {tool.name for tool in await client.list_tools()}
        assert {"echo", "slow_progress", "silent"} <= names
        result = await client.call_tool("echo", {"text": "hello"})
        assert not result.is_error
        assert any(getattr(block, "text", None) == "hello" for block in result.content)


@pytest.mark.anyio
async def test_progress_resets_idle_so_a_long_call_succeeds(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    """A 2.5 s call under a 1 s idle timeout succeeds only because each progress notification resets idle."""
    events: list[Event] = []
    seen: list[float] = []
    policy = TimeoutPolicy(idle=1.0, maximum=30)
    async with _client(python_sdk_server_command, events_file, events, policy) as client:
        result = await client.call_tool(
            "slow_progress",
            {"seconds": 2.5, "interval": 0.1, "tag": "long"},
            on_progress=lambda p: seen.append(p.progress),
        )
    assert not result.is_error
    assert sum(isinstance(e, IdleTimerReset) for e in events) >= 10
    assert seen == sorted(seen)
    assert len(seen) >= 2
    assert "long completed" in events_file.read_text().splitlines()


@pytest.mark.anyio
async def test_idle_timeout_cancels_the_tool_on_the_server(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    """A silent call hits IdleTimeout; notifications/cancelled reaches the server and its tool's finally runs."""
    events: list[Event] = []
    async with _client(python_sdk_server_command, events_file, events, TimeoutPolicy(idle=0.5, maximum=30)) as client:
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", {"seconds": 30, "tag": "quiet"})
        lines = await _wait_for_line(events_file, "quiet cancelled")
        # The session is still usable afterwards.
        assert not (await client.call_tool("echo", {"text": "still here"})).is_error
    assert "quiet cancelled" in lines
    assert caught.value.request_ids
    cancels = [e for e in events if isinstance(e, CancelSent)]
    assert [c.request_id for c in cancels] == list(caught.value.request_ids)
    assert cancels[0].how is CancelMethod.NOTIFICATION


@pytest.mark.anyio
async def test_caller_cancellation_reaches_the_server(python_sdk_server_command: list[str], events_file: Path) -> None:
    """Cancelling the awaiting task (an anyio scope) cancels the tool on the server too."""
    events: list[Event] = []
    async with _client(python_sdk_server_command, events_file, events, TimeoutPolicy(idle=20, maximum=60)) as client:
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("silent", {"seconds": 30, "tag": "scoped"})
        assert scope.cancelled_caught
        lines = await _wait_for_line(events_file, "scoped cancelled")
    assert "scoped cancelled" in lines
