"""Fixtures for the integration tests: a client wired to the scripted peer, its event log, and a bounded wait.

Every test here drives a real :class:`~mcp_client.Client` against :class:`~mcp_client.testing.peer.ScriptedPeer`,
in-process through :func:`~mcp_client.memory` (same event loop, same clock) or as a subprocess over stdio (in
``test_stdio_process.py``). Backends and clocks are chosen by marker in ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_client import Client, Event, TimeoutPolicy, memory
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE
from tests.integration.http_lines import LINES

POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)
"""The client policy of the tests unless they say otherwise: short enough that nothing can hang for long."""


@pytest.fixture
def events() -> list[Event]:
    """Every event the client of the test emitted, in order."""
    return []


@pytest.fixture
def connect(events: list[Event]) -> Callable[..., Client]:
    """``connect(peer, timeout=..., max_message_size=..., **client_options)``: a Client on ``peer.serve``.

    The client logs its events into the ``events`` fixture; use it with ``async with``.
    """

    def connect(
        peer: ScriptedPeer,
        *,
        timeout: TimeoutPolicy | None = POLICY,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        **options: Any,
    ) -> Client:
        transport = memory(peer.serve, max_message_size=max_message_size)
        return Client(transport, timeout=timeout, on_event=events.append, **options)

    return connect


@pytest.fixture
def eventually() -> Callable[[Callable[[], object]], Awaitable[None]]:
    """``await eventually(predicate)``: let other tasks run until ``predicate()`` holds, without advancing time.

    Fails after a bounded number of scheduling rounds; for effects that need no time to pass (a message that is
    on its way through memory streams), on every backend.
    """

    async def eventually(predicate: Callable[[], object], rounds: int = 1000) -> None:
        for _ in range(rounds):
            if predicate():
                return
            await anyio.lowlevel.checkpoint()
        raise AssertionError(f"still false after {rounds} scheduling rounds: {predicate}")

    return eventually


@pytest.fixture(params=LINES)
def http_line(request: pytest.FixtureRequest) -> str:
    """Which library a caller's HTTP client comes from (a test asking for it runs with each)."""
    name: str = request.param
    return name
