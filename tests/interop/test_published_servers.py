"""The published servers hosts meet, over stdio, through the public API and through the ``mcp-client`` CLI.

npm ``@modelcontextprotocol/server-filesystem``, ``server-memory`` and ``server-sequential-thinking`` (2026.8.31,
from ``package.json``) and PyPI ``mcp-server-time`` and ``mcp-server-git`` (2026.10.19, in a venv of their own
under ``.venv-peers/``, built by the ``published_servers_python`` fixture). For each: a real call, a tool
error that must come back as an ``isError`` result (not an exception, exit status 1 in the CLI), and a clean
shutdown: no process that carries the test's marker in its environment is left, whatever launched it (a node
launcher, a Python that spawns ``git``), which ``/proc`` shows on Linux.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_client import Client, TimeoutPolicy, stdio
from mcp_client.cli import main
from tests.interop.conftest import npm_server_command

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

MARKER = "MCP_CLIENT_TEST_MARKER"
PROC = Path("/proc")


@dataclass(frozen=True)
class Case:
    """One server, a call that works (and a text its result must hold), a call that fails as a tool error."""

    command: list[str]
    env: dict[str, str]
    call: tuple[str, dict[str, Any]]
    holds: str
    failing: tuple[str, dict[str, Any]]
    error_holds: str


def _filesystem(tmp_path: Path, python: Callable[[], str]) -> Case:
    (tmp_path / "note.txt").write_text("remember the milk\n")
    return Case(
        npm_server_command("server-filesystem", str(tmp_path)),
        {},
        ("read_text_file", {"path": str(tmp_path / "note.txt")}),
        "remember the milk",
        ("read_text_file", {"path": "/etc/hostname"}),
        "outside allowed directories",
    )


def _memory(tmp_path: Path, python: Callable[[], str]) -> Case:
    entity = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
    return Case(
        npm_server_command("server-memory"),
        {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
        ("create_entities", {"entities": [entity]}),
        "wrote the first program",
        ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
        "Nobody not found",
    )


def _sequential_thinking(tmp_path: Path, python: Callable[[], str]) -> Case:
    thought = {"thought": "first", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False}
    return Case(
        npm_server_command("server-sequential-thinking"),
        {"DISABLE_THOUGHT_LOGGING": "true"},
        ("sequentialthinking", thought),
        '"thoughtHistoryLength": 1',
        ("sequentialthinking", {**thought, "thoughtNumber": "one"}),
        "thoughtNumber",
    )


def _time(tmp_path: Path, python: Callable[[], str]) -> Case:
    return Case(
        [python(), "-m", "mcp_server_time"],
        {},
        ("get_current_time", {"timezone": "Europe/Paris"}),
        "Europe/Paris",
        ("get_current_time", {"timezone": "Not/AZone"}),
        "Invalid timezone",
    )


def _git(tmp_path: Path, python: Callable[[], str]) -> Case:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (repo / "draft.txt").write_text("x\n")
    return Case(
        [python(), "-m", "mcp_server_git"],
        {},
        ("git_status", {"repo_path": str(repo)}),
        "draft.txt",
        ("git_status", {"repo_path": str(tmp_path)}),  # not a repository
        "git_status",
    )


SERVERS: dict[str, Callable[[Path, Callable[[], str]], Case]] = {
    "server-filesystem": _filesystem,
    "server-memory": _memory,
    "server-sequential-thinking": _sequential_thinking,
    "mcp-server-time": _time,
    "mcp-server-git": _git,
}


@pytest.fixture(params=sorted(SERVERS))
def case(request: pytest.FixtureRequest, tmp_path: Path) -> Case:
    def python() -> str:
        value: str = request.getfixturevalue("published_servers_python")
        return value

    built: Case = SERVERS[request.param](tmp_path, python)
    return built


def _marked(marker: str) -> list[int]:
    """The processes whose environment holds ``MARKER=marker``: the server and anything it started."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.fixture
def marker() -> str:
    if not PROC.is_dir():
        pytest.fail("these tests find the servers' processes in /proc (Linux)", pytrace=False)
    return uuid.uuid4().hex


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def test_a_call_a_tool_error_and_a_clean_shutdown(case: Case, marker: str) -> None:
    command, *args = case.command
    transport = stdio(command, args, env={**case.env, MARKER: marker})
    async with Client(transport, timeout=TimeoutPolicy(idle=30, maximum=60)) as client:
        assert _marked(marker)  # the marker does reach the server
        tool, arguments = case.call
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, _text(result)
        assert case.holds in _text(result) or case.holds in str(result.structured_content)
        tool, arguments = case.failing
        failed = await client.call_tool(tool, arguments)  # an isError result, never an exception
        assert failed.is_error
        assert case.error_holds in _text(failed)
    assert _marked(marker) == []


def test_the_cli_calls_it_and_reports_the_tool_error(
    case: Case, marker: str, capsys: pytest.CaptureFixture[str]
) -> None:
    env = [f"--env={name}={value}" for name, value in {**case.env, MARKER: marker}.items()]
    tool, arguments = case.call
    code = main(["call", *env, tool, json.dumps(arguments), "--", *case.command])
    out, _err = capsys.readouterr()
    assert code == 0
    assert case.holds in out
    assert _marked(marker) == []
    tool, arguments = case.failing
    code = main(["call", *env, tool, json.dumps(arguments), "--", *case.command])
    out, err = capsys.readouterr()
    assert code == 1  # the tool reported an error (isError)
    assert case.error_holds in out + err
    assert _marked(marker) == []
