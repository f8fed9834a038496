"""The ``mcp-client`` command line against real stdio servers (the scripted peer and the demo server)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
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
    assert "pip install 'mcp-policy-client[cli]'" in capsys.readouterr().err


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


# -- --config: the servers of an mcp.json -------------------------------------------------------------------


def _write_config(tmp_path: Path, servers: dict[str, object]) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return str(path)


def _peer_entry(**extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": ["-m", "mcp_client.testing.peer"], **extra}


@pytest.fixture
def two_peers(tmp_path: Path) -> str:
    return _write_config(tmp_path, {"peer1": _peer_entry(), "peer2": _peer_entry()})


def test_config_tools_lists_every_server_qualified(capsys: pytest.CaptureFixture[str], two_peers: str) -> None:
    code = main(["--config", two_peers, "tools", "--json"])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    listed = json.loads(captured.out)
    names = {tool["name"] for tool in listed["tools"]}
    assert {"peer1/echo", "peer2/echo", "peer1/silent", "peer2/silent"} <= names
    assert listed["failures"] == {}


def test_config_tools_of_one_server_as_a_table(capsys: pytest.CaptureFixture[str], two_peers: str) -> None:
    code = main(["tools", "--config", two_peers, "peer2"])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    assert "peer2/echo" in captured.out
    assert "peer1/" not in captured.out


def test_config_call_echo(capsys: pytest.CaptureFixture[str], two_peers: str) -> None:
    code = main(["--config", two_peers, "call", "peer1/echo", '{"text": "hi"}', "--json"])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    assert json.loads(captured.out)["content"] == [{"type": "text", "text": "hi"}]


def test_config_idle_override_ends_a_silent_call_with_4(capsys: pytest.CaptureFixture[str], two_peers: str) -> None:
    started = time.monotonic()
    code = main(["--config", two_peers, "call", "peer2/silent", "--idle", "0.5"])
    captured = capsys.readouterr()

    assert code == 4, captured.err
    assert "IdleTimeout" in captured.err
    assert time.monotonic() - started < 10


def test_config_idle_override_keeps_the_configured_maximum(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = _write_config(tmp_path, {"peer": _peer_entry(policy={"timeout": {"maximum": 0.6}})})
    code = main(["--config", config, "call", "peer/chatty", '{"interval": 0.1}', "--idle", "5"])
    captured = capsys.readouterr()

    assert code == 5, captured.err  # --idle changed only the idle timeout; the server's maximum still applies
    assert "MaxTimeout" in captured.err


def test_config_retries_is_accepted(capsys: pytest.CaptureFixture[str], two_peers: str) -> None:
    code = main(["--config", two_peers, "call", "peer1/echo", '{"text": "again"}', "--retries", "2"])
    assert code == 0
    assert capsys.readouterr().out == "again\n"
    assert main(["--config", two_peers, "call", "peer1/echo", "--retries", "0"]) == 0
    assert main(["--config", two_peers, "call", "peer1/echo", "--retries", "-1"]) == 2


def test_config_a_server_that_fails_is_reported_and_the_others_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = _write_config(tmp_path, {"good": _peer_entry(), "broken": {"command": "mcp-client-test-no-such-command"}})
    code = main(["--config", config, "tools", "--json"])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    listed = json.loads(captured.out)
    assert "good/echo" in {tool["name"] for tool in listed["tools"]}
    assert "broken" in listed["failures"]
    assert "server 'broken' failed to start" in captured.err

    assert main(["--config", config, "call", "good/echo", '{"text": "still here"}']) == 0
    assert "still here" in capsys.readouterr().out
    assert main(["--config", config, "call", "broken/echo"]) == 3
    assert "ConnectError" in capsys.readouterr().err


def test_config_a_bad_file_exits_2_naming_the_key(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = _write_config(tmp_path, {"peer": _peer_entry(policy={"timeout": {"idle": -1}})})
    assert main(["--config", config, "tools"]) == 2
    err = capsys.readouterr().err
    assert "ConfigError" in err
    assert "mcpServers.peer.policy.timeout.idle" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["call", "echo", "--config", "x.json", "--", *PEER], "not --config and a server command", id="both"
        ),
        pytest.param(["call", "peer1", "--config", "{config}"], "server/tool", id="unqualified"),
        pytest.param(["call", "nobody/echo", "--config", "{config}"], "no server named 'nobody'", id="unknown"),
        pytest.param(["tools", "peer1", "--", *PEER], "needs --config", id="server-without-config"),
        pytest.param(["tools", "--url", "http://x/mcp", "-e", "A=1"], "server command only", id="env-with-url"),
    ],
)
def test_config_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], two_peers: str, argv: list[str], message: str
) -> None:
    assert main([arg.replace("{config}", two_peers) for arg in argv]) == 2
    assert message in capsys.readouterr().err


# -- --url: Streamable HTTP ------------------------------------------------------------------------------------


@pytest.fixture
def http_url() -> Iterator[str]:
    """The scripted peer served over HTTP from a thread of its own (the CLI runs its own event loop)."""
    from anyio.from_thread import start_blocking_portal

    from mcp_client.testing.http_peer import HttpPeer
    from mcp_client.testing.peer import ScriptedPeer

    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(HttpPeer(ScriptedPeer(era="auto")).serving()) as url,
    ):
        yield url


def test_url_tools_and_call(capsys: pytest.CaptureFixture[str], http_url: str) -> None:
    assert main(["tools", "--url", http_url, "--json"]) == 0
    assert "echo" in {tool["name"] for tool in json.loads(capsys.readouterr().out)["tools"]}

    code = main(["call", "echo", '{"text": "over http"}', "--url", http_url, "--header", "X-Test: 1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out == "over http\n"


def test_url_call_idle_timeout_exits_4(capsys: pytest.CaptureFixture[str], http_url: str) -> None:
    code = main(["call", "--url", http_url, "silent", "--idle", "0.5"])
    assert code == 4
    assert "IdleTimeout" in capsys.readouterr().err


def test_url_that_nobody_serves_is_a_connect_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--url", "http://127.0.0.1:9/mcp", "--connect", "5"]) == 3
    assert "ConnectError" in capsys.readouterr().err


def test_demo_over_url(capsys: pytest.CaptureFixture[str], http_url: str) -> None:
    code = main(["demo", "--fast", "--url", http_url])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("how = stream close") == 3


def test_demo_http_fast_shows_the_stream_close(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--http", "--fast"])
    out = capsys.readouterr().out

    assert code == 0, out
    assert out.count("how = stream close") == 3
    assert len(re.findall(r"the server \(stats\) says request \d+ was: cancelled", out)) == 3
    assert "Every scene behaved as expected." in out
