"""What a new user of ``mcp-client`` runs into: what a timeout did to the server, a server slow to exit, output
that is not a terminal, a server that writes a banner on stdout, a URL without a scheme, a failed call's bar."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from mcp_client import Progress
from mcp_client.cli import main
from mcp_client.cli.display import ProgressView, new_progress

PEER = [sys.executable, "-m", "mcp_client.testing.peer"]


@pytest.mark.parametrize(
    ("tool", "arguments", "options", "code"),
    [
        pytest.param("silent", "{}", ["--idle", "0.5"], 4, id="idle"),
        pytest.param("chatty", '{"interval": 0.1}', ["--max", "0.6"], 5, id="maximum"),
    ],
)
def test_after_a_timeout_the_cli_says_the_server_was_told_to_stop(
    capsys: pytest.CaptureFixture[str], tool: str, arguments: str, options: list[str], code: int
) -> None:
    assert main(["call", tool, arguments, *options, "--", *PEER]) == code
    err = capsys.readouterr().err
    assert "the server was told to stop" in err


def test_the_cli_says_it_is_waiting_while_a_slow_server_shuts_down() -> None:
    # The peer exits when its stdin closes; the shell around it lingers until the SIGTERM of the shutdown ladder.
    # (A process of its own: the CLI's exit, with its event loop closed, is part of what is run.)
    lingering = ["sh", "-c", f"{sys.executable} -m mcp_client.testing.peer; sleep 30"]
    command = [sys.executable, "-m", "mcp_client.cli", "call", "echo", '{"text": "hi"}', "--", *lingering]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    assert "waiting for the server to shut down" in done.stderr


def test_with_a_config_the_cli_says_it_is_waiting_for_the_servers(tmp_path: Path) -> None:
    lingering = {"command": "sh", "args": ["-c", f"{sys.executable} -m mcp_client.testing.peer; sleep 30"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"slow": lingering}}), encoding="utf-8")
    command = [sys.executable, "-m", "mcp_client.cli", "--config", str(config), "call", "slow/echo", '{"text": "hi"}']
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    assert "waiting for the servers to shut down" in done.stderr


def test_errors_are_not_wrapped_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    message = "the database is locked by another writer; " * 4
    assert main(["call", "fail", f'{{"message": "{message}"}}', "--", *PEER]) == 7
    lines = capsys.readouterr().err.splitlines()
    assert f"InternalError: {message} (code -32603)" in lines


def test_a_server_that_writes_a_banner_on_stdout_gets_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    banner = "import sys; print('Listening on http://127.0.0.1:3000', flush=True); sys.stdin.read()"
    assert main(["call", "echo", "{}", "--connect", "1", "--", sys.executable, "-c", banner]) == 3
    err = capsys.readouterr().err
    assert "the server wrote 1 line to stdout that is not JSON-RPC" in err
    assert "| Listening on http://127.0.0.1:3000" in err
    assert "may write only JSON-RPC messages to stdout" in err


@pytest.mark.parametrize("url", ["localhost:3000/mcp", "127.0.0.1:3000", "ftp://example.com/mcp", "http://"])
def test_a_url_without_an_http_scheme_is_a_usage_error(capsys: pytest.CaptureFixture[str], url: str) -> None:
    assert main(["call", "echo", "{}", "--url", url]) == 2
    assert "--url needs an http:// or https:// URL with a host" in capsys.readouterr().err
    assert main(["demo", "--url", url]) == 2


def _finished_task(progress_updates: list[Progress], *, ok: bool) -> tuple[float, float | None, bool]:
    console = Console(record=True, width=120)
    with new_progress(console, transient=False) as progress:
        view = ProgressView(progress, "reindex")
        for update in progress_updates:
            view.update(update)
        view.finish("reindex: done" if ok else "reindex: IdleTimeout", ok=ok)
        [task] = progress.tasks
    return task.completed, task.total, bool(task.fields.get("failed"))


@pytest.mark.parametrize(
    "updates",
    [[], [Progress(progress=3, total=None)], [Progress(progress=3, total=8)]],
    ids=["no-progress", "no-total", "with-total"],
)
def test_the_bar_of_a_failed_call_does_not_end_full(updates: list[Progress]) -> None:
    completed, total, failed = _finished_task(updates, ok=False)
    assert total is not None
    assert completed < total
    assert failed  # drawn red


def test_the_bar_of_a_call_that_succeeded_ends_full() -> None:
    completed, total, failed = _finished_task([Progress(progress=3, total=None)], ok=True)
    assert not failed
    assert completed == total
