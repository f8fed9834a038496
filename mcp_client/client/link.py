"""The one owner of a client's connection: its session, the runner of its calls, the server's identity, renewal.

As h11's ``Connection`` owns its ``_cstate`` and is its only writer, a :class:`Link` alone writes what a
:class:`~mcp_client.Client` knows of its connection:

* the :class:`~mcp_client.calls.CallRunner` of the client's calls, made once, and the session it runs calls on
  (``runner.session``: the link moves it to a new session, nothing else does);
* the :class:`~mcp_client.protocol.negotiate.ServerIdentity` the last handshake gave;
* the renewal of a 2025-11-25 session the server ended: one task of the client's task group, so that the calls
  that met the ended session at once share one new handshake, and a caller that stops waiting (its maximum, its
  own cancel scope) never cuts it off half-way (which left the connection with no session at all).

The client reads through it (``client.session``, ``client.server_info``...) and the runner asks it, as its
:class:`~mcp_client.calls.runner.ConnectionOwner`, whether a dead connection is replaced and when. A plain link
connects once, for the client's life; :class:`~mcp_client.client.supervisor.SupervisedLink` is the kind that
starts a stdio server again when it dies. A link never imports the client: it is handed what it needs (the
transport, a factory of runners, the handshake, the cancel timeout).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

import anyio
import anyio.abc

from mcp_client._log_guard import package_logger
from mcp_client.calls import CallRunner
from mcp_client.calls.runner import ConnectionOwner
from mcp_client.errors import ConnectError, MCPClientError, TransportError
from mcp_client.protocol.negotiate import ServerIdentity
from mcp_client.session.session import Session
from mcp_client.transports.base import Transport

__all__ = ["Link", "NewRunner", "StartSession"]

logger = package_logger("mcp_client")

NewRunner = Callable[[ConnectionOwner], CallRunner]
"""Makes a session (not connected yet) and a runner of the client's calls over it, owned by the given link."""

StartSession = Callable[[CallRunner], Awaitable[ServerIdentity]]
"""Negotiates on a runner's session (bounded by the client's connect timeout) and returns the server's identity."""


class Link:
    """The one owner of a client's connection (see the module documentation): one connection for the client's
    life. Open it with :meth:`open`, from the client's ``__aenter__``."""

    def __init__(
        self, transport: Transport, *, new_runner: NewRunner, start_session: StartSession, cancel_timeout: float
    ) -> None:
        self._transport = transport
        self._new_runner = new_runner
        self._start_session = start_session
        self._cancel_timeout = cancel_timeout
        self.call_runner: CallRunner | None = None
        """The runner of the client's calls (None until the first session serves). Read by the client on every
        call, so a plain attribute: written here alone (:meth:`_serve`)."""
        self._identity: ServerIdentity | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._renewal: anyio.Event | None = None  # set when the renewal under way ended
        self._renewal_error: MCPClientError | None = None

    # -- what the client reads ---------------------------------------------------------------------------------

    @property
    def session(self) -> Session | None:
        """The session calls start on now (None until the first session serves)."""
        return self.call_runner.session if self.call_runner is not None else None

    @property
    def identity(self) -> ServerIdentity | None:
        """What the server said about itself in the last handshake."""
        return self._identity

    # -- the connection ----------------------------------------------------------------------------------------

    async def open(self, task_group: anyio.abc.TaskGroup, stack: AsyncExitStack) -> None:
        """Connect and negotiate; ``stack`` shuts the connection down when it unwinds (the cancellations already
        scheduled first). Raises what connecting or negotiating raised."""
        self._task_group = task_group
        runner = self._new_runner(self)
        session = runner.session
        # Unwinds last, once the connection is shut down: a call still waiting on it (awaited in another task than
        # the client's) fails now, typed, on every transport (stdio's and HTTP's connections say so themselves).
        stack.callback(
            session.on_client_closed, TransportError("the client was closed while the call ran", written=True)
        )
        connection = await stack.enter_async_context(self._transport.connect(session))
        # Unwinds first: let cancellations already scheduled reach the server before it is shut down.
        stack.push_async_callback(session.drain_cancels, self._cancel_timeout)
        session.attach(connection)
        self._serve(runner, await self._start_session(runner))

    def _serve(self, runner: CallRunner, identity: ServerIdentity) -> None:
        """``runner``'s session, negotiated, serves from now on: the client's runner moves to it (the only place
        its session is written after the first)."""
        if self.call_runner is None:
            self.call_runner = runner
        else:
            self.call_runner.session = runner.session
        self._identity = identity

    # -- what the runner asks (ConnectionOwner) ----------------------------------------------------------------

    @property
    def heals(self) -> bool:
        """Whether a connection that died is replaced: never, for a plain link."""
        return False

    async def session_after(self, session: Session) -> Session | None:
        """The session that replaces ``session``: none, for a plain link."""
        return None

    async def renew(self) -> None:
        """Start a new session after the server ended ours; concurrent callers share one renewal. It runs in the
        client's task group (bounded by the connect timeout), so a caller that stops waiting leaves it to finish
        for the others; a failed one raises a copy of its error in each caller."""
        assert self.call_runner is not None, "a session is renewed only after it served"
        assert self._task_group is not None
        done = self._renewal
        if done is None:
            done = self._renewal = self.call_runner.renewal = anyio.Event()
            self._task_group.start_soon(self._renew, self.call_runner, done)
        await done.wait()
        if self._renewal_error is not None:
            raise copy.copy(self._renewal_error)  # (each caller's own: errors are annotated on their way up)

    async def _renew(self, runner: CallRunner, done: anyio.Event) -> None:
        error: MCPClientError | None = ConnectError("the client closed while the session was being renewed")
        try:
            logger.info("the server ended the session; starting a new one")
            self._identity = await self._start_session(runner)
            error = None
        except MCPClientError as exc:
            error = exc
        finally:
            self._renewal_error = error
            self._renewal = runner.renewal = None
            done.set()
