"""A supervised stdio server comes back after a crash: mcp 2.3.0's server and server-everything, killed with
SIGKILL under ``stdio(..., restart=RestartPolicy(...))``, on asyncio and trio, real processes and clocks.

What a host must see: the call in flight at the crash fails with ``TransportError(written=True)`` (it may have
run, and the tool is not idempotent, so it is not sent again); a ``ServerRestarted`` event names the new process;
the same client object serves calls on it; an idempotent call in flight at the crash is sent again and succeeds
within its one maximum; past the cap of restarts per window, calls fail at once.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import mcp_types
import pytest

from mcp_client import (
    Client,
    ClientGroup,
    Event,
    RestartPolicy,
    RetryPolicy,
    RetryScheduled,
    ServerRestarted,
    TaskCreated,
    TimeoutPolicy,
    TransportError,
    stdio,
)
from tests.interop.conftest import EVENTS_ENV

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=None, maximum=30, connect=30)
QUICK = RestartPolicy(max_restarts=5, window=60, initial_backoff=0.05, max_backoff=0.2)


def text_of(result: mcp_types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


async def wait_for(predicate: Callable[[], object], seconds: float = 20) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.02)  # polling real processes: no clock to fake


def kill(client: Client) -> int:
    pid = client.server_process_id
    assert pid is not None
    os.killpg(pid, signal.SIGKILL)  # the server and anything it started
    return pid


def restarts(events: list[Event]) -> list[ServerRestarted]:
    return [e for e in events if isinstance(e, ServerRestarted)]


def supervised(command: list[str], events_file: Path, restart: RestartPolicy = QUICK) -> Callable[..., Client]:
    def build(events: list[Event]) -> Client:
        transport = stdio(command[0], command[1:], env={EVENTS_ENV: str(events_file)}, restart=restart)
        return Client(transport, timeout=POLICY, on_event=events.append)

    return build


async def test_the_python_sdk_server_is_back_and_serving_after_a_kill(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    async with supervised(python_sdk_server_command, events_file)(events) as client:
        assert text_of(await client.call_tool("echo", {"text": "before"})) == "before"
        failure: list[TransportError] = []

        async def in_flight() -> None:
            with pytest.raises(TransportError) as caught:
                await client.call_tool("silent", {"seconds": 20, "tag": "crashed"})
            failure.append(caught.value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(in_flight)
            await wait_for(lambda: client.session.in_flight == 1)
            first_pid = kill(client)
        assert failure[0].written is True  # it may have run: not sent again (the tool is not idempotent)

        await wait_for(lambda: restarts(events))
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
        assert client.server_process_id not in (None, first_pid)
        assert client.protocol_version == "2026-07-28"  # renegotiated with the new process

    (restarted,) = restarts(events)
    assert restarted.restarts == 1
    assert restarted.previous_process_id == first_pid
    assert restarted.process_id == client.server_process_id
    assert isinstance(restarted.reason, TransportError)
    assert "crashed" not in events_file.read_text()  # the killed call never finished, and never ran again


async def test_an_idempotent_call_in_flight_at_the_crash_is_sent_to_the_new_process(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    safe = RetryPolicy(attempts=3, idempotent=True)
    async with supervised(python_sdk_server_command, events_file)(events) as client:
        async with anyio.create_task_group() as tg:
            results: list[str] = []

            async def in_flight() -> None:
                result = await client.call_tool("silent", {"seconds": 1, "tag": "safe"}, retry=safe)
                results.append(text_of(result))

            tg.start_soon(in_flight)
            await wait_for(lambda: client.session.in_flight == 1)
            kill(client)
        assert results == ["done"]
    assert len(restarts(events)) == 1
    assert [e for e in events if isinstance(e, RetryScheduled)]
    assert events_file.read_text().splitlines().count("safe completed") == 1  # the first run was killed


async def test_a_call_made_while_the_server_is_down_waits_for_it(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    """Never written (the process was gone): safe to send to the next one, whatever the tool."""
    events: list[Event] = []
    slow_restart = RestartPolicy(initial_backoff=1.0, max_backoff=1.0)
    async with supervised(python_sdk_server_command, events_file, slow_restart)(events) as client:
        kill(client)
        await wait_for(lambda: client.session.closed_error is not None)
        assert text_of(await client.call_tool("echo", {"text": "waited"})) == "waited"
    assert len(restarts(events)) == 1


async def test_past_the_cap_the_server_is_left_down_and_calls_fail_at_once(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    capped = RestartPolicy(max_restarts=1, window=60, initial_backoff=0.05, max_backoff=0.05)
    async with supervised(python_sdk_server_command, events_file, capped)(events) as client:
        kill(client)
        await wait_for(lambda: restarts(events))
        kill(client)
        await wait_for(lambda: client.session.closed_error is not None)
        with anyio.fail_after(5), pytest.raises(TransportError) as caught:
            await client.call_tool("echo", {"text": "never"})
    assert caught.value.written is False
    assert len(restarts(events)) == 1


async def test_server_everything_is_back_after_a_kill(server_everything_command: list[str], tmp_path: Path) -> None:
    events: list[Event] = []
    async with supervised(server_everything_command, tmp_path / "unused")(events) as client:
        await client.list_tools()
        first_pid = kill(client)
        await wait_for(lambda: restarts(events))
        result = await client.call_tool("echo", {"message": "back"})
        assert "back" in text_of(result)
        assert client.server_process_id != first_pid


async def test_a_group_server_with_a_restart_block_in_mcp_json_is_back_after_a_kill(
    python_sdk_server_command: list[str], events_file: Path
) -> None:
    command, *args = python_sdk_server_command
    server = {"command": command, "args": args, "env": {EVENTS_ENV: str(events_file)}}
    config = {"mcpServers": {"py": {**server, "restart": {"initial_backoff": 0.05, "max_backoff": 0.2}}}}
    seen: list[tuple[str, Event]] = []
    async with ClientGroup.from_config(config, on_event=lambda name, event: seen.append((name, event))) as group:
        first_pid = kill(group["py"])
        await wait_for(lambda: restarts([event for _, event in seen]))
        result = await group.call_tool("py/echo", {"text": "group"})
        assert text_of(result) == "group"
        assert group["py"].server_process_id != first_pid


async def test_a_supervised_client_drives_task_backed_calls(tmp_path: Path) -> None:
    """Tasks run on a supervised client too (the scripted peer as a real process, serving its task tools)."""
    command = [sys.executable, "-m", "mcp_client.testing.peer", "--era", "modern", "--tasks"]
    events: list[Event] = []
    async with supervised(command, tmp_path / "events.jsonl")(events) as client:
        result = await client.call_tool("task_work", {"seconds": 0.2, "text": "built"})
        assert text_of(result) == "task done: built"
        kill(client)
        await wait_for(lambda: restarts(events))
        result = await client.call_tool("task_work", {"seconds": 0.2, "text": "again"})
        assert text_of(result) == "task done: again"
    assert len([e for e in events if isinstance(e, TaskCreated)]) == 2
