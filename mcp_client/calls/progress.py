"""Delivering progress to the caller: the async side of :class:`~mcp_client.policy.ProgressCoalescer`.

The reader offers each accepted update to a sink and moves on; it never waits for the consumer. The consumer is
either an ``async for`` loop (``call.progress()``) or a callback run by :func:`deliver_to_callback`, one update at
a time, in order, sync or async. A slow consumer sees the newest update when it is ready again (latest wins),
optionally no more often than a minimum interval.

A plain (sync) callback on asyncio needs no task of its own: :class:`SoonCallback` runs it once per batch of
messages the reader routes, with everything that arrived in that batch coalesced.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeAlias

import anyio

from mcp_client._log_guard import package_logger
from mcp_client.calls.in_flight_limit import for_a_call
from mcp_client.policy.progress import Progress, ProgressCoalescer
from mcp_client.session.batch import AfterBatch
from mcp_client.session.inflight import ProgressSink

__all__ = [
    "CallbackPump",
    "ProgressCallback",
    "ProgressSink",
    "ProgressStream",
    "SoonCallback",
    "deliver_to_callback",
]

logger = package_logger("mcp_client.progress")

ProgressCallback: TypeAlias = Callable[[Progress], Awaitable[None] | None]
"""A progress callback: a plain function or a coroutine function taking a :class:`Progress`."""


class ProgressStream:
    """A latest-wins mailbox of progress updates with an async iterator for one consumer."""

    __slots__ = ("_closed", "_coalescer", "_wakeup")

    def __init__(self, min_interval: float | None = None) -> None:
        self._coalescer = ProgressCoalescer(min_interval)
        self._wakeup = anyio.Event()
        self._closed = False

    @property
    def coalesced(self) -> int:
        """How many updates were replaced by newer ones before the consumer took them."""
        return self._coalescer.coalesced

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def offer(self, update: Progress) -> None:
        if self._closed:
            return
        self._coalescer.offer(update)
        self._wakeup.set()

    def close(self, *, drain: bool) -> None:
        if not drain:
            self._coalescer = ProgressCoalescer()
        self._closed = True
        self._wakeup.set()

    async def next(self) -> Progress | None:
        """The next update to deliver, or None once the stream is closed and drained."""
        while True:
            update = self._coalescer.take(anyio.current_time())
            if update is not None:
                return update
            if self._closed and not self._coalescer.pending:
                return None
            if self._coalescer.pending:  # held back by the minimum interval
                await anyio.sleep_until(self._coalescer.ready_at())
                continue
            self._wakeup = anyio.Event()  # no await since the check above, so no offer can be missed
            await self._wakeup.wait()

    def __aiter__(self) -> AsyncIterator[Progress]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Progress]:
        while (update := await self.next()) is not None:
            yield update


class FanOut:
    """Offers each update to several sinks (a callback and an iterator on the same call)."""

    __slots__ = ("_sinks",)

    def __init__(self, *sinks: ProgressSink) -> None:
        self._sinks = sinks

    def offer(self, update: Progress) -> None:
        for sink in self._sinks:
            sink.offer(update)

    def close(self, *, drain: bool) -> None:
        for sink in self._sinks:
            sink.close(drain=drain)


async def deliver_to_callback(stream: ProgressStream, callback: ProgressCallback) -> None:
    """Run ``callback`` for each update of ``stream``, one at a time, until the stream ends.

    A callback that raises is logged and does not end the call; the next update still reaches it.
    """
    while (update := await stream.next()) is not None:
        try:
            outcome = callback(update)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            logger.exception("progress callback %r failed", callback)


class CallbackPump:
    """Runs :func:`deliver_to_callback` in a cancel scope of its own, so the call decides how long it may go on.

    When the call fails, delivery stops at once; when it succeeds, the last pending update may still be delivered,
    but never past the call's hard deadline: a slow callback cannot hold a finished call beyond its maximum.
    """

    __slots__ = ("_callback", "_scope", "_stream")

    def __init__(self, stream: ProgressStream, callback: ProgressCallback) -> None:
        self._stream = stream
        self._callback = callback
        self._scope = anyio.CancelScope()

    async def run(self) -> None:
        """Deliver until the stream ends or :meth:`finish` cuts it short. Run it in a task group."""
        with self._scope:  # (the calls the callback makes are made for the call: they take no slot)
            await for_a_call(deliver_to_callback)(self._stream, self._callback)

    def finish(self, *, succeeded: bool, deadline: float) -> None:
        """The call ended: stop now (failure) or drain until ``deadline`` at the latest (success)."""
        if succeeded:
            self._scope.deadline = min(self._scope.deadline, deadline)
        else:
            self._scope.cancel()


def is_async_callable(callback: object) -> bool:
    """True for an ``async def`` function, a partial of one, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(type(callback).__call__)


class SoonCallback:
    """Runs a plain (sync) callback once per batch of incoming messages: a progress sink with no task behind it.

    An accepted update is stored (latest wins) and a delivery is deferred to the end of the batch the reader is
    routing (:class:`~mcp_client.session.batch.AfterBatch`), unless one is deferred already: everything read together
    reaches the callback as its newest update, once. The callback runs in a copy of the caller's context, as it
    would in a task the caller started. A sync callback holds the event loop for as long as it runs wherever it
    runs, so this stalls the reader no more than a task would; what it saves is a task wake-up per update.

    Use :meth:`for_callback`, which says when this applies (asyncio, a sync callback, no minimum interval).
    """

    __slots__ = ("_after_batch", "_callback", "_closed", "_context", "_pending", "_queued")

    def __init__(self, callback: Callable[[Progress], object], after_batch: AfterBatch) -> None:
        self._callback = callback
        self._after_batch = after_batch
        self._context = contextvars.copy_context()
        self._pending: Progress | None = None
        self._queued = False
        self._closed = False

    @classmethod
    def for_callback(
        cls, callback: ProgressCallback, min_interval: float | None, after_batch: AfterBatch
    ) -> SoonCallback | None:
        """A sink for ``callback`` if it can run this way, else ``None`` (use a :class:`CallbackPump`)."""
        if min_interval or is_async_callable(callback) or not after_batch.can_defer:
            return None  # (on trio nothing runs "on the loop's next turn": the pump's task it is)
        return cls(callback, after_batch)

    def offer(self, update: Progress) -> None:
        if self._closed:
            return
        self._pending = update
        if not self._queued:
            self._queued = True
            self._after_batch.defer(self._deliver)

    def close(self, *, drain: bool) -> None:
        update, self._pending = self._pending, None
        self._closed = True
        if drain and update is not None:
            self._context.run(self._run, update)

    def _deliver(self) -> None:
        self._queued = False
        update, self._pending = self._pending, None
        if update is not None:
            self._context.run(self._run, update)

    def _run(self, update: Progress) -> None:
        try:
            outcome = self._callback(update)
        except Exception:
            logger.exception("progress callback %r failed", self._callback)
            return
        if inspect.isawaitable(outcome):
            if inspect.iscoroutine(outcome):
                outcome.close()
            logger.error(
                "progress callback %r returned an awaitable; declare it with async def to have it awaited",
                self._callback,
            )
