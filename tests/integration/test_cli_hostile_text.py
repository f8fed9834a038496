"""The real ``mcp-client`` command, on a forced colour terminal, against a server whose texts carry rich markup and
terminal escapes (``hostile_text_server.py``): server text is printed as text, never as markup, and every control
character but newline and tab reaches the terminal made visible, not executed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.hostile_text_server import HOSTILE, TITLE

SERVER = [sys.executable, str(Path(__file__).with_name("hostile_text_server.py"))]
COMMAND = Path(sys.executable).with_name("mcp-client")
FORBIDDEN = {
    "an OSC sequence (clipboard, title, hyperlink)": "\x1b]",
    "a screen clear": "\x1b[2J",
    "a cursor jump home": "\x1b[H",
    "a bare carriage return": "\rover",
    "a bidi override": "\u202e",
    "an 8-bit CSI": "\x9b",
    "a C1 next line": "\x85",
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "FORCE_COLOR": "1",
        "TERM": "xterm-256color",
        "COLUMNS": "400",
        "TTY_COMPATIBLE": "1",
        "TTY_INTERACTIVE": "1",
    }
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [str(COMMAND), *args, "--protocol", "2025-11-25", "--", *SERVER],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=False,
    )


def assert_harmless(text: str) -> None:
    for what, sequence in FORBIDDEN.items():
        assert sequence not in text, f"{what} reached the terminal: {text!r}"


@pytest.fixture(scope="module", autouse=True)
def the_command_exists() -> None:
    assert COMMAND.exists(), f"the mcp-client script of this environment is missing: {COMMAND}"


def test_tools_prints_markup_as_text_and_escapes_as_visible() -> None:
    done = run("tools")
    assert done.returncode == 0, done.stderr
    assert "\x1b[" in done.stdout, "not a colour terminal: the test would prove nothing"
    assert_harmless(done.stdout + done.stderr)
    assert "[link=https://evil.example]click me[/link] [/] [bold red]loud" in done.stdout
    assert "\\x1b]52;c;ZXZpbA==\\x07" in done.stdout
    assert "evil[/]server\\x1b]0;pwned\\x07" in done.stdout  # the server's name in the title
    assert "\\x07\\ud800" in done.stdout  # a lone surrogate in its name, made visible (raw: a traceback)
    assert "Traceback" not in done.stderr


def test_call_prints_progress_and_results_as_text() -> None:
    done = run("call", "hostile", "{}")
    assert done.returncode == 0, done.stderr
    assert_harmless(done.stdout + done.stderr)
    assert "[link=https://evil.example]click me[/link] [/] [bold red]loud \\x1b]52;c;ZXZpbA==\\x07" in done.stdout
    assert "\\x1b[2J\\x1b[H\\rover\\u202eevil\\x9b2J\\x85\\ud800" in done.stdout  # (a lone surrogate: a traceback)
    assert "file:///x\\x1b]52;c;ZXZpbA==\\x07" in done.stdout


def test_an_error_from_the_server_is_printed_as_text() -> None:
    done = run("call", "no-such-tool", "{}")
    assert done.returncode != 0
    assert_harmless(done.stdout + done.stderr)
    assert "\\x1b]0;pwned\\x07" in done.stderr
    assert "\\ud800" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", [("tools",), ("call", "hostile", "{}")])
def test_json_output_escapes_what_a_terminal_would_act_on_and_stays_the_same_json(command: tuple[str, ...]) -> None:
    done = run(*command, "--json")
    assert done.returncode == 0, done.stderr
    assert_harmless(done.stdout + done.stderr)
    assert HOSTILE in strings_of(json.loads(done.stdout))  # the server's exact text, once parsed


def strings_of(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings_of(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings_of(item)]
    return []


@pytest.mark.parametrize("mode", [(), ("--json",)])
def test_a_server_log_message_reaches_no_terminal_raw(mode: tuple[str, ...]) -> None:
    """The server logs its hostile text (``notifications/message``, level error) during the call: neither Python's
    last-resort handler nor anything else writes it raw, in either output mode."""
    done = run("call", "hostile", "{}", *mode)
    assert done.returncode == 0, done.stderr
    assert_harmless(done.stdout + done.stderr)


def test_demo_with_a_url_prints_the_servers_name_as_text() -> None:
    """``mcp-client demo --url`` against a server named with markup and a title escape: the name is printed as
    text, its escape made visible, and the URL's secrets are not printed."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Hostile(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            method, request_id = message.get("method"), message.get("id")
            if request_id is None:
                self.send_response(202)
                self.end_headers()
                return
            if method == "initialize":
                info = {"name": f"evil[/]server{TITLE}", "version": "[/]1"}
                result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
                body: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "result": result}
                status = 200
            elif method == "tools/list":
                body, status = {"jsonrpc": "2.0", "id": request_id, "result": {"tools": []}}, 200
            else:
                error = {"code": -32000, "message": "Bad Request: Server not initialized"}
                body, status = {"jsonrpc": "2.0", "id": request_id, "error": error}, 400
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_DELETE(self) -> None:
            self.send_response(405)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        key = "sk-live-0123456789abcdef"
        url = f"http://bob:{key}@127.0.0.1:{server.server_address[1]}/mcp?api_key={key}"
        done = subprocess.run(
            [str(COMMAND), "demo", "--fast", "--url", url],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**os.environ, "FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "400"},
            timeout=60,
            check=False,
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert done.returncode == 1, done.stdout + done.stderr  # not a demo server: it has none of the demo's tools
    assert_harmless(done.stdout + done.stderr)
    assert "evil[/]server\\x1b]0;pwned\\x07" in done.stdout
    assert key not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "command",
    [("tools",), ("tools", "--json"), ("call", "evil/hostile", "{}"), ("call", "evil/hostile", "{}", "--json")],
)
def test_every_group_command_and_output_mode_keeps_the_terminal(command: tuple[str, ...], tmp_path: Path) -> None:
    """With ``--config``: the servers of an ``mcp.json``, the same hostile texts (and log message) in each mode."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"evil": {"command": SERVER[0], "args": SERVER[1:]}}}))
    env = {**os.environ, "FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "400", "TTY_COMPATIBLE": "1"}
    done = subprocess.run(
        [str(COMMAND), "--config", str(config), *command, "--protocol", "2025-11-25"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert_harmless(done.stdout + done.stderr)
    assert "ZXZpbA==" in done.stdout  # the hostile text was shown (made visible), not dropped
