"""The ``Call`` handle: one tool call that a host can watch, cancel from elsewhere, await, or move to the background.

The request runs as a task of the client's task group, started when the ``async with`` block is entered. Leaving
the block before the call ended cancels it (on the wire too) and waits until it has ended, so nothing outlives the
block, unless the host called :meth:`Call.detach`: then the call carries on under its own policy (its maximum
still holds) until it ends or the client closes, and :meth:`Call.result` can be awaited from anywhere later. That
is how a host backgrounds a slow call instead of killing it (see ``TimeoutPolicy.notify_after``).

A tool the server runs as a task is the same call: :attr:`Call.task_id` names the task once the server made one,
:meth:`Call.cancel` sends ``tasks/cancel``, and a detached call leaves its task running on the server (also when
the client closes) so a host can pick it up later with ``client.task_result(task_id)``; :meth:`Call.handoff` gives
a serialisable :class:`~mcp_client.TaskReference` for ``client.resume(ref)`` in another process.

Progress is offered to an iterator (``call.progress()``) and, when given, to a callback; each sees the updates in
order, latest-wins when slow.

The handle only starts, cancels, detaches and exposes the call: it runs the same path as ``Client.call_tool``
(its life, task phase included, run by the client's :class:`~mcp_client.calls.CallRunner`), so its errors name
the tool and say whether it may have run, as ``call_tool``'s do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Generic, TypeAlias, TypeVar

import anyio
import anyio.abc

from mcp_client._typed import sole_error
from mcp_client.calls import CallRunner
from mcp_client.calls.progress import ProgressSink, ProgressStream
from mcp_client.calls.tasks import TaskControl
from mcp_client.client.task_reference import TaskReference
from mcp_client.errors import MCPClientError, RequestCancelled
from mcp_client.policy import Progress, TimeoutPolicy
from mcp_client.protocol.tasks import Task
from mcp_client.session.inflight import RequestControl

__all__ = ["Call", "CallBody"]

ResultT = TypeVar("ResultT")

CallBody: TypeAlias = Callable[[float, ProgressSink, RequestControl], Awaitable[ResultT]]
"""What a handle runs: given the call's start (the session's clock), the handle's progress stream and its control,
the call to its result: for a tool, the same path ``Client.call_tool`` takes."""


class Call(Generic[ResultT]):
    """A call in flight. Create it with :meth:`Client.tool_call` and use it with ``async with``."""

    def __init__(
        self,
        call_runner: CallRunner,
        task_group: anyio.abc.TaskGroup,
        method: str,
        body: CallBody[ResultT],
        *,
        policy: TimeoutPolicy,
        progress_interval: float | None = None,
        task: TaskControl | None = None,
        endpoint: str | None = None,
        tool: str | None = None,
    ) -> None:
        self.method = method
        self.policy = policy
        self._call_runner = call_runner
        self._client_tasks = task_group
        self._body = body
        self._task = task
        self._control = RequestControl()
        self._stream = ProgressStream(progress_interval)
        self._done = anyio.Event()
        self._result: ResultT | None = None
        self._error: MCPClientError | None = None
        self._started = False
        self._detached = False
        self._endpoint = endpoint
        self._tool = tool
        self._reference: TaskReference | None = None
        self._answered = False
        self._handed: anyio.Event | None = None  # made by the first handoff() that has to wait
        if task is not None:
            task.on_answer = self._on_answer

    async def __aenter__(self) -> Call[ResultT]:
        self.start()
        return self

    def start(self) -> None:
        """Start the call (``async with`` does this). It runs in the client's task group from now on."""
        if self._started:
            raise RuntimeError("a Call can be started only once")
        self._started = True
        self._client_tasks.start_soon(self._run, self._call_runner.session.clock())

    async def _run(self, started_at: float) -> None:
        try:
            self._result = await self._body(started_at, self._stream, self._control)
        except Exception as exc:  # (a group around the call's one typed failure is that failure: the call's outcome)
            sole = sole_error(exc)
            if not isinstance(sole, MCPClientError):
                raise
            self._error = sole
        except anyio.get_cancelled_exc_class():
            self._error = RequestCancelled(f"{self.method} was cancelled: the client closed", reason="client closed")
            raise
        finally:
            if not self._stream.closed:  # (an error before the request, or after its end: the stream ends too)
                self._stream.close(drain=self._error is None)
            self._hand_off()
            self._done.set()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        if self._detached or self._done.is_set():
            return None
        self._control.cancel("the host stopped waiting for the call")
        with anyio.CancelScope(shield=True):
            await self._done.wait()  # prompt: a cancelled call ends at once, its wire cancel goes out in the background
        return None

    def detach(self) -> Call[ResultT]:
        """Let the call outlive its ``async with`` block: it runs on (its maximum still holds) until it ends or the
        client closes. Await :meth:`result` later, from any task. Returns the call.

        A task-backed call's task is left running on the server when the call stops here (its maximum, the client
        closing): resume it by :attr:`task_id` with ``client.task_result``. Only :meth:`cancel` cancels it."""
        self._detached = True
        if self._task is not None:
            self._task.leave_running = True
        return self

    @property
    def detached(self) -> bool:
        """True once :meth:`detach` was called."""
        return self._detached

    @property
    def done(self) -> bool:
        """True once the call ended, with a result or an error."""
        return self._done.is_set()

    @property
    def request_ids(self) -> tuple[int | str, ...]:
        """The JSON-RPC ids this call has used so far, one per attempt or input round (empty before it is sent)."""
        return self._control.request_ids

    @property
    def task_id(self) -> str | None:
        """The server's task id when it runs this call as a task (None until it made one, or if it did not)."""
        return self._task.task_id if self._task is not None else None

    async def handoff(self) -> TaskReference | None:
        """Wait until the server answered the call: the :class:`~mcp_client.TaskReference` of the task it made (keep
        it anywhere durable; ``client.resume(ref)`` awaits the task from any process), or None when the call became
        no task (an ordinary answer, or it failed first). Does not detach the call."""
        if not self._answered:
            if self._handed is None:
                self._handed = anyio.Event()
            await self._handed.wait()
        return self._reference

    def _on_answer(self, task: Task | None) -> None:
        """The server's first answer to the call arrived: a task it made, or None for an ordinary result."""
        era = self._call_runner.session.era
        if task is not None and self._endpoint is not None and era is not None:
            self._reference = TaskReference(
                server=self._endpoint, task_id=task.task_id, protocol=era.version, tool=self._tool, ttl=task.ttl
            )
        self._hand_off()

    def _hand_off(self) -> None:
        self._answered = True
        if self._handed is not None:
            self._handed.set()

    def cancel(self, reason: str = "cancelled by the client") -> None:
        """End the call: the server is told (``reason`` goes with it; a task gets ``tasks/cancel``) and
        :meth:`result` raises :class:`~mcp_client.RequestCancelled`. Safe to call from any task, more than once,
        or after the end."""
        if self._task is not None:
            self._task.leave_running = False
        self._control.cancel(reason)

    def stop(self, reason: str) -> None:
        """End the call here the way closing the client does: like :meth:`cancel`, except that a detached call's
        task is left running on the server."""
        self._control.cancel(reason)

    def progress(self) -> AsyncIterator[Progress]:
        """The call's accepted progress updates, in order, ending when the call ends. One consumer only."""
        return aiter(self._stream)

    async def wait(self) -> None:
        """Wait until the call has ended (without raising its error)."""
        await self._done.wait()

    async def result(self) -> ResultT:
        """Wait for the call to end; return its result or raise its typed error."""
        await self._done.wait()
        return self.outcome()

    def outcome(self) -> ResultT:
        """The result of a call that has ended, or its typed error raised; no waiting, so it is read the same after
        the client closed (as ``asyncio.Future.result()``).

        Raises:
            RuntimeError: The call has not ended yet (await :meth:`result` instead).
        """
        if not self._done.is_set():
            raise RuntimeError(f"the {self.method} call has not ended yet: await its result()")
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # (set when no error was)
