"""Lazy start against real servers: twenty lazy servers (nineteen of the official Python SDK's server, one command
that does not exist) enter without a process, list their tools from the snapshot, and start on first call."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_client import ConnectError, TimeoutPolicy
from mcp_client.group import ClientGroup, ServerStatus


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_twenty_lazy_servers_enter_without_a_process_list_from_the_snapshot_and_start_on_first_call(
    python_sdk_server_command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawns: list[str] = []
    processes: list[int] = []
    original = anyio.open_process

    async def counted(command: Any, *args: Any, **kwargs: Any) -> Any:
        spawns.append(str(command[0] if isinstance(command, list | tuple) else command))
        process = await original(command, *args, **kwargs)
        processes.append(process.pid)
        return process

    monkeypatch.setattr(anyio, "open_process", counted)
    sdk = {"command": python_sdk_server_command[0], "args": python_sdk_server_command[1:]}
    servers: dict[str, Any] = {f"sdk{i}": sdk for i in range(19)}
    servers["broken"] = {"command": str(tmp_path / "no-such-mcp-server"), "args": []}
    config = {"mcpServers": servers}
    policy = TimeoutPolicy(idle=30, maximum=60, connect=30)

    async with ClientGroup.from_config(config, start="lazy", snapshot=tmp_path, timeout=policy) as group:
        assert spawns == []
        result = await group.call_tool("sdk0/echo", {"text": "hi"})
        assert not result.is_error
        assert len(spawns) == 1  # the one server called, listed when it started: its snapshot is kept

    async with ClientGroup.from_config(config, start="lazy", snapshot=tmp_path, timeout=policy) as group:
        assert len(spawns) == 1
        listed = await group.list_tools()  # the nineteen from the snapshot; "broken" has none: tried, left out
        assert sorted(listed) == sorted(f"sdk{i}" for i in range(19))
        assert all("echo" in [tool.name for tool in tools] for tools in listed.values())
        assert spawns[1:] == [servers["broken"]["command"]]
        assert {group.status(f"sdk{i}") for i in range(19)} == {ServerStatus.NEVER_STARTED}
        assert group.status("broken") is ServerStatus.FAILED

        with pytest.raises(ConnectError) as caught:  # only its own calls fail, with the cause
            await group.call_tool("broken/echo", {"text": "x"})
        assert caught.value.__cause__ is group.failures["broken"]
        result = await group.call_tool("sdk5/echo", {"text": "there"})
        assert not result.is_error
        assert group.status("sdk5") is ServerStatus.READY
        assert len(spawns) == 3
    assert all(_gone(pid) for pid in processes)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True
