"""SoonCallback and AfterBatch: sync progress callbacks run once per batch of messages, with no task behind them."""

from __future__ import annotations

import contextvars
import inspect
import logging
from collections.abc import Coroutine

import anyio
import pytest

from mcp_client.calls.progress import SoonCallback, is_async_callable
from mcp_client.policy.progress import Progress
from mcp_client.session.batch import AfterBatch

pytestmark = pytest.mark.anyio

who = contextvars.ContextVar("who", default="nobody")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # SoonCallback exists for asyncio only; trio uses the task-based pump


async def test_updates_offered_in_one_batch_reach_the_callback_once_as_the_newest() -> None:
    seen: list[float] = []
    batch = AfterBatch()
    sink = SoonCallback(lambda update: seen.append(update.progress), batch)
    batch.open()
    for value in (1, 2, 3):
        sink.offer(Progress(value))
    assert seen == []  # nothing runs before the batch ends
    batch.run()
    assert seen == [3]
    batch.open()
    sink.offer(Progress(4))
    batch.run()
    assert seen == [3, 4]


async def test_outside_a_batch_delivery_happens_on_the_loops_next_turn() -> None:
    seen: list[float] = []
    batch = AfterBatch()
    sink = SoonCallback(lambda update: seen.append(update.progress), batch)
    sink.offer(Progress(1))
    sink.offer(Progress(2))
    assert seen == []
    await anyio.lowlevel.checkpoint()
    assert seen == [2]


async def test_the_callback_runs_in_the_callers_context() -> None:
    seen: list[str] = []
    batch = AfterBatch()
    token = who.set("caller")
    try:
        sink = SoonCallback(lambda _update: seen.append(who.get()), batch)
    finally:
        who.reset(token)
    batch.open()
    sink.offer(Progress(1))
    batch.run()
    sink.offer(Progress(2))
    sink.close(drain=True)
    assert seen == ["caller", "caller"]


async def test_close_delivers_the_pending_update_only_when_draining() -> None:
    seen: list[float] = []
    batch = AfterBatch()
    drained = SoonCallback(lambda update: seen.append(update.progress), batch)
    dropped = SoonCallback(lambda update: seen.append(-update.progress), batch)
    batch.open()
    drained.offer(Progress(1))
    dropped.offer(Progress(1))
    drained.close(drain=True)
    dropped.close(drain=False)
    drained.offer(Progress(2))  # after close: ignored
    batch.run()
    assert seen == [1]


async def test_a_failing_callback_is_logged_and_still_gets_the_next_update(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[float] = []

    def callback(update: Progress) -> None:
        seen.append(update.progress)
        if update.progress == 1:
            raise ValueError("boom")

    batch = AfterBatch()
    sink = SoonCallback(callback, batch)
    for value in (1, 2):
        batch.open()
        sink.offer(Progress(value))
        with caplog.at_level(logging.ERROR, logger="mcp_client.progress"):
            batch.run()
    assert seen == [1, 2]
    assert "boom" in caplog.text


async def test_a_sync_callback_returning_a_coroutine_is_reported_and_the_coroutine_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[float] = []
    made: list[Coroutine[object, object, None]] = []

    async def body(update: Progress) -> None:
        ran.append(update.progress)

    def callback(update: Progress) -> Coroutine[object, object, None]:
        made.append(body(update))
        return made[-1]

    batch = AfterBatch()
    sink = SoonCallback(callback, batch)
    batch.open()
    sink.offer(Progress(1))
    with caplog.at_level(logging.ERROR, logger="mcp_client.progress"):
        batch.run()
    assert ran == []
    assert [inspect.getcoroutinestate(coroutine) for coroutine in made] == [inspect.CORO_CLOSED]
    assert "declare it with async def" in caplog.text


async def test_for_callback_leaves_async_callbacks_and_rate_limits_to_the_pump() -> None:
    async def async_function(_update: Progress) -> None:
        pass

    class AsyncCallable:
        async def __call__(self, _update: Progress) -> None:
            pass

    def plain(_update: Progress) -> None:
        pass

    batch = AfterBatch()
    assert is_async_callable(async_function)
    assert is_async_callable(AsyncCallable())
    assert not is_async_callable(plain)
    assert SoonCallback.for_callback(async_function, None, batch) is None
    assert SoonCallback.for_callback(AsyncCallable(), None, batch) is None
    assert SoonCallback.for_callback(plain, 0.5, batch) is None
    assert isinstance(SoonCallback.for_callback(plain, None, batch), SoonCallback)


async def test_actions_deferred_while_running_run_in_the_same_batch_end() -> None:
    order: list[str] = []
    batch = AfterBatch()

    def first() -> None:
        order.append("first")
        batch.defer(lambda: order.append("second"))

    batch.open()
    batch.defer(first)
    batch.run()
    assert order == ["first", "second"]
