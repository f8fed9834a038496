"""``Client.listen()``: the one method a client needs for subscriptions, kept beside them.

:class:`~mcp_client.Client` inherits it from :class:`Listening`, which reads only what a connected client has: its
call runner and task group, the server's capabilities, its default request policy and cancel budget, and its
notification hook (through which a subscription that dropped invalidates what the client caches, as the matching
notification would).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcp_client.policy.defaults import USE_CLIENT_DEFAULT
from mcp_client.policy.listen import ListenPolicy
from mcp_client.subscriptions.changes import Change, SubscriptionFilter, notification_of
from mcp_client.subscriptions.subscription import Subscription

if TYPE_CHECKING:
    import anyio.abc
    import mcp_types

    from mcp_client._types import JSONObject
    from mcp_client.calls import CallRunner
    from mcp_client.policy import TimeoutPolicy
    from mcp_client.policy.defaults import TimeoutArg

__all__ = ["Listening"]


class Listening:
    """Gives :class:`~mcp_client.Client` its :meth:`listen`."""

    if TYPE_CHECKING:
        _task_group: anyio.abc.TaskGroup | None
        _cancel_timeout: float

        @property
        def _calls_runner(self) -> CallRunner: ...

        @property
        def server_capabilities(self) -> mcp_types.ServerCapabilities | None: ...

        def resolve_timeout(self, timeout: TimeoutArg) -> TimeoutPolicy: ...

        def _on_notification(self, method: str, params: JSONObject) -> None: ...

    def listen(
        self,
        *,
        tools: bool | None = None,
        prompts: bool | None = None,
        resources: bool | None = None,
        resource_uris: Iterable[str] = (),
        policy: ListenPolicy | None = None,
    ) -> Subscription:
        """Subscribe to the server's changes; the same loop for both protocol eras.

        ```python
        async with client.listen(tools=True, resource_uris=["file:///cfg.json"]) as sub:
            async for change in sub:  # ToolsListChanged | PromptsListChanged | ResourcesListChanged | ResourceUpdated
                ...
        ```

        At 2026-07-28 this is a ``subscriptions/listen`` request held open, entered once the server acknowledged
        it (:attr:`Subscription.acknowledged` is what it agreed to), and opened again with a new id after a drop
        (``policy``: a :class:`~mcp_client.ListenPolicy`), followed by one ``after_relisten`` change per kind it
        carries, since missed notifications are not replayed. At 2025-11-25 the changes are the session's own
        notifications, and ``resource_uris`` are ``resources/subscribe``d. The iteration ends when the server
        completes the subscription, and raises :class:`~mcp_client.SubscriptionLost` if it is lost for good.

        Naming a kind (``True``, or resource URIs) asks for exactly the kinds named: the example above listens to
        the tool list and one resource, not to the prompt or resource lists. Naming none asks for all three lists
        (less any passed as ``False``).

        Args:
            tools: Tell when the tool list changes.
            prompts: Tell when the prompt list changes.
            resources: Tell when the resource list changes.
            resource_uris: Tell when one of these resources changes (the server may also tell of resources under
                one of them, a sub-resource URI).
            policy: How the subscription opens and heals (default: :data:`~mcp_client.DEFAULT_LISTEN_POLICY`).

        Raises:
            ValueError: Nothing was asked for.
            TypeError: An argument is not what it should be (``resource_uris`` given as one string, say).
        """
        asked = SubscriptionFilter.of(tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris)
        if asked.empty:
            raise ValueError("listen() needs at least one of tools, prompts, resources or resource_uris")
        if self._task_group is None:
            raise RuntimeError("the client is not connected: use 'async with Client(...)'")
        return Subscription(
            self._calls_runner,
            self._task_group,
            asked,
            policy=policy if policy is not None else ListenPolicy(),
            capabilities=self.server_capabilities,
            request_policy=self.resolve_timeout(USE_CLIENT_DEFAULT),
            close_timeout=self._cancel_timeout,
            invalidate=self._invalidate,
        )

    def _invalidate(self, change: Change) -> None:
        """A subscription dropped: what ``change`` describes may be stale, as if its notification had come."""
        self._on_notification(*notification_of(change))
