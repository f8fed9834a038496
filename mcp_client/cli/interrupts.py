"""The CLI's event log (the client's ``on_event`` hook) and Ctrl-C handling, in a task through anyio's signal
receiver."""

from __future__ import annotations

import collections
import contextlib
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import anyio.abc

from mcp_client import (
    Event,
    ProtocolViolation,
    ServerStderr,
)
from mcp_client.cli.outcome import EXIT_INTERRUPTED

__all__ = ["EventLog", "Interrupts", "run_interruptible"]


_NOT_JSON_KEPT = 3


class EventLog:
    """The client's ``on_event`` hook: keeps events (when asked), the server's last stderr lines, and the lines it
    wrote to stdout that were not JSON-RPC messages (a banner, a log line)."""

    def __init__(self, *, keep: Callable[[Event], bool] | None = None, stderr_lines: int = 20) -> None:
        self.events: list[Event] = []
        """The events kept: all of them, or those ``keep`` accepts."""
        self.stderr: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self.not_json: list[str] = []
        """The first few lines of the server's stdout that were not JSON-RPC messages."""
        self.not_json_count = 0
        """How many such lines there were."""
        self._keep = keep
        self._waiters: list[_Waiter] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, ServerStderr):
            self.stderr.append(event.line)
        elif isinstance(event, ProtocolViolation) and isinstance(event.raw, bytes):
            self.not_json_count += 1
            if len(self.not_json) < _NOT_JSON_KEPT:
                self.not_json.append(event.raw.decode(errors="replace").strip()[:200])
        if self._keep is None or self._keep(event):
            self.events.append(event)
        for waiter in self._waiters:
            if waiter.found is None and waiter.predicate(event):
                waiter.found = event
                waiter.flag.set()

    def mark(self) -> int:
        """A position in the log, for :meth:`since`."""
        return len(self.events)

    def since(self, mark: int) -> list[Event]:
        """The events logged after ``mark``."""
        return self.events[mark:]

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float) -> Event | None:
        """The first kept event matching ``predicate``, or the next one to come within ``timeout`` seconds."""
        kept = next((event for event in self.events if predicate(event)), None)
        if kept is not None:
            return kept
        waiter = _Waiter(predicate, anyio.Event())
        self._waiters.append(waiter)
        try:
            with anyio.move_on_after(timeout):
                await waiter.flag.wait()
        finally:
            self._waiters.remove(waiter)
        return waiter.found


@dataclass
class _Waiter:
    predicate: Callable[[Event], bool]
    flag: anyio.Event
    found: Event | None = None


class Interrupts:
    """Ctrl-C, handled in a task through anyio's signal receiver (so cancellation stays structured).

    While :attr:`target` is set, the first Ctrl-C calls it (a command sets it to cancel its running call);
    otherwise, or on a second Ctrl-C, the command's whole :attr:`scope` is cancelled.
    """

    def __init__(self) -> None:
        self.scope: anyio.CancelScope | None = None
        self.target: Callable[[], None] | None = None
        self.pressed = 0
        self.aborted = False
        """Set when Ctrl-C cancelled the whole command."""

    async def watch(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with contextlib.ExitStack() as stack:
            try:
                signals = stack.enter_context(anyio.open_signal_receiver(signal.SIGINT))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                task_status.started()
                await anyio.sleep_forever()
                return
            task_status.started()
            async for _ in signals:
                self.pressed += 1
                target, self.target = self.target, None
                if target is not None:
                    target()
                elif self.scope is not None:
                    self.aborted = True
                    self.scope.cancel()


async def run_interruptible(body: Callable[[Interrupts], Awaitable[int]], interrupts: Interrupts) -> int:
    """Run ``await body(interrupts)`` with Ctrl-C watched; its exit code, or 130 if Ctrl-C stopped it."""
    code = EXIT_INTERRUPTED
    async with anyio.create_task_group() as task_group:
        await task_group.start(interrupts.watch)
        interrupts.scope = anyio.CancelScope()
        try:
            with interrupts.scope:
                code = await body(interrupts)
        finally:
            task_group.cancel_scope.cancel()
    return code
