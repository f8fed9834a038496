"""The stdio supervisor: one client whose server process is started again when it dies.

With ``stdio(cmd, args, restart=RestartPolicy(...))`` a :class:`~mcp_client.Client` does not own its connection
directly: a :class:`Supervisor` task in the client's task group does. It connects, negotiates, hands the live
session to the client, and waits. When the process dies, every call in flight on it fails at once with a
:class:`~mcp_client.TransportError` whose ``written`` is honest (``True``: the request had left; ``False``: it
never did), as without a supervisor. Then the supervisor asks the :class:`~mcp_client.policy.restart.RestartLedger`
for a jittered wait, starts the process again, negotiates again, emits a
:class:`~mcp_client.ServerRestarted` event and hands the new session over. Past the policy's cap of restarts per
window it leaves the server down, and calls fail at once.

:meth:`Supervisor.call` runs one call of the client: when its attempt fails with a ``TransportError`` and the
retry rule (:func:`mcp_client.policy.retry.decide`: never written, or an idempotent tool) allows it, it waits for
the next process and sends the call there, all within the call's one maximum.

The supervisor is the client's friend: it builds each process's session and runner with the client's own
``_new_runner``, negotiates with its ``_start_session``, and sets the client's current session, runner (a
:class:`HealingRunner` standing for whichever process serves) and server identity. It builds no request itself.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from mcp_client._types import JSONObject, RequestId
from mcp_client.calls import CallOptions, CallRunner
from mcp_client.calls.progress import ProgressSink
from mcp_client.errors import ConnectError, MCPClientError, TransportError
from mcp_client.events import RetryScheduled, ServerRestarted
from mcp_client.policy import Progress, TimeoutPolicy
from mcp_client.policy.restart import RestartLedger, RestartPolicy
from mcp_client.policy.retry import RetryBudget, RetryPolicy, decide
from mcp_client.session.session import Session

if TYPE_CHECKING:
    from mcp_client.client.client import Client

__all__ = ["HealingRunner", "Supervisor"]

logger = logging.getLogger("mcp_client.supervisor")


class _Watched:
    """The session as the connection's message handler, plus word of the channel's death for the supervisor.

    The session's own methods are copied onto the instance, so routing a message costs no extra call."""

    def __init__(self, session: Session, died: Callable[[TransportError], None]) -> None:
        self.on_message = session.on_message
        self.on_invalid = session.on_invalid
        self.on_request_failed = session.on_request_failed
        self.on_stderr = session.on_stderr
        self.on_batch_begin = session.on_batch_begin
        self.on_batch_end = session.on_batch_end
        self.waiting_on_a_person = session.waiting_on_a_person
        self._session = session
        self._died = died

    def on_closed(self, error: TransportError) -> None:
        self._session.on_closed(error)
        self._died(error)


class Supervisor:
    """Keeps one stdio server running for ``client`` under a :class:`~mcp_client.RestartPolicy`.

    Start it with :meth:`start`, from the client's ``__aenter__``.
    """

    def __init__(self, client: Client, policy: RestartPolicy) -> None:
        self._client = client
        self._transport = client.transport
        self.ledger = RestartLedger(policy)
        """The restarts granted so far (within the policy's window)."""
        self._cancel_timeout = client._cancel_timeout
        self._generation = 0
        self._current: CallRunner | None = None
        self._wake = anyio.Event()  # the process died, or the client closes
        self._next_generation = anyio.Event()  # set (and renewed) each time a new process serves
        self._stopping = False
        self._stopped = anyio.Event()
        self._starting: anyio.CancelScope | None = None
        self.gave_up: TransportError | None = None
        """Set once the cap of restarts was reached: the server stays down, calls fail at once."""

    @classmethod
    async def start(
        cls, client: Client, policy: RestartPolicy, task_group: anyio.abc.TaskGroup, stack: AsyncExitStack
    ) -> Client:
        """Supervise ``client``'s server in ``task_group`` until ``stack`` unwinds; return once the first process
        serves (its failure to start is raised here)."""
        supervisor = cls(client, policy)
        await task_group.start(supervisor.run)
        stack.push_async_callback(supervisor.stop)
        return client

    @property
    def current(self) -> CallRunner:
        """The runner of the process that serves now (or served last)."""
        assert self._current is not None, "no process has served yet"
        return self._current

    @property
    def restarting(self) -> bool:
        """True while a server that dies will be started again (not past the cap, not stopping)."""
        return self.gave_up is None and not self._stopping

    @property
    def generation(self) -> int:
        """How many processes served so far (1 for the first)."""
        return self._generation

    # -- the supervising task -------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until :meth:`stop`. The first start's failure is raised (through ``task_status``, as a
        :class:`~mcp_client.ConnectError`); later ones count as crashes."""
        try:
            previous_pid: int | None = None
            reason: MCPClientError | None = None
            delay = 0.0
            while not self._stopping:
                died_at: float | None = None
                try:
                    with anyio.CancelScope() as self._starting:  # stop() cancels a start still under way
                        died_at, previous_pid, death = await self._serve_one(task_status, previous_pid, reason, delay)
                        reason = death
                except (MCPClientError, OSError) as exc:
                    if self._generation == 0:
                        raise  # the first start: the client's __aenter__ reports it
                    logger.warning("restarting %r failed: %s", self._transport.description, exc)
                    reason = exc if isinstance(exc, MCPClientError) else ConnectError(str(exc))
                if self._stopping:
                    return
                now = anyio.current_time()
                next_delay = self.ledger.next_delay(died_at if died_at is not None else now)
                if next_delay is None:
                    self.gave_up = TransportError(
                        f"server {self._transport.description!r} was restarted {self.ledger.restarts} times within "
                        f"{self.ledger.policy.window:g} s; it is left down",
                        written=False,
                    )
                    logger.error("%s", self.gave_up.message)
                    self._next_generation.set()  # wake waiting calls: no process will come
                    await self._wait_for_stop()
                    return
                delay = next_delay
                with anyio.move_on_after(delay):
                    await self._wait_for_stop()
        finally:
            self._stopped.set()

    async def _serve_one(
        self,
        task_status: anyio.abc.TaskStatus[None],
        previous_pid: int | None,
        reason: MCPClientError | None,
        delay: float,
    ) -> tuple[float | None, int | None, TransportError | None]:
        """Start one process and serve until it dies or the client closes; return when it died, its pid and the
        error its death was."""
        client = self._client
        runner = client._new_runner()
        session = runner.session
        died: list[TransportError] = []

        def on_death(error: TransportError) -> None:
            died.append(error)
            self._wake.set()

        self._wake = anyio.Event()
        async with self._transport.connect(_Watched(session, on_death)) as connection:
            session.attach(connection)
            identity = await client._start_session(runner)
            self._starting = None  # from here on a stop goes through the orderly path below
            self._generation += 1
            self._current = runner
            client._session, client._identity = session, identity
            if client._runner is None:
                client._runner = HealingRunner(self)
            pid = connection.process_id
            ready, self._next_generation = self._next_generation, anyio.Event()
            ready.set()
            if self._generation == 1:
                task_status.started()
            else:
                session.emit(ServerRestarted(self._generation - 1, pid, previous_pid, delay, reason))
                logger.info("server %r is back (pid %s)", self._transport.description, pid)
            if not died:
                await self._wake.wait()
            if self._stopping:
                await session.drain_cancels(self._cancel_timeout)
                return None, pid, None
            died_at = anyio.current_time()
            logger.warning("server %r died: %s", self._transport.description, died[0].message)
        return died_at, pid, died[0]

    async def _wait_for_stop(self) -> None:
        while not self._stopping:
            self._wake = anyio.Event()
            await self._wake.wait()

    async def stop(self) -> None:
        """Shut the current process down (cancellations first, then the stdio ladder) and stop restarting."""
        self._stopping = True
        self._wake.set()
        self._next_generation.set()
        if self._starting is not None and self._generation > 0:
            self._starting.cancel()  # a restart mid-handshake: give it up (the connection still shuts down cleanly)
        with anyio.CancelScope(shield=True):
            await self._stopped.wait()

    # -- calls ----------------------------------------------------------------------------------------------

    async def call(self, method: str, params: JSONObject, options: CallOptions, live: dict[str, Any]) -> JSONObject:
        """Run a call on the current process; after a transport failure that is safe to retry, wait for the next
        process and run it there, all before the call's maximum. ``live`` are :meth:`CallRunner.run`'s keywords."""
        policy: TimeoutPolicy = options.policy
        retry: RetryPolicy | None = options.retry
        budget: RetryBudget | None = self._client.retry_budget
        started_at = live.get("started_at")
        if started_at is None:
            started_at = live["started_at"] = self.current.session.clock()
        hard_deadline = started_at + policy.maximum if policy.maximum is not None else math.inf
        sink: ProgressSink | None = live.get("sink")
        if sink is not None:  # one stream for the whole call: a run on one process must not end it
            live["sink"] = _KeptOpen(sink)
        succeeded = False
        try:
            result = await self._call_on_processes(method, params, options, live, hard_deadline, retry, budget)
            succeeded = True
            return result
        finally:
            if sink is not None:
                sink.close(drain=succeeded)

    async def _call_on_processes(
        self,
        method: str,
        params: JSONObject,
        options: CallOptions,
        live: dict[str, Any],
        hard_deadline: float,
        retry: RetryPolicy | None,
        budget: RetryBudget | None,
    ) -> JSONObject:
        tries = 0
        while True:
            generation = self._generation
            tries += 1
            try:
                return await self.current.run(method, params, options, **live)
            except TransportError as exc:
                if retry is None or self.gave_up is not None:
                    raise
                verdict = decide(
                    exc,
                    policy=retry,
                    attempt=tries,
                    idempotent=options.idempotent,
                    now=anyio.current_time(),
                    hard_deadline=hard_deadline,
                    budget=budget,
                )
                if not verdict.retry or not await self._next_process(generation, hard_deadline):
                    raise
                self.current.session.emit(RetryScheduled(_last_request(exc), tries + 1, 0.0, exc))

    async def session_after(self, session: Session) -> Session | None:
        """Wait until a process other than ``session``'s serves and return its session; None once none will."""
        while True:
            current = self.current.session
            if current is not session:
                return current
            if not self.restarting:
                return None
            await self._next_generation.wait()

    async def _next_process(self, generation: int, hard_deadline: float) -> bool:
        """Wait until a process newer than ``generation`` serves (True), or it will not before the deadline."""
        with anyio.move_on_at(hard_deadline):
            while self._generation == generation and self.gave_up is None and not self._stopping:
                await self._next_generation.wait()
        return self._generation != generation and self.gave_up is None and not self._stopping


class _KeptOpen:
    """A call's progress sink, lent to one run of the call: the run's end does not close it (the call may go on
    on the next process); the supervisor closes it when the call ends."""

    __slots__ = ("_sink",)

    def __init__(self, sink: ProgressSink) -> None:
        self._sink = sink

    def offer(self, update: Progress) -> None:
        self._sink.offer(update)

    def close(self, *, drain: bool) -> None:
        """(The run ended; the call may not have.)"""


def _last_request(error: MCPClientError) -> RequestId:
    ids = error.request_ids
    return ids[-1] if ids else 0


class HealingRunner(CallRunner):
    """The client's runner while it is supervised: each call runs on the runner of the process serving now, and
    a call a crash cut off goes to the next process when that is safe (:meth:`Supervisor.call`)."""

    def __init__(self, supervisor: Supervisor) -> None:  # no super().__init__(): it holds no session of its own
        self._supervisor = supervisor

    @property
    def session(self) -> Session:
        """The session of the process serving now."""
        return self._supervisor.current.session

    @session.setter
    def session(self, session: Session) -> None:
        raise AttributeError("a supervised client's session is the current process's")

    @property
    def heals(self) -> bool:
        """True while the supervisor will start the server again after it dies."""
        return self._supervisor.restarting

    async def session_after(self, session: Session) -> Session | None:
        """The session of the process that replaces ``session``'s, once it serves; None if none will."""
        return await self._supervisor.session_after(session)

    async def run(  # (a coroutine function: the supervisor's call, on any process)
        self, method: str, params: JSONObject, options: CallOptions, **live: Any
    ) -> JSONObject:
        return await self._supervisor.call(method, params, options, live)
