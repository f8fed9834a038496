"""Delivering progress to the caller: the async side of :class:`~mcp_client.policy.ProgressCoalescer`.

The reader task offers each accepted update to a :class:`ProgressStream` and moves on; it never waits for the
consumer. The consumer is either an ``async for`` loop (``call.progress()``) or a callback run by
:func:`deliver_to_callback`, one update at a time, in order, sync or async. A slow consumer sees the newest update
when it is ready again (latest wins), optionally no more often than a minimum interval.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol, TypeAlias

import anyio

from mcp_client.policy.progress import Progress, ProgressCoalescer

__all__ = ["CallbackPump", "ProgressCallback", "ProgressSink", "ProgressStream", "deliver_to_callback"]

logger = logging.getLogger("mcp_client.progress")

ProgressCallback: TypeAlias = Callable[[Progress], Awaitable[None] | None]
"""A progress callback: a plain function or a coroutine function taking a :class:`Progress`."""


class ProgressSink(Protocol):
    """What the session hands accepted progress to."""

    def offer(self, update: Progress) -> None:
        """Take an update without blocking."""

    def close(self, *, drain: bool) -> None:
        """No more updates will come; ``drain`` says whether the one still pending should be delivered."""


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
    is_async = inspect.iscoroutinefunction(callback)
    while (update := await stream.next()) is not None:
        try:
            if is_async:
                await callback(update)  # type: ignore[misc]
            else:
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
        with self._scope:
            await deliver_to_callback(self._stream, self._callback)

    def finish(self, *, succeeded: bool, deadline: float) -> None:
        """The call ended: stop now (failure) or drain until ``deadline`` at the latest (success)."""
        if succeeded:
            self._scope.deadline = min(self._scope.deadline, deadline)
        else:
            self._scope.cancel()
