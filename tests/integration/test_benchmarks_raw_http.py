"""The benchmarks' raw HTTP floor (a bare httpx streaming POST per call) against the real benchmark server.

The HTTP memory job measures this driver with 1000 slow calls in flight, so it must hold more calls than httpx's
default pool of 100 connections, and match every answer to its own call when they overlap; the progress job counts
its callbacks. About 5 s.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import pytest

from benchmarks.clients import open_driver
from benchmarks.runner import http_server

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server() as address:
        yield address


async def test_raw_http_holds_more_calls_in_flight_than_the_default_pool(url: str) -> None:
    in_flight = 150
    tag = f"test-{uuid.uuid4().hex}"
    async with open_driver("raw", "http", url) as driver, anyio.create_task_group() as task_group:
        for _ in range(in_flight):
            task_group.start_soon(driver.call, "sleep", {"seconds": 60.0, "tag": tag})
        with anyio.fail_after(30):
            while int(await driver.call("active", {"tag": tag})) < in_flight:
                await anyio.sleep(0.05)
        task_group.cancel_scope.cancel()


async def test_raw_http_matches_overlapping_answers_to_their_calls(url: str) -> None:
    answers: dict[int, str] = {}

    async def echo(index: int) -> None:
        answers[index] = await driver.call("echo", {"text": f"hello {index}"})

    async def burst(index: int) -> None:
        # With a progress token the server answers burst on an SSE stream: n notifications, then the result.
        answers[index] = await driver.call("burst", {"n": 100})

    async with open_driver("raw", "http", url) as driver, anyio.create_task_group() as task_group:
        for index in range(40):
            task_group.start_soon(echo if index % 2 else burst, index)
    assert answers == {index: f"hello {index}" if index % 2 else "done" for index in range(40)}


async def test_raw_http_calls_back_once_per_progress_notification(url: str) -> None:
    seen: list[int] = []
    async with open_driver("raw", "http", url) as driver:
        answer = await driver.call("burst", {"n": 250}, on_progress=lambda: seen.append(1))
    assert answer == "done"
    assert len(seen) == 250
