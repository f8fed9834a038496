"""Interop over stdio with ``@modelcontextprotocol/server-everything``, which speaks 2025-11-25.

It answers ``server/discover`` with -32601, so the client falls back to ``initialize``. Its long-running tool does
not stop when cancelled: it keeps sending progress for the cancelled token but never sends the response. So a
cancellation is confirmed by the absence of the response after the tool's duration, while its stale progress must
arrive as ``LateMessage`` events and nothing else.
"""

from __future__ import annotations

import anyio
import pytest

from mcp_client import CancelSent, Client, Event, IdleTimerReset, LateMessage, MaxTimeout, TimeoutPolicy, stdio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(command: list[str], events: list[Event], policy: TimeoutPolicy) -> Client:
    return Client(stdio(command[0], command[1:]), timeout=policy, on_event=events.append)


@pytest.mark.anyio
async def test_falls_back_to_initialize_and_calls_echo(server_everything_command: list[str]) -> None:
    """discover is refused, the client falls back to the 2025-11-25 handshake, and tools work."""
    events: list[Event] = []
    async with _client(server_everything_command, events, TimeoutPolicy(idle=20, maximum=60)) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert "echo" in tools
        result = await client.call_tool("echo", {"message": "hi"})
        assert not result.is_error
        assert "hi" in " ".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.anyio
async def test_progress_resets_idle_so_a_long_operation_succeeds(server_everything_command: list[str]) -> None:
    """A 3 s operation with progress every 0.2 s succeeds under a 1 s idle timeout."""
    events: list[Event] = []
    seen: list[float] = []
    async with _client(server_everything_command, events, TimeoutPolicy(idle=1.0, maximum=30)) as client:
        result = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 3, "steps": 15},
            on_progress=lambda p: seen.append(p.progress),
        )
    assert not result.is_error
    assert sum(isinstance(e, IdleTimerReset) for e in events) >= 10
    assert seen == sorted(seen)
    assert seen[-1] == 15


@pytest.mark.anyio
async def test_timed_out_call_is_cancelled_and_its_stale_progress_is_silent(
    server_everything_command: list[str],
) -> None:
    """MaxTimeout sends notifications/cancelled; the server never answers that id; its late progress is dropped."""
    events: list[Event] = []
    async with _client(server_everything_command, events, TimeoutPolicy(idle=5, maximum=1.2)) as client:
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("trigger-long-running-operation", {"duration": 2.5, "steps": 10})
        (request_id,) = caught.value.request_ids
        await anyio.sleep(2.5)  # past the operation's own end: an uncancelled call would have been answered by now
        assert not (await client.call_tool("echo", {"message": "after"})).is_error
    assert [e.request_id for e in events if isinstance(e, CancelSent)] == [request_id]
    late = [e for e in events if isinstance(e, LateMessage) and e.request_id == request_id]
    assert late
    assert all(e.kind == "progress" for e in late)
