"""A subscription at 2025-11-25: the session's own notifications, and ``resources/subscribe`` for URIs.

There is no listen request before 2026-07-28: list-changed and resource-updated notifications arrive on the
session's stream (stdio's, or the standalone GET stream over HTTP) whenever the server sends them. This engine
takes them from the router, so a host's loop is the same for both eras. The acknowledged filter is what the
server promised: its ``listChanged`` capabilities, and each URI whose ``resources/subscribe`` it accepted. What
was asked for is delivered even when the server declared no capability for it (a notification it sends anyway
is still news). A URI held by several subscriptions of one session is subscribed once and unsubscribed when the
last of them closes.

Under a supervised stdio server a subscription heals as a 2026-07-28 one does: when the process dies it moves to
the session of the next one, ``resources/subscribe``s its URIs there again and tells the consumer to refetch
(one ``after_relisten`` change per kind acknowledged), since what happened in between is not replayed.

Touches the session's request API and the router.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import mcp_types

from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject
from mcp_client.calls import CallOptions, CallRunner
from mcp_client.errors import MCPClientError, ServerError, TransportError
from mcp_client.policy import TimeoutPolicy
from mcp_client.subscriptions.changes import SubscriptionFilter, change_from_notification, changes_for
from mcp_client.subscriptions.errors import SubscriptionLost
from mcp_client.subscriptions.pending import PendingChanges
from mcp_client.subscriptions.router import router_for

if TYPE_CHECKING:
    from mcp_client.session.session import Session

__all__ = ["LegacySubscription"]

logger = package_logger("mcp_client.subscriptions")


class LegacySubscription:
    """The 2025-11-25 engine of a :class:`~mcp_client.Subscription`; see the module docstring."""

    unnamed = True
    request_id = None

    def __init__(
        self,
        runner: CallRunner,
        task_group: anyio.abc.TaskGroup,
        asked: SubscriptionFilter,
        pending: PendingChanges,
        capabilities: mcp_types.ServerCapabilities | None,
        request_policy: TimeoutPolicy,
        close_timeout: float,
    ) -> None:
        self._runner = runner
        self.session = runner.session
        self.asked = asked
        self.pending = pending
        self.acknowledged: SubscriptionFilter | None = None
        self._capabilities = capabilities or mcp_types.ServerCapabilities()
        self._request_policy = request_policy
        self._close_timeout = close_timeout
        self._router = router_for(runner.session)
        self._subscribed: list[str] = []
        self._task_group = task_group
        self._watch_scope = anyio.CancelScope()
        self._heal_scope = anyio.CancelScope()
        self._closing = False
        self.relistens = 0
        """How many times the subscription moved to a restarted server's new process."""

    # -- the router's side ---------------------------------------------------------------------------------------

    def owns(self, subscription_id: str) -> bool:
        return False

    def on_notification(self, method: str, params: JSONObject) -> None:
        change = change_from_notification(method, params)
        if change is not None and self.asked.allows(change):
            self.pending.put(change)

    def on_torn_down(self, reason: str | None) -> None:
        """Not at 2025-11-25: a server's ``notifications/cancelled`` withdraws one of its own requests."""

    def on_closed(self, error: TransportError) -> None:
        if self._runner.heals and not self._closing:
            try:
                self._task_group.start_soon(self._heal, self.session, error, name="subscription heal")
                return
            except RuntimeError:  # the client's task group is closing: nothing will serve again
                pass
        self.pending.finish(SubscriptionLost(f"the connection is gone: {error.message}"))

    async def _heal(self, dead: Session, error: TransportError) -> None:
        """Move to the session of the process that replaces ``dead``'s, subscribe there, tell to refetch."""
        self._router.remove(self)
        self._heal_scope = anyio.CancelScope()  # one per heal: a server may die again later
        with self._heal_scope:
            session = await self._runner.session_after(dead)
            if session is None or self._closing:
                self.pending.finish(SubscriptionLost(f"the connection is gone: {error.message}"))
                return
            self.session = session
            self._router = router_for(session)
            self._router.add(self)  # before any await: nothing the new process says is missed
            self._subscribed = []  # the dead process's subscriptions died with it
            try:
                uris = await self._subscribe(self.asked.resource_uris)
            except MCPClientError as exc:
                lost = SubscriptionLost(f"subscribing again after the server's restart failed: {exc}")
                lost.__cause__ = exc
                self.pending.finish(lost)
                return
            acknowledged = replace(self.acknowledged or SubscriptionFilter(), resource_uris=uris)
            self.acknowledged = acknowledged
            self.relistens += 1
            logger.info("the subscription moved to the restarted server's new session")
            for change in changes_for(acknowledged):  # nothing is replayed: everything may have changed
                self.pending.put(change)

    # -- the consumer's side -------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Start taking notifications (before any await, so none is missed), then subscribe to the URIs."""
        if self.session.closed_error is not None:
            raise SubscriptionLost(f"the connection is gone: {self.session.closed_error.message}")
        self._router.add(self)
        self._task_group.start_soon(self._watch, name="subscription watch")
        try:
            uris = await self._subscribe(self.asked.resource_uris)
        except BaseException:
            await self.close()
            raise
        capabilities = self._capabilities
        self.acknowledged = SubscriptionFilter(
            tools=self.asked.tools and bool(capabilities.tools and capabilities.tools.list_changed),
            prompts=self.asked.prompts and bool(capabilities.prompts and capabilities.prompts.list_changed),
            resources=self.asked.resources and bool(capabilities.resources and capabilities.resources.list_changed),
            resource_uris=uris,
        )

    async def _watch(self) -> None:
        """Lives in the client's task group: when the client closes, the iteration ends instead of waiting on."""
        try:
            with self._watch_scope:
                await anyio.sleep_forever()
        finally:
            self.pending.finish(SubscriptionLost("the client was closed"))

    async def close(self) -> None:
        """Stop taking notifications; unsubscribe the URIs no other subscription holds (bounded, errors ignored)."""
        self._closing = True
        self._watch_scope.cancel()
        self._heal_scope.cancel()
        self._router.remove(self)
        counts = self._router.uri_counts
        released: list[str] = []
        for uri in self._subscribed:
            counts[uri] -= 1
            if counts[uri] == 0:
                del counts[uri]
                released.append(uri)
        self._subscribed = []
        if not released or self.session.closed_error is not None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(self._close_timeout):
            for uri in released:
                try:
                    await self._runner.run("resources/unsubscribe", {"uri": uri}, CallOptions(self._request_policy))
                except MCPClientError as exc:
                    logger.debug("resources/unsubscribe %s failed: %s", uri, exc)

    async def _subscribe(self, uris: tuple[str, ...]) -> tuple[str, ...]:
        """``resources/subscribe`` each URI (once per session); the ones the server accepted."""
        resources = self._capabilities.resources
        if not uris or not (resources and resources.subscribe):
            return ()
        counts = self._router.uri_counts
        accepted: list[str] = []
        for uri in uris:
            if uri not in counts:
                try:
                    await self._runner.run("resources/subscribe", {"uri": uri}, CallOptions(self._request_policy))
                except ServerError as exc:
                    logger.info("the server would not subscribe to %s: %s", uri, exc)
                    continue
            counts[uri] = counts.get(uri, 0) + 1
            self._subscribed.append(uri)
            accepted.append(uri)
        return tuple(accepted)
