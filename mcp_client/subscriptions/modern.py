"""A subscription at 2026-07-28: ``subscriptions/listen``, held open, re-listened after a drop.

One listen is one long-lived request on the session's wire, with no idle timeout and no maximum (a quiet
subscription is not a hung call); only its opening is bounded, by :attr:`ListenPolicy.open_timeout`, until the
server's ``notifications/subscriptions/acknowledged``. What reaches it comes through the
:class:`~mcp_client.subscriptions.router.SubscriptionRouter`, by subscription id.

How a listen ends decides what follows:

* the server's completion result: the subscription ends gracefully, no re-listen;
* the server's ``notifications/cancelled`` for the listen id (its teardown), a broken stream, a server error:
  a drop. The caches the subscription's changes would invalidate are invalidated at once, and after a jittered,
  capped backoff a new listen goes out with a new id; once it is acknowledged they are invalidated again (an
  answer kept during the gap may be stale too) and one change per kind it carries (``after_relisten=True``)
  tells the consumer to refetch, since nothing is replayed;
* the client's own end (leaving ``async with``): the request is cancelled the transport's way (HTTP: the stream
  is closed; stdio: ``notifications/cancelled``).

Touches the session's request API, its event hook and the router; runs in the task group it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from mcp_client._log_guard import package_logger
from mcp_client._typed import sole_error
from mcp_client._types import JSONObject
from mcp_client.calls import CallOptions, CallRunner
from mcp_client.errors import MCPClientError, ProtocolError, ServerError
from mcp_client.events import ProtocolViolation, Relistened
from mcp_client.policy import TimeoutPolicy
from mcp_client.policy.listen import ListenPolicy
from mcp_client.session.inflight import RequestControl
from mcp_client.subscriptions.changes import (
    Change,
    SubscriptionFilter,
    change_from_notification,
    changes_for,
)
from mcp_client.subscriptions.errors import SubscriptionError, SubscriptionLost
from mcp_client.subscriptions.pending import PendingChanges
from mcp_client.subscriptions.router import id_key, router_for

if TYPE_CHECKING:
    from mcp_client.session.session import Session

__all__ = ["ModernSubscription"]

logger = package_logger("mcp_client.subscriptions")

LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_OPEN_ENDED = TimeoutPolicy.unlimited()
_LISTEN_OPTIONS = CallOptions(_OPEN_ENDED, want_progress=False)
"""A listen is not a call: no idle timeout, no maximum. Its opening is bounded by the listen policy instead."""
_FINAL_CODES = frozenset({-32601, -32602, -32021, -32022})
"""Server errors a re-listen cannot heal: no such method, a filter it rejects, a capability or version missing."""


class _TornDown(MCPClientError):
    """The server ended the listen with ``notifications/cancelled``."""


class _Listen:
    """One ``subscriptions/listen`` request (the first or a re-listen), as the router routes to it."""

    unnamed = False

    def __init__(self, owner: ModernSubscription, relisten: bool) -> None:
        self.owner = owner
        self.relisten = relisten
        self.control = RequestControl()
        self.honoured: SubscriptionFilter | None = None
        self.acknowledged_at: float | None = None
        self.settled = anyio.Event()
        """Set on the acknowledgement or at the end of the request, whichever comes first."""
        self.error: MCPClientError | None = None
        self.timed_out = False

    @property
    def request_id(self) -> int | str | None:
        ids = self.control.request_ids
        return ids[-1] if ids else None

    def owns(self, subscription_id: str) -> bool:
        own = self.request_id
        return own is not None and id_key(own) == subscription_id

    def on_notification(self, method: str, params: JSONObject) -> None:
        owner = self.owner
        if method == ACKNOWLEDGED:
            if self.honoured is None:
                self.honoured = owner.asked.honoured(params.get("notifications"))
                self.acknowledged_at = owner.session.clock()
                owner.acknowledged_by(self)
                self.settled.set()
            return
        change = change_from_notification(method, params)
        if self.honoured is None:
            owner.session.emit(
                ProtocolViolation(f"{method} for subscription {self.request_id} before its acknowledgement")
            )
            return
        if change is None:
            logger.debug("ignoring %s on subscription %s", method, self.request_id)
        elif self.honoured.allows(change):
            owner.pending.put(change)
        else:
            owner.session.emit(
                ProtocolViolation(f"{method} on subscription {self.request_id}, which did not ask for it")
            )

    def on_torn_down(self, reason: str | None) -> None:
        request_id = self.request_id
        if request_id is None:
            return
        detail = (
            f"the server tore the subscription down ({reason})" if reason else "the server tore the subscription down"
        )
        # Ends the request as its own failure: nothing is sent back (the server ended it; a cancel would be stray).
        self.owner.session.on_request_failed(request_id, _TornDown(detail, method=LISTEN))

    def on_closed(self, error: MCPClientError) -> None:
        """Nothing to do: the request in flight fails by itself."""


class ModernSubscription:
    """The 2026-07-28 engine of a :class:`~mcp_client.Subscription`; see the module docstring."""

    def __init__(
        self,
        runner: CallRunner,
        task_group: anyio.abc.TaskGroup,
        asked: SubscriptionFilter,
        policy: ListenPolicy,
        pending: PendingChanges,
        invalidate: Callable[[Change], None] | None,
    ) -> None:
        self._runner = runner
        self.asked = asked
        self.pending = pending
        self.acknowledged: SubscriptionFilter | None = None
        self.relistens = 0
        """How many times the subscription was opened again after a drop."""
        self.request_id: int | str | None = None
        """The id of the listen that is open (the subscription id on the wire)."""
        self._task_group = task_group
        self._policy = policy
        self._invalidate = invalidate
        self._scope = anyio.CancelScope()
        self._first = anyio.Event()
        self._done = anyio.Event()
        self._open_error: MCPClientError | None = None

    @property
    def session(self) -> Session:
        """The session the subscription listens on now: after a supervised stdio server's restart, the new one."""
        return self._runner.session

    # -- the consumer's side -----------------------------------------------------------------------------------

    async def open(self) -> None:
        """Send the first listen and return once the server acknowledged it (or raise why it did not)."""
        self._task_group.start_soon(self._run, name=f"{LISTEN} {self.asked}")
        try:
            await self._first.wait()
        except BaseException:
            await self.close()
            raise
        if self._open_error is not None:
            await self.close()
            raise self._open_error

    async def close(self) -> None:
        """End the subscription from our side and wait (shielded) until the request is off the wire."""
        self._scope.cancel()
        with anyio.CancelScope(shield=True):
            await self._done.wait()

    def acknowledged_by(self, listen: _Listen) -> None:
        assert listen.honoured is not None
        self.acknowledged = listen.honoured
        self.request_id = listen.request_id
        if listen.relisten:
            for change in changes_for(listen.honoured):  # nothing is replayed: everything may have changed
                self._invalidated(change)  # also what was kept during the gap, when no change could reach us
                self.pending.put(change)
        self._first.set()

    # -- the background task -------------------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            with self._scope:
                await self._keep_listening()
        except Exception as exc:  # a defect must not take the client's task group down; the consumer hears of it
            logger.exception("the subscription failed")
            self.pending.finish(SubscriptionLost(f"the subscription failed: {exc}", method=LISTEN))
        finally:
            self.pending.finish(SubscriptionLost("the client closed the subscription's connection", method=LISTEN))
            self._first.set()
            self._done.set()

    async def _keep_listening(self) -> None:
        streak = 0
        relisten = False
        while True:
            listen = await self._listen_once(relisten)
            error = listen.error
            if listen.honoured is None and not relisten:
                self._open_error = error or SubscriptionError(
                    "the server ended the subscription before acknowledging it", method=LISTEN
                )
                return
            if error is None:
                logger.debug("the server completed subscription %s", listen.request_id)
                self.pending.finish()
                return
            if listen.honoured is not None:
                for change in changes_for(listen.honoured):
                    self._invalidated(change)
            lived = self.session.clock() - listen.acknowledged_at if listen.acknowledged_at is not None else 0.0
            streak = 1 if lived >= self._policy.healthy_after else streak + 1
            lost = self._lost(error, streak)
            if lost is not None:
                lost.__cause__ = error
                self.pending.finish(lost)
                return
            delay = self._policy.backoff(streak)
            logger.info("subscription %s dropped (%s); listening again in %.2f s", listen.request_id, error, delay)
            self.session.emit(Relistened(listen.request_id, delay, streak, error))
            dead = self.session
            if dead.closed_error is not None:  # a supervised server's process died: listen on the next one
                await self._runner.session_after(dead)
            await anyio.sleep(delay)
            relisten = True
            self.relistens += 1

    def _lost(self, error: MCPClientError, streak: int) -> SubscriptionLost | None:
        """Why the subscription cannot be healed, or None to re-listen."""
        if self.session.closed_error is not None and not self._runner.heals:
            return SubscriptionLost(f"the connection is gone: {self.session.closed_error.message}", method=LISTEN)
        if isinstance(error, ServerError) and error.code in _FINAL_CODES:
            return SubscriptionLost(f"the server refused to listen again: {error}", method=LISTEN)
        if self._policy.gives_up(streak):
            return SubscriptionLost(f"gave up after {streak} drops in a row; the last: {error}", method=LISTEN)
        return None

    async def _listen_once(self, relisten: bool) -> _Listen:
        """One listen request, from its write to its end; returns it with how it ended."""
        listen = _Listen(self, relisten)
        params: JSONObject = {"notifications": self.asked.to_wire()}
        router = router_for(self.session)  # each listen on the session of its time (a restart brings a new one)
        router.add(listen)
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._request, listen, params)
                with anyio.move_on_after(self._policy.open_timeout):
                    await listen.settled.wait()
                if not listen.settled.is_set():
                    listen.timed_out = True
                    listen.control.cancel(f"not acknowledged within {self._policy.open_timeout:g} s")
        finally:
            router.remove(listen)
        if listen.timed_out:
            listen.error = SubscriptionError(
                f"the server did not acknowledge {LISTEN} within {self._policy.open_timeout:g} s",
                method=LISTEN,
                request_ids=listen.control.request_ids,
            )
        return listen

    async def _request(self, listen: _Listen, params: JSONObject) -> None:
        try:
            result = await self._runner.run(LISTEN, params, _LISTEN_OPTIONS, control=listen.control)
            if result.get("resultType", "complete") != "complete":
                listen.error = ProtocolError(f"{LISTEN}: unexpected resultType {result.get('resultType')!r}")
        except Exception as exc:
            sole = sole_error(exc)  # (a group around the request's one typed failure: that failure)
            if not isinstance(sole, MCPClientError):
                raise
            listen.error = sole
        finally:
            listen.settled.set()

    def _invalidated(self, change: Change) -> None:
        if self._invalidate is None:
            return
        try:
            self._invalidate(change)
        except Exception:
            logger.exception("invalidating the cache for %r failed", change)
