"""The connection pool of the client :func:`mcp_client.transports.http.http` makes, under many requests at once.

httpcore 1.0's own pool hands one idle connection to every request that arrives before the first of them has
started on it (the losers fail with ``ConnectionNotAvailable`` and go round again), and closes idle connections
whenever it holds more connections than ``max_keepalive_connections`` in all. The transport gives the pools of
the client it makes its own assignment pass (``fair_pool``); these tests drive such a pool directly, over
httpcore's mock network backend, so nothing touches a socket and the counts are exact.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import httpcore
import httpx
import pytest

from mcp_client.transports import _http_pool as pool_module
from mcp_client.transports import http as http_transport_module
from mcp_client.transports.http import DEFAULT_LIMITS, http

pytestmark = pytest.mark.anyio

URL = "http://mcp.test/mcp"
ANSWER = [b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n", b"ok"]


class CountingBackend(httpcore.AsyncMockBackend):
    """Every connection answers up to ``answers`` requests with ``200 ok``; counts the connections opened."""

    def __init__(self, answers: int = 10) -> None:
        super().__init__(ANSWER * answers)
        self.opened = 0

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.opened += 1
        return await super().connect_tcp(host, port, timeout, local_address, socket_options)


@asynccontextmanager
async def fair_pool(
    backend: CountingBackend, *, keepalive: int, max_connections: int | None = None, expiry: float | None = None
) -> AsyncIterator[httpcore.AsyncConnectionPool]:
    pool = httpcore.AsyncConnectionPool(
        max_connections=max_connections,
        max_keepalive_connections=keepalive,
        keepalive_expiry=expiry,
        network_backend=backend,
    )
    assert pool_module.fair_pool(pool)
    async with pool:
        yield pool


async def hold(pool: httpcore.AsyncConnectionPool, count: int, release: anyio.Event | None = None) -> None:
    """``count`` requests at once, each keeping its response (and so its connection) until ``release`` is set
    (by default: until all ``count`` have their responses)."""
    started = 0
    all_started = anyio.Event()
    automatic = release is None
    release = release or anyio.Event()

    async def one() -> None:
        nonlocal started
        async with pool.stream("POST", URL, content=b"{}") as response:
            assert response.status == 200
            started += 1
            if started == count:
                all_started.set()
            await release.wait()
            assert await response.aread() == b"ok"

    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(one)
        if automatic:
            await all_started.wait()
            release.set()


def idle(pool: httpcore.AsyncConnectionPool) -> int:
    return sum(connection.is_idle() for connection in pool.connections)


async def test_an_idle_connection_goes_to_one_waiting_request(refusals: list[object]) -> None:
    backend = CountingBackend()
    async with fair_pool(backend, keepalive=20) as pool:
        await hold(pool, 5)
        assert (backend.opened, idle(pool)) == (5, 5)
        # Ten requests arrive together while five connections are idle: five take those, five open new ones.
        await hold(pool, 10)
        assert backend.opened == 10
        assert refusals == []
        assert idle(pool) == 10


async def test_keepalive_limit_counts_idle_connections_only(refusals: list[object]) -> None:
    backend = CountingBackend()
    async with fair_pool(backend, keepalive=3) as pool:
        long_release, short_release, short_done = anyio.Event(), anyio.Event(), anyio.Event()

        async def short() -> None:
            await hold(pool, 1, short_release)
            short_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold, pool, 9, long_release)
            tg.start_soon(short)
            while len(pool.connections) < 10 or idle(pool):
                await anyio.lowlevel.checkpoint()
            short_release.set()
            await short_done.wait()
            # Nine busy, one idle: within the limit of three idle, so it stays (not "ten connections > three").
            assert (len(pool.connections), idle(pool)) == (10, 1)
            long_release.set()
        # As the nine finished, idle connections beyond three were closed, and only those.
        assert idle(pool) == len(pool.connections) == 3
        # The next burst of ten reuses the three and opens seven.
        await hold(pool, 10)
        assert backend.opened == 17
        assert refusals == []


async def test_a_request_cancelled_while_waiting_frees_its_connection(refusals: list[object]) -> None:
    backend = CountingBackend()
    async with fair_pool(backend, keepalive=20) as pool:
        await hold(pool, 2)
        with anyio.CancelScope() as scope:
            scope.cancel()
            async with pool.stream("POST", URL, content=b"{}"):
                pytest.fail("a cancelled request was sent")  # pragma: no cover
        assert idle(pool) == 2
        await hold(pool, 2)
        assert backend.opened == 2
        assert refusals == []


async def test_expired_idle_connections_are_closed_before_one_is_handed_out(refusals: list[object]) -> None:
    backend = CountingBackend()
    # httpcore expires connections on time.monotonic(), no clock to fake: with an expiry of 0 any later look sees
    # them expired, so no time has to pass.
    async with fair_pool(backend, keepalive=20, expiry=0.0) as pool:
        await hold(pool, 2)
        assert idle(pool) == 2
        await hold(pool, 1)
        assert backend.opened == 3
        assert len(pool.connections) == 1
        assert refusals == []


async def test_at_max_connections_requests_wait_for_a_connection(refusals: list[object]) -> None:
    backend = CountingBackend(answers=20)
    async with fair_pool(backend, keepalive=20, max_connections=3) as pool:
        await hold(pool, 3)
        # Twelve at once on three connections: nine wait their turn, each handed a released connection once.
        async with anyio.create_task_group() as tg:
            for _ in range(12):
                tg.start_soon(hold, pool, 1)
        assert backend.opened == 3
        assert refusals == []


def test_the_client_http_makes_gets_the_fair_pool() -> None:
    """Fails when an httpcore release no longer fits the pass (the transport then keeps httpcore's own)."""
    client = http_transport_module._new_client(DEFAULT_LIMITS)
    transport = client._transport
    assert isinstance(transport, httpx.AsyncHTTPTransport)
    assert "_assign_requests_to_connections" in vars(transport._pool)
    assert transport._pool._max_keepalive_connections == DEFAULT_LIMITS.max_keepalive_connections


def test_the_pass_is_not_given_to_http2_pools_or_other_pools() -> None:
    assert not pool_module.fair_pool(httpcore.AsyncConnectionPool(http2=True))
    assert not pool_module.fair_pool(object())


async def test_a_callers_client_is_used_as_given() -> None:
    async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport()) as client:
        transport = http(URL, client=client)
        pool = client._transport._pool  # type: ignore[attr-defined]

        class Handler:
            def on_message(self, message: Any, stream: Any = None) -> None: ...
            def on_invalid(self, *args: Any) -> None: ...
            def on_request_failed(self, *args: Any) -> None: ...

        async with transport.connect(Handler()):  # type: ignore[arg-type]
            assert "_assign_requests_to_connections" not in vars(pool)
