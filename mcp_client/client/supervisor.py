"""The supervised link: a client's connection to a stdio server that is started again when it dies.

With ``stdio(cmd, args, restart=RestartPolicy(...))`` a :class:`~mcp_client.Client`'s connection is owned by a
:class:`SupervisedLink`, the kind of :class:`~mcp_client.client.link.Link` that heals. Its task in the client's
task group connects, negotiates, moves the client's runner to the live session, and waits. When the process dies,
every call in flight on it fails at once with a :class:`~mcp_client.TransportError` whose ``written`` is honest
(``True``: the request had left; ``False``: it never did), as without a supervisor. Then the link asks the
:class:`~mcp_client.policy.restart.RestartLedger` for a jittered wait, starts the process again, negotiates again,
emits a :class:`~mcp_client.ServerRestarted` event and moves the runner to the new session. Past the policy's cap
of restarts per window it leaves the server down, and calls fail at once.

A call never leaves the runner's one retry loop (:meth:`mcp_client.calls.CallRunner._live`): when its attempt
failed because the process died and the retry rule (:func:`mcp_client.policy.retry.decide`: never written, or an
idempotent tool) allows it, the runner asks this link for the next process's session (:meth:`session_after`) and
sends the call there, with a fresh id, within the call's one maximum. The link builds no request itself, and never
imports the client: it is handed a factory of runners, the handshake and the cancel timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack

import anyio
import anyio.abc

from mcp_client._log_guard import package_logger
from mcp_client.client.link import Link, NewRunner, StartSession
from mcp_client.errors import ConnectError, MCPClientError, TransportError
from mcp_client.events import ServerRestarted
from mcp_client.policy.restart import RestartLedger, RestartPolicy
from mcp_client.session.session import Session
from mcp_client.transports.base import Transport

__all__ = ["SupervisedLink"]

logger = package_logger("mcp_client.supervisor")


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


class SupervisedLink(Link):
    """Keeps one stdio server running for a client under a :class:`~mcp_client.RestartPolicy`: the link that
    heals. Open it with :meth:`open`, from the client's ``__aenter__``."""

    def __init__(
        self,
        transport: Transport,
        policy: RestartPolicy,
        *,
        new_runner: NewRunner,
        start_session: StartSession,
        cancel_timeout: float,
    ) -> None:
        super().__init__(transport, new_runner=new_runner, start_session=start_session, cancel_timeout=cancel_timeout)
        self.ledger = RestartLedger(policy)
        """The restarts granted so far (within the policy's window)."""
        self._generation = 0
        self._wake = anyio.Event()  # the process died, or the client closes
        self._next_generation = anyio.Event()  # set (and renewed) each time a new process serves
        self._stopping = False
        self._stopped = anyio.Event()
        self._starting: anyio.CancelScope | None = None
        self.gave_up: TransportError | None = None
        """Set once the cap of restarts was reached: the server stays down, calls fail at once."""

    async def open(self, task_group: anyio.abc.TaskGroup, stack: AsyncExitStack) -> None:
        """Supervise the server in ``task_group`` until ``stack`` unwinds; return once the first process serves
        (its failure to start is raised here)."""
        self._stopped = anyio.Event()  # (a client whose first start failed may be entered again: a new run)
        await task_group.start(self.run)
        stack.push_async_callback(self.stop)

    @property
    def heals(self) -> bool:
        """Whether a connection that died is replaced: while :attr:`restarting`."""
        return self.restarting

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
        # This process's session, negotiated on a runner of its own before the client's runner moves to it (the
        # first process's runner is the client's): no call starts on a session that has not negotiated.
        runner = self._new_runner(self)
        session = runner.session
        died: list[TransportError] = []

        def on_death(error: TransportError) -> None:
            died.append(error)
            self._wake.set()

        self._wake = anyio.Event()
        async with self._transport.connect(_Watched(session, on_death)) as connection:
            session.attach(connection)
            identity = await self._start_session(runner)
            self._starting = None  # from here on a stop goes through the orderly path below
            self._generation += 1
            self._serve(runner, identity)
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

    async def session_after(self, session: Session) -> Session | None:
        """Wait until a process other than ``session``'s serves and return its session; None once none will."""
        while True:
            current = self.session
            if current is not session:
                return current
            if not self.restarting:
                return None
            await self._next_generation.wait()
