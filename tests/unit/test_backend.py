"""The async backend seam: one look at the running loop gives each backend's fast paths, on the loop's own clock."""

from __future__ import annotations

import ast
import asyncio
import contextvars
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_client
from mcp_client._backends.asyncio import ASYNCIO_TIMER_LEAD, FutureWaiter
from mcp_client._backends.auto import current_backend

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


async def test_the_backend_is_the_running_loops_own(anyio_backend: str) -> None:
    backend = current_backend()
    assert backend.name == anyio_backend
    assert abs(backend.now() - anyio.current_time()) < 1.0  # the same clock
    waiter = backend.new_waiter()
    if backend.name == "asyncio":
        assert isinstance(waiter, FutureWaiter)
        assert backend.timer_lead == ASYNCIO_TIMER_LEAD
        assert backend.call_soon is not None
        assert backend.drives_pipes is (sys.platform != "win32")
    else:
        from mcp_client._backends.trio import TrioWaiter  # (trio's module is loaded only when trio runs)

        assert backend.name == "trio"
        assert isinstance(waiter, TrioWaiter)
        assert backend.timer_lead == 0.0
        assert backend.call_soon is None
        assert backend.drives_pipes is False


def test_trio_is_imported_only_by_its_backend_module() -> None:
    package = Path(mcp_client.__file__).parent
    importers = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(
            (isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "trio" for alias in node.names))
            or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "trio" and not node.level)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    }
    assert importers == {"_backends/trio.py"}


async def test_a_waiter_from_the_backend_wakes_when_set() -> None:
    waiter = current_backend().new_waiter()
    waiter.set()
    with anyio.fail_after(1):
        await waiter.wait()  # set before the wait: returns at once


def test_outside_a_loop_it_is_trio_that_is_looked_for() -> None:
    # No asyncio loop runs here, so the seam takes the caller for trio (trio.current_time then needs trio's loop).
    backend = current_backend()
    assert backend.name == "trio"
    assert backend.call_soon is None


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_waiters_timers_run_in_one_context_of_their_own(anyio_backend: str) -> None:
    """A wait's timer does not copy the waiting task's context (``call_at`` would, one object per request in flight):
    the timers of a connection's waiters share one context, made for them."""
    backend = current_backend()
    loop = asyncio.get_running_loop()
    contexts: list[contextvars.Context | None] = []
    call_at = loop.call_at

    def spy(when: float, callback: Any, *args: Any, context: contextvars.Context | None = None) -> Any:
        if getattr(callback, "__name__", "") == "_wake":  # (the waiter's timer, not fail_after's)
            contexts.append(context)
        return call_at(when, callback, *args, context=context)

    loop.call_at = spy  # type: ignore[method-assign, assignment]
    try:
        for _ in range(2):
            with anyio.fail_after(1):
                await backend.new_waiter().wait(loop.time() + 0.001)
    finally:
        del loop.call_at
    assert len(contexts) == 2
    assert contexts[0] is not None
    assert contexts[0] is contexts[1]
