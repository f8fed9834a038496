"""Which event loop and which clock each async test runs on.

Async tests (``@pytest.mark.anyio``) get their ``anyio_backend`` here, chosen by marker:

* ``@pytest.mark.fake_clock``: trio on ``trio.testing.MockClock(autojump_threshold=0)`` only. For every test
  whose outcome depends on time passing (timeouts, intervals, slow tools). Whenever all tasks are blocked the
  clock jumps straight to the next deadline, so nothing sleeps for real and ``anyio.current_time()`` is exact.
  asyncio has no fake clock, so these tests do not run on it.
* ``@pytest.mark.real_clock``: asyncio and trio, both on real clocks. For tests that drive real processes or
  threads, where a jumping clock would fire every timeout at once.
* neither marker, under ``tests/integration``: asyncio, and trio on a fake clock. For tests where time plays no
  part (in-memory round trips): they run on both loops, and on trio a test that would wait forever fails at its
  first deadline instead of hanging.
* neither marker, elsewhere: not parametrized here; the closest ``anyio_backend`` fixture decides (a module may
  define its own; this file's gives asyncio).

A test that parametrizes ``anyio_backend`` itself keeps its own choice. Each test gets a fresh ``MockClock``,
so fake time starts anew per test.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpcore
import httpcore2
import pytest
import trio.testing

from mcp_client.transports.http import http
from mcp_client.transports.http._transport import engine_kind

INTEGRATION_DIR = Path(__file__).resolve().parent / "integration"

ASYNCIO = "asyncio"
TRIO = "trio"
TRIO_FAKE_CLOCK = "trio-fake-clock"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two test processes per core, at most eight. Most of the suite waits on real servers, real
    processes and the Temporal dev server, not on the CPU, so one process per core left the machine half idle;
    past eight the Temporal groups are the longest path and more processes only cost their start.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when it is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(8, 2 * cores)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fake_clock: run only on trio with a MockClock that jumps (timing tests)")
    config.addinivalue_line("markers", "real_clock: run on asyncio and trio with real clocks (processes, threads)")


def _backends(metafunc: pytest.Metafunc) -> list[str] | None:
    """The backends a test runs on, or None to leave the choice to the closest ``anyio_backend`` fixture."""
    if metafunc.definition.get_closest_marker("fake_clock") is not None:
        return [TRIO_FAKE_CLOCK]
    if metafunc.definition.get_closest_marker("real_clock") is not None:
        return [ASYNCIO, TRIO]
    if INTEGRATION_DIR in Path(str(metafunc.definition.path)).resolve().parents:
        return [ASYNCIO, TRIO_FAKE_CLOCK]
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "anyio_backend" not in metafunc.fixturenames:
        return
    if any("anyio_backend" in marker.args[0] for marker in metafunc.definition.iter_markers("parametrize")):
        return  # the test chose its backends itself
    backends = _backends(metafunc)
    if backends is not None:
        metafunc.parametrize("anyio_backend", backends, indirect=True)


@pytest.fixture
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    """The backend of one test: ``"asyncio"``, ``"trio"``, or trio with a fresh jumping ``MockClock``."""
    name = getattr(request, "param", ASYNCIO)
    if name == TRIO_FAKE_CLOCK:
        return (TRIO, {"clock": trio.testing.MockClock(autojump_threshold=0)})
    return name


@pytest.fixture
def refusals(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """One entry per ``ConnectionNotAvailable`` in httpcore or httpcore2: a request handed a connection another
    one took."""
    seen: list[object] = []
    for module in (httpcore, httpcore2):
        original = module.AsyncHTTPConnection.handle_async_request
        unavailable = module.ConnectionNotAvailable

        def counted(original: Any, unavailable: type[Exception]) -> Any:
            async def handle_async_request(self: Any, request: Any) -> Any:
                try:
                    return await original(self, request)
                except unavailable:
                    seen.append(request)
                    raise

            return handle_async_request

        monkeypatch.setattr(module.AsyncHTTPConnection, "handle_async_request", counted(original, unavailable))
    return seen


@pytest.fixture(params=["httpcore2", "httpx2"])
def http_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The engine of the client ``http()`` makes, for tests that let it make one: httpcore2's pool driven directly
    (no proxy in the environment), or an ``httpx2.AsyncClient``, chosen the way a host's configuration chooses it:
    an environment proxy, which loopback bypasses (``NO_PROXY``)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    if request.param == "httpx2":
        monkeypatch.setenv("ALL_PROXY", "http://proxy.invalid:3128")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert engine_kind(http("http://127.0.0.1:9/mcp")) == request.param
    return str(request.param)
