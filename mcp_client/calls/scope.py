"""The scope of one call: its start and maximum, and the one way a step done for the call takes its time.

A call is more than its request. Before (or around) it the client may have to learn what the call needs: the
2025-11-25 task-support listing, the listing again after a header mismatch (``-32020``), a session renewal, a slot
when the client limits its calls in flight. Each of these is done *for the call*, so each ends by the call's one
maximum, counted from the caller's call, whatever policy the step's own requests resolve to (the client default, a
listing's rule, the connect budget of a renewal).

:class:`CallScope` is made once, where the call starts (``call_tool``, the handle's run), with the policy the call
resolved to and its start; the runner counts the request's maximum from the same start
(:attr:`CallScope.started_at`). A step goes through :meth:`CallScope.step`, which runs it in a cancel scope at the
call's maximum: a step that outlives it ends there with :class:`~mcp_client.MaxTimeout`, and since nothing of the
call itself was sent yet, ``may_have_run`` is ``False`` on every error a step raises (the listing may have been
answered; the tool was not called). The steps inside the runner (the slot, a renewal the request meets) read the
runner's :class:`~mcp_client.policy.Deadline` of the same start and policy.

The caller's own enclosing deadline is left to the caller's cancel scope, the anyio way. May touch the policy core
and the errors; nothing else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from mcp_client.errors import MaxTimeout, MCPClientError
from mcp_client.policy import Deadline, TimeoutPolicy

__all__ = ["CallScope"]

T = TypeVar("T")


class CallScope:
    """The bound of everything done for one call (see the module documentation)."""

    __slots__ = ("_clock", "deadline", "method")

    def __init__(self, method: str, policy: TimeoutPolicy, *, started_at: float, clock: Callable[[], float]) -> None:
        self.method = method
        self._clock = clock
        self.deadline = Deadline(policy, started_at=min(started_at, clock()))
        """The call's clocks as its steps read them (the runner keeps its own, of the same start and policy)."""

    @property
    def started_at(self) -> float:
        """When the caller called: the call's maximum counts from here, for its steps and its request alike."""
        return self.deadline.started_at

    def use(self, policy: TimeoutPolicy) -> None:
        """The call resolved its policy again (its tool's annotations were learnt meanwhile): later steps, and the
        request, run under ``policy``, still counted from the same start."""
        self.deadline.policy = policy

    async def step(self, what: str, step: Callable[[], Awaitable[T]]) -> T:
        """Run ``step`` (something done for the call before its request: ``what`` says what, for the error) inside
        the call's maximum; return what it returned.

        Raises:
            MaxTimeout: The call's maximum passed during the step (the call was never sent).
            MCPClientError: What the step raised, with ``may_have_run`` False (the call was never sent).
        """
        limit = self.deadline.policy.maximum
        with anyio.CancelScope(deadline=self.deadline.maximum_at(self._clock())) as scope:
            try:
                return await step()
            except MCPClientError as exc:
                exc.may_have_run = False  # (a step's own request may have been answered; the call was not sent)
                raise
        assert scope.cancelled_caught  # (what else leaves the block without returning or raising)
        assert limit is not None  # (no maximum: no deadline, nothing to cancel us)
        error = MaxTimeout(
            f"{self.method}: the {limit:g} s maximum passed while {what}; it was never sent", timeout=limit
        )
        error.may_have_run = False
        raise error.with_context(method=self.method, elapsed=self.deadline.elapsed(self._clock()))
