"""Running coroutines for a blocking caller: the portal machinery under :mod:`mcp_client.sync.client`.

A :class:`Portal` starts an event loop on a thread of its own (anyio's blocking portal) and enters an async
context manager in it; a :class:`PortalRunner` runs each coroutine there for the calling thread, in a copy of the
caller's context, and turns a Ctrl-C while it waits into a cancellation of that coroutine (so of its request, on
the wire), waited for a bounded time; what it raises passes the package's typed boundary (:mod:`mcp_client._typed`).
May touch anyio's portal, that boundary and the standard library only.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping
from contextlib import ExitStack
from typing import Any, ParamSpec, TypeVar

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from mcp_client._typed import sole_error, typed

__all__ = ["Portal", "PortalRunner"]

T = TypeVar("T")
P = ParamSpec("P")

_POLL = 0.2
"""Seconds between two checks of a waiting thread: lets signal handlers run even where a blocking wait is not
interruptible (Windows)."""


class PortalRunner:
    """Runs coroutines in a portal for a blocking caller, and turns Ctrl-C into a cancellation on the wire."""

    def __init__(
        self,
        portal: BlockingPortal,
        interrupt_timeout: float,
        drain: Callable[[float], Awaitable[None]],
        stopped: Callable[[], bool] = lambda: False,
    ):
        self.portal = portal
        self.interrupt_timeout = interrupt_timeout
        self._drain = drain
        self._stopped = stopped

    @property
    def stopped(self) -> bool:
        """True once the client's event loop has stopped (the client closed): nothing runs on it any more."""
        return self._stopped()

    def _check_running(self) -> None:
        if self._stopped():
            raise RuntimeError("the client is closed: its event loop has stopped")

    def run(self, func: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``func(*args, **kwargs)`` in the portal, in a copy of the caller's context; block for its result.

        On :class:`KeyboardInterrupt` (or any exception raised in this thread while it waits, even before the task
        started) the task is cancelled, which cancels its request on the wire; the wait for that is bounded, then
        the interrupt is re-raised.
        """
        self._check_running()
        context = contextvars.copy_context()
        handle = _Interruptible()

        async def task() -> T:
            try:
                _adopt(context)
                with anyio.CancelScope() as scope:
                    handle.scope = scope
                    if handle.cancelled:
                        scope.cancel()
                    return await func(*args, **kwargs)
                raise _Interrupted("the call was interrupted")
            finally:
                handle.finished.set()

        try:
            future = self.portal.start_task_soon(task)
            _wait(future)
        except BaseException:
            self._interrupt(handle)
            raise
        with typed():  # the blocking caller sees the one typed error, never an exception group
            return future.result()

    def call_sync(self, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a plain function on the event-loop thread (for state the loop owns); once that loop has stopped, on
        the calling thread (nothing else touches that state any more: a handle's ``cancel()`` after the end)."""
        if self._stopped():
            return func(*args, **kwargs)
        return self.portal.call(lambda: func(*args, **kwargs))

    def _interrupt(self, handle: _Interruptible) -> None:
        try:
            self.portal.call(handle.cancel)
            if not handle.finished.wait(self.interrupt_timeout):
                return
            drained = self.portal.start_task_soon(self._drain, self.interrupt_timeout)
            concurrent.futures.wait([drained], timeout=self.interrupt_timeout)
        except RuntimeError:  # the portal is already shutting down
            pass


class _Interrupted(Exception):
    """Ends a task cancelled by an interrupt of its caller (who no longer waits for its result)."""


class _Interruptible:
    """Lets the waiting thread cancel its task, whether the task has started yet or not."""

    def __init__(self) -> None:
        self.scope: anyio.CancelScope | None = None
        self.cancelled = False
        self.finished = threading.Event()

    def cancel(self) -> None:
        """On the event-loop thread: cancel the task now, or as soon as it starts."""
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()


class _Held:
    """``target`` entered in a task of the portal and left when told, as anyio's ``wrap_async_context_manager``,
    but the calling thread waits in polls (:func:`_wait`): a Ctrl-C reaches it while a connect is under way even
    where a lock wait is not interruptible, or the signal went to another thread."""

    def __init__(self, portal: BlockingPortal, target: Any) -> None:
        self._portal = portal
        self._target = target
        self._entered: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._exit_info: tuple[Any, Any, Any] = (None, None, None)
        self._leave: anyio.Event | None = None
        self._left: concurrent.futures.Future[Any] | None = None

    async def _hold(self) -> Any:
        self._leave = leave = anyio.Event()
        try:
            value = await self._target.__aenter__()
        except BaseException as exc:
            self._entered.set_exception(exc)
            raise
        self._entered.set_result(value)
        try:
            await leave.wait()
        finally:
            # Reached on cancellation too (the portal stopping), before __exit__ told anything.
            result = await self._target.__aexit__(*self._exit_info)
        return result

    def __enter__(self) -> Any:
        self._left = self._portal.start_task_soon(self._hold)
        _wait(self._entered)
        return self._entered.result()

    def __exit__(self, *exc_info: Any) -> bool | None:
        assert self._left is not None
        self._exit_info = exc_info
        assert self._leave is not None
        self._portal.call(self._leave.set)
        _wait(self._left)
        result: bool | None = self._left.result()
        return result


def _wait(future: concurrent.futures.Future[Any]) -> None:
    while not future.done():
        concurrent.futures.wait([future], timeout=_POLL)


def _adopt(context: contextvars.Context) -> None:
    """Give the running task the values of the caller's context variables (its own copy is changed, no more)."""
    for var, value in context.items():
        var.set(value)


class Portal:
    """A blocking portal started on demand and stopped on close, or when its owner is collected unclosed.

    Closing leaves the async context manager, then stops the event loop cancelling whatever still runs in it (a
    call handle entered and never left, a coroutine of the host's): close is bounded by the client's own close.
    An owner collected (or alive at interpreter exit) unclosed is closed by a finalizer that holds the portal, not
    the owner; on the portal's own thread (the collector may run anywhere) the close is handed to a thread of its
    own, since a thread cannot wait for its own event loop to stop.
    """

    def __init__(self, backend: str, backend_options: Mapping[str, Any] | None, name: str) -> None:
        self._backend = backend
        self._backend_options = dict(backend_options) if backend_options is not None else None
        self._name = name
        self._stack: ExitStack | None = None
        self._loop_thread: int | None = None
        self._finalizer: weakref.finalize[[], object] | None = None
        self._opening = threading.Lock()

    def enter(self, target: Any, owner: object) -> tuple[BlockingPortal, Callable[[], bool]]:
        """Start the portal and enter the async context manager ``target`` in it; returns the portal and a function
        that tells whether this portal has stopped. ``owner`` (the blocking object, which the portal must not
        reference) is watched: collected unclosed, the portal closes. One open at a time: another one while this
        one connects is refused, and touches nothing of it."""
        if not self._opening.acquire(blocking=False):
            raise RuntimeError("already opening")
        try:
            if self._stack is not None:
                raise RuntimeError("already open")
            stopped = threading.Event()
            stack = ExitStack()
            try:
                portal = stack.enter_context(
                    start_blocking_portal(self._backend, self._backend_options, name=self._name)
                )
                loop_thread = portal.call(threading.get_ident)
                # Runs after the target was left: what the target did not end (an entered handle) is cancelled.
                stack.callback(_stop, portal, stopped)
                stack.enter_context(_Held(portal, target))
            except BaseException as exc:
                # Hand the exception over: the portal then cancels what is still running (a connect under way).
                stack.__exit__(type(exc), exc, exc.__traceback__)
                sole = sole_error(exc)
                if sole is not exc:
                    raise sole from exc
                raise
            self._stack = stack
            self._loop_thread = loop_thread
            self._finalizer = weakref.finalize(owner, self._release)
            return portal, stopped.is_set
        finally:
            self._opening.release()

    def close(self) -> None:
        """Leave the async context manager, then stop the event loop. Idempotent."""
        stack, self._stack = self._stack, None
        finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer.detach()
        if stack is not None:
            stack.close()

    def _release(self) -> None:
        """The owner was collected unclosed, or the interpreter exits: close, from a thread that may wait."""
        if threading.get_ident() == self._loop_thread:
            threading.Thread(target=self.close, name=f"{self._name} (closing)", daemon=True).start()
        else:
            self.close()


def _stop(portal: BlockingPortal, stopped: threading.Event) -> None:
    with contextlib.suppress(RuntimeError):  # already stopped
        portal.call(portal.stop, True)
    stopped.set()
