"""A limit of calls in flight to one server: slots taken in order of arrival, waited for inside the call's maximum.

A host that hands a slow or rate-limited server 200 calls at once gets 200 calls the server serves badly.
``Client(max_in_flight=N)`` gives the server at most N calls at a time; the others wait here, first come first
served, before anything of theirs is written. The rules:

* The wait counts against the call's one maximum (its :class:`~mcp_client.policy.Deadline` was made at the
  caller's call); the idle clock starts only when the request is written, as always.
* A call whose maximum passes while it waits raises :class:`~mcp_client.MaxTimeout` with no request id: it was
  never sent, so ``may_have_run`` says no and it is safe to try again. The caller's own deadline cancels a waiter
  the anyio way, and a cancel through the call's control ends it with :class:`~mcp_client.RequestCancelled`.
* A waiter that leaves (cancelled, timed out) gives its place back at once; a slot that was just handed to a
  waiter as it left goes on to the next one. A slot is handed over on release, never taken by a newcomer while
  others wait (FIFO, no barging).
* Which requests count is data (:data:`UNCOUNTED_METHODS`): the handshake, pings, the requests that keep an
  admitted call or a subscription alive (task polls, ``tasks/cancel``, listens) never wait for a slot.

A call holds its slot for its whole run (retries, input rounds, a session renewal), and gives it back when its
request has been answered: a call that became a task leaves its slot when the task is created (its polls count as
none). A call that must be sent again after that (its process died in the task phase and it moves to the next one)
takes a slot again at the head of the line, before every call that arrived after it: it keeps its place.

A call made by a handler the client runs for a call (an elicitation, sampling or roots handler, an async progress
callback: see :func:`for_a_call`) takes no slot and waits for none: it is work the admitted call is waiting on, so
making it wait behind that call would deadlock the two until the first one's maximum. That holds while the handler
runs (in the tasks it starts too); a task it started that runs on after it returned is the host's own work again, and
its calls take slots as every call does (else a handler could start any number of calls past the limit).

May touch the in-flight records, the policy core's ``Deadline``, the errors and events, the session (its clock
and events) and the backend's waiter; never a transport.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

import anyio

from mcp_client._backends.auto import current_backend
from mcp_client._backends.base import Waiter
from mcp_client.errors import MaxTimeout, MCPClientError, RequestCancelled
from mcp_client.events import RequestFinished, SlotWaited
from mcp_client.policy import Deadline
from mcp_client.session.inflight import CallState, RequestControl, WireRequest
from mcp_client.session.session import Session

__all__ = ["UNCOUNTED_METHODS", "InFlightLimit", "Held", "check_max_in_flight", "for_a_call"]

P = ParamSpec("P")
R = TypeVar("R")


class _HandlerRun:
    """One run of a handler of a call: running until the handler returned or raised."""

    __slots__ = ("running",)

    def __init__(self) -> None:
        self.running = True


_FOR_A_CALL: ContextVar[_HandlerRun | None] = ContextVar("mcp_client_for_a_call", default=None)
"""The run of the handler of a call this code runs in (the tasks it starts inherit it): while that run lasts, its
calls take no slot. A task it started that outlives it sees the run ended, and its calls count again."""


def for_a_call(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """``handler`` (something the client runs for a call: an input handler, an async progress callback) marked so
    that the calls it makes while it runs take no slot and wait for none (see the module documentation)."""

    async def handling(*args: P.args, **kwargs: P.kwargs) -> R:
        run = _HandlerRun()
        token = _FOR_A_CALL.set(run)
        try:
            return await handler(*args, **kwargs)
        finally:
            run.running = False  # (a task it started and left running carries this run: it is over)
            _FOR_A_CALL.reset(token)

    return handling


def _in_a_handler() -> bool:
    run = _FOR_A_CALL.get()
    return run is not None and run.running


UNCOUNTED_METHODS: frozenset[str] = frozenset(
    {
        # the handshake (and its renewal)
        "initialize",
        "server/discover",
        # liveness
        "ping",
        # what keeps a call that was admitted alive: its task's polls, answers and cancellation
        "tasks/get",
        "tasks/result",
        "tasks/update",
        "tasks/cancel",
        # what keeps a subscription alive (2026-07-28 listens; 2025-11-25 subscribe/unsubscribe)
        "subscriptions/listen",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)
"""Methods that never wait for a slot and never hold one. Every other request the host makes counts."""


def check_max_in_flight(value: object, *, where: str = "max_in_flight") -> int | None:
    """``value`` as a limit of calls in flight: ``None`` (no limit) or an integer of at least 1, else a clear error.

    Raises:
        TypeError: not an integer (booleans included) or None.
        ValueError: an integer below 1.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where} must be an integer of at least 1 or None, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{where} must be at least 1, got {value!r}")
    return value


class _Turn:
    """One waiter's place in the line."""

    __slots__ = ("granted", "waiter")

    def __init__(self, waiter: Waiter) -> None:
        self.waiter = waiter
        self.granted = False


class InFlightLimit:
    """At most :attr:`limit` counted calls in flight at once; the rest wait in order of arrival.

    One per client (a supervised server's restarts and session renewals share it). The fast path, a free slot and
    nobody waiting, is a comparison and an increment: :meth:`try_enter`. Only a call that must wait goes through
    :meth:`wait_for_turn`, which needs the event loop.
    """

    __slots__ = ("_in_flight", "_line", "_new_waiter", "_next_turn", "limit")

    def __init__(self, limit: int) -> None:
        checked = check_max_in_flight(limit)
        if checked is None:
            raise TypeError("an InFlightLimit needs a limit (for none, give the client max_in_flight=None)")
        self.limit: int = checked
        """The most counted calls in flight at once."""
        self._in_flight = 0
        self._line: OrderedDict[int, _Turn] = OrderedDict()  # (removal in O(1), wherever the waiter stood)
        self._next_turn = 0
        self._new_waiter: Callable[[], Waiter] | None = None  # the backend's, looked up at the first wait

    @property
    def in_flight(self) -> int:
        """Counted calls holding a slot now."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        return len(self._line)

    @staticmethod
    def counts(method: str) -> bool:
        """Whether a request of ``method`` takes a slot (see :data:`UNCOUNTED_METHODS`); never one made by a
        handler of a call (:func:`for_a_call`)."""
        return method not in UNCOUNTED_METHODS and not _in_a_handler()

    def try_enter(self, *, first: bool = False) -> bool:
        """Take a slot now if one is free and nobody waits before us (``first``: whoever waits)."""
        if self._in_flight < self.limit and (first or not self._line):
            self._in_flight += 1
            return True
        return False

    def leave(self) -> None:
        """Give a slot back: to the first waiter in line, if any (it is handed over, not freed)."""
        if self._line:
            _, turn = self._line.popitem(last=False)
            turn.granted = True
            turn.waiter.set()
        else:
            self._in_flight -= 1

    async def wait_for_turn(
        self,
        method: str,
        deadline: Deadline,
        control: RequestControl | None,
        session: Session,
        *,
        first: bool = False,
    ) -> None:
        """Wait in line for a slot, until the call's maximum; return holding it, or raise having given it back.
        ``first``: at the head of the line (a call that held a slot already and must be sent again keeps its place).

        Raises:
            MaxTimeout: the maximum passed first (nothing was sent).
            RequestCancelled: ``control`` cancelled the call first (nothing was sent).
        """
        if self._new_waiter is None:
            self._new_waiter = current_backend().new_waiter
        waiter = self._new_waiter()
        turn = _Turn(waiter)
        number = self._next_turn
        self._next_turn += 1
        self._line[number] = turn
        if first:
            self._line.move_to_end(number, last=False)
        since = session.clock()
        waiting_call = CallState(method, deadline, None)
        # A cancel through the control settles this placeholder, which wakes the wait at once (as a task's poll).
        waiting_call.current = WireRequest(0, None, waiting_call, waiter)
        if control is not None:
            control.attach(waiting_call)
        error: MCPClientError | None = None
        cancelled = False
        try:
            while not turn.granted:
                now = session.clock()
                if waiting_call.cancel_reason is not None:
                    reason = waiting_call.cancel_reason
                    error = RequestCancelled(
                        f"{method} was cancelled while it waited for a slot: {reason}", reason=reason
                    )
                    break
                maximum_at = deadline.maximum_at(now)
                if now >= maximum_at:
                    limit = deadline.policy.maximum or deadline.elapsed(now)
                    error = MaxTimeout(
                        f"{method}: the {limit:g} s maximum passed while the call waited for one of the {self.limit} "
                        "slots of calls in flight (max_in_flight); it was never sent",
                        timeout=limit,
                    )
                    break
                await waiter.wait(maximum_at)  # (the caller's own deadline cancels this wait the anyio way)
        except anyio.get_cancelled_exc_class():
            cancelled = True
            raise
        finally:
            waiting_call.current = None
            admitted = turn.granted and error is None and not cancelled
            if not turn.granted:
                del self._line[number]  # our place goes back at once
            elif not admitted:
                self.leave()  # handed a slot as we gave up: it goes on to the next in line
            now = session.clock()
            if error is not None:
                error.with_context(method=method, elapsed=deadline.elapsed(now))
            if session.observed:
                session.emit(SlotWaited(method, since, now - since, admitted, self.limit))
                if not admitted:  # the call ends here, never sent, and reports its end as every call does
                    session.emit(RequestFinished(0, method, deadline.elapsed(now), error, cancelled))
        if error is not None:
            raise error


class Held:
    """The slot one call holds, if any: given back once, when its request was answered (or the call ended)."""

    __slots__ = ("limit",)

    def __init__(self, limit: InFlightLimit | None) -> None:
        self.limit = limit

    def leave(self) -> None:
        """Give the slot back (nothing if it was given back already, or none was taken)."""
        limit, self.limit = self.limit, None
        if limit is not None:
            limit.leave()
