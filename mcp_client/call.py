"""The ``Call`` handle: one tool call that a host can watch, cancel from elsewhere, await, or move to the background.

The request runs as a task of the client's task group, started when the ``async with`` block is entered. Leaving
the block before the call ended cancels it (on the wire too) and waits until it has ended, so nothing outlives the
block, unless the host called :meth:`Call.detach`: then the call carries on under its own policy (its maximum
still holds) until it ends or the client closes, and :meth:`Call.result` can be awaited from anywhere later. That
is how a host backgrounds a slow call instead of killing it (see ``TimeoutPolicy.notify_after``).

A tool the server runs as a task is the same call: :attr:`Call.task_id` names the task once the server made one,
:meth:`Call.cancel` sends ``tasks/cancel``, and a detached call leaves its task running on the server (also when
the client closes) so a host can pick it up later with ``client.task_result(task_id)``.

Progress is offered to an iterator (``call.progress()``) and, when given, to a callback; each sees the updates in
order, latest-wins when slow.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any, Generic, TypeVar

import anyio
import anyio.abc

from mcp_client.errors import MCPClientError, RequestCancelled, SessionExpired
from mcp_client.policy import Progress, TimeoutPolicy
from mcp_client.policy.retry import RetryBudget, RetryPolicy
from mcp_client.progress import CallbackPump, FanOut, ProgressCallback, ProgressSink, ProgressStream
from mcp_client.session import RequestControl, Session
from mcp_client.tasks.driver import TaskControl
from mcp_client.transports.base import JSONObject

__all__ = ["Call"]

ResultT = TypeVar("ResultT")

Continuation = Callable[[JSONObject, float, RequestControl], Awaitable[JSONObject]]
"""What follows the first answer, given the answer, the call's start and its control (a task is polled to its
end); returns the final result object."""


class Call(Generic[ResultT]):
    """A call in flight. Create it with :meth:`Client.tool_call` and use it with ``async with``."""

    def __init__(
        self,
        session: Session,
        task_group: anyio.abc.TaskGroup,
        method: str,
        params: JSONObject,
        *,
        policy: TimeoutPolicy,
        parse: Callable[[JSONObject], ResultT],
        on_progress: ProgressCallback | None = None,
        progress_interval: float | None = None,
        retry: RetryPolicy | None = None,
        idempotent: bool = False,
        budget: RetryBudget | None = None,
        max_rounds: int = 10,
        headers: dict[str, str] | None = None,
        renew_session: Callable[[], Awaitable[None]] | None = None,
        prepare: Callable[[JSONObject], Awaitable[None]] | None = None,
        continuation: Continuation | None = None,
        task: TaskControl | None = None,
    ) -> None:
        self.method = method
        self.policy = policy
        self._session = session
        self._client_tasks = task_group
        self._params = params
        self._parse = parse
        self._on_progress = on_progress
        self._options: dict[str, Any] = {
            "retry": retry,
            "idempotent": idempotent,
            "budget": budget,
            "max_rounds": max_rounds,
            "headers": headers,
        }
        self._renew_session = renew_session
        self._prepare = prepare
        self._continuation = continuation
        self._task = task
        self._control = RequestControl()
        self._stream = ProgressStream(progress_interval)
        self._callback_stream = ProgressStream(progress_interval) if on_progress is not None else None
        self._done = anyio.Event()
        self._raw: JSONObject | None = None
        self._error: MCPClientError | None = None
        self._started = False
        self._detached = False
        self._pump: CallbackPump | None = None

    async def __aenter__(self) -> Call[ResultT]:
        self.start()
        return self

    def start(self) -> None:
        """Start the call (``async with`` does this). It runs in the client's task group from now on."""
        if self._started:
            raise RuntimeError("a Call can be started only once")
        self._started = True
        sink: ProgressSink = self._stream
        if self._callback_stream is not None and self._on_progress is not None:
            sink = FanOut(self._stream, self._callback_stream)
            self._pump = CallbackPump(self._callback_stream, self._on_progress)
            self._client_tasks.start_soon(self._pump.run)
        self._client_tasks.start_soon(self._run, sink)

    async def _run(self, sink: ProgressSink) -> None:
        maximum = self.policy.maximum
        hard_deadline = min(
            anyio.current_time() + maximum if maximum is not None else float("inf"),
            anyio.current_effective_deadline(),
        )
        started_at = self._session.now()
        try:
            if self._prepare is not None:
                await self._prepare(self._params)
            try:
                raw = await self._request(sink, started_at)
            except SessionExpired:
                if self._renew_session is None:
                    raise
                await self._renew_session()  # the server never saw the request: a new session, then once more
                raw = await self._request(sink, started_at)
            if self._continuation is not None:
                raw = await self._continuation(raw, started_at, self._control)
            self._raw = raw
        except MCPClientError as exc:
            self._error = exc
        except anyio.get_cancelled_exc_class():
            self._error = RequestCancelled(f"{self.method} was cancelled: the client closed", reason="client closed")
            raise
        finally:
            if self._pump is not None:
                self._pump.finish(succeeded=self._error is None, deadline=hard_deadline)
            self._done.set()

    async def _request(self, sink: ProgressSink, started_at: float) -> JSONObject:
        return await self._session.request(
            self.method,
            self._params,
            policy=self.policy,
            sink=sink,
            control=self._control,
            started_at=started_at,
            **self._options,
        )

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
        if self._error is not None:
            raise self._error
        assert self._raw is not None
        return self._parse(self._raw)
