"""The ``mcp-client`` command line against real stdio servers (the scripted peer and the demo server)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_client.cli import main

PEER = [sys.executable, "-m", "mcp_client.testing.peer"]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich wraps at 80 columns when not on a terminal; wide lines keep the assertions simple."""
    monkeypatch.setenv("COLUMNS", "200")


def test_demo_fast_runs_every_scene(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(["demo", "--fast"])
    elapsed = time.monotonic() - started
    out = capsys.readouterr().out

    assert code == 0, out
    assert elapsed < 15, f"demo --fast took {elapsed:.1f} s"
    # a. progress kept a call alive past its idle timeout
    resets = re.search(r"idle timer reset (\d+) times", out)
    assert resets is not None, out
    assert int(resets.group(1)) >= 2
    assert "succeeded after" in out
    assert "reindexed 'docs'" in out
    # b, c, d. each call ended with the expected error, was cancelled on the wire, and the server agreed
    for error in ("IdleTimeout after", "MaxTimeout after", "RequestCancelled after"):
        assert error in out, out
    assert out.count("how = notification") == 3
    assert len(re.findall(r"the server \(stats\) says request \d+ was: cancelled", out)) == 3
    assert "cancelled for you" in out  # nobody pressed Ctrl-C: scene d cancelled itself
    assert "Every scene behaved as expected." in out
    assert "FAILED" not in out


def test_tools_json_lists_the_peer_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tools", "--json", "--", *PEER])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    tools = {tool["name"]: tool for tool in json.loads(captured.out)["tools"]}
    assert {"echo", "slow", "silent", "fail"} <= tools.keys()
    assert tools["echo"]["annotations"]["readOnlyHint"] is True
    assert tools["echo"]["inputSchema"]["type"] == "object"


def test_call_json_prints_the_raw_result(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["call", "echo", '{"text": "hi"}', "--json", "--", *PEER])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    result = json.loads(captured.out)
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert result["isError"] is False


def test_call_without_separator_and_a_fixed_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["call", "--protocol", "2025-11-25", "echo", '{"text": "hello there"}', *PEER, "--era", "legacy"])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    assert captured.out == "hello there\n"


@pytest.mark.parametrize(
    ("tool", "arguments", "options", "expected_code", "expected_error"),
    [
        pytest.param("silent", "{}", ["--idle", "0.5"], 4, "IdleTimeout", id="idle-4"),
        pytest.param("chatty", '{"interval": 0.1}', ["--max", "0.6"], 5, "MaxTimeout", id="maximum-5"),
        pytest.param("die", "{}", [], 6, "TransportError", id="died-6"),
        pytest.param("fail", '{"message": "kaput"}', [], 7, "InternalError: kaput", id="server-error-7"),
        pytest.param("bad_result_type", "{}", [], 8, "ProtocolError", id="protocol-8"),
    ],
)
def test_call_exit_codes(
    capsys: pytest.CaptureFixture[str],
    tool: str,
    arguments: str,
    options: list[str],
    expected_code: int,
    expected_error: str,
) -> None:
    started = time.monotonic()
    code = main(["call", tool, arguments, *options, "--", *PEER])
    captured = capsys.readouterr()

    assert code == expected_code, captured.err
    assert expected_error in captured.err
    assert time.monotonic() - started < 10
    if expected_code in (4, 5, 6, 7):  # the error says which call it ended
        assert "method tools/call" in captured.err
        assert re.search(r"request id \d+", captured.err), captured.err


def test_a_tool_reporting_is_error_exits_1_and_still_prints_its_content(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["call", "tool_error", "--", *PEER])
    captured = capsys.readouterr()

    assert code == 1
    assert captured.out == "tool failed\n"
    assert "the tool 'tool_error' reported an error" in captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["call", "echo", "{not json", "--", *PEER], "not valid JSON", id="bad-json"),
        pytest.param(["call", "echo", "[1, 2]", "--", *PEER], "must be a JSON object", id="not-an-object"),
        pytest.param(["call", "echo", "{}"], "no server command", id="no-command"),
        pytest.param(["call", "echo", "{}", "--json", *PEER], "put -- before the server command", id="misplaced"),
        pytest.param(["demo", "--", "python"], "demo takes no server command", id="demo-command"),
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "--idle", "-1", "echo", "--", *PEER]) == 2
    assert "--idle" in capsys.readouterr().err
    assert main(["frobnicate"]) == 2


def test_help_lists_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "--help"]) == 0
    out = capsys.readouterr().out
    for line in ("3    ConnectError", "4    IdleTimeout", "5    MaxTimeout", "130  cancelled by Ctrl-C"):
        assert line in out


def test_a_command_that_does_not_exist_is_a_connect_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["call", "echo", "{}", "--", "mcp-client-test-no-such-command"])
    captured = capsys.readouterr()

    assert code == 3
    assert "ConnectError" in captured.err
    assert "mcp-client-test-no-such-command" in captured.err


def test_without_rich_the_cli_says_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rich.console", None)

    assert main(["tools", "--", *PEER]) == 2
    assert "pip install 'mcp-client[cli]'" in capsys.readouterr().err


def _wait_for_child_process(pid: int, *, within: float) -> None:
    """Poll until process ``pid`` has a child (Linux /proc; elsewhere fall back to a fixed wait)."""
    proc = Path("/proc")
    if not proc.is_dir():
        time.sleep(5)
        return
    give_up = time.monotonic() + within
    while time.monotonic() < give_up:
        for stat in proc.glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} started no server within {within} s")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_ctrl_c_cancels_the_call_and_exits_130() -> None:
    command = [sys.executable, "-m", "mcp_client.cli", "call", "slow", '{"seconds": 30, "progress_every": 0.2}']
    process = subprocess.Popen(
        [*command, "--", *PEER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        # A Ctrl-C during the interpreter's own imports is Python's, not ours: wait until the CLI runs (it has
        # started the server), then a little more so the call is usually under way. Connecting also exits 130.
        _wait_for_child_process(process.pid, within=60)
        time.sleep(1.5)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()

    assert process.returncode == 130, err
    assert out == ""
    if "RequestCancelled" in err:  # Ctrl-C arrived during the call: it was cancelled on the wire
        assert "User pressed Ctrl-C" in err
        assert "the server was told to stop" in err
    else:
        assert "interrupted" in err
