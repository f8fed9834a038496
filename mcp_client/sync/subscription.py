"""The blocking handle on a subscription: :meth:`mcp_client.sync.client.Client.listen`'s answer.

Each step (entering, the next change, leaving) runs the async :class:`~mcp_client.Subscription`'s own step on the
client's event loop through the portal; the calling thread blocks on it. Touches only the subscription and the
portal runner.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import TracebackType

from mcp_client.subscriptions import Change, Subscription, SubscriptionFilter
from mcp_client.sync.portal import PortalRunner

__all__ = ["SyncSubscription"]


class SyncSubscription:
    """A blocking handle on a subscription to a server's changes; use it with ``with``, then iterate it.

    ```python
    with client.listen(tools=True) as sub:
        for change in sub:
            ...
    ```
    Leaving the block ends the subscription on the wire.
    """

    def __init__(self, runner: PortalRunner, subscription: Subscription) -> None:
        self._runner = runner
        self._subscription = subscription

    def __enter__(self) -> SyncSubscription:
        self._runner.run(self._subscription.__aenter__)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._runner.run(self._subscription.aclose)

    @property
    def acknowledged(self) -> SubscriptionFilter:
        """What the server agreed to honour (see :attr:`mcp_client.Subscription.acknowledged`)."""
        return self._subscription.acknowledged

    @property
    def subscription_id(self) -> int | str | None:
        """The id of the listen request now open (see :attr:`mcp_client.Subscription.subscription_id`)."""
        return self._subscription.subscription_id

    @property
    def relistens(self) -> int:
        """How many times the subscription was opened again after a drop."""
        return self._subscription.relistens

    def __iter__(self) -> Iterator[Change]:
        """The changes, until the server completes the subscription (or it is lost: ``SubscriptionLost``)."""
        while True:
            try:
                yield self._runner.run(self._subscription.__anext__)
            except StopAsyncIteration:
                return
