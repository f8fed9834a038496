"""The public subscription: what ``client.listen(...)`` returns, the same for both protocol eras.

```python
async with client.listen(tools=True, resource_uris=["file:///cfg.json"]) as sub:
    print(sub.acknowledged)             # what the server agreed to honour
    async for change in sub:            # ToolsListChanged | PromptsListChanged | ResourcesListChanged | ResourceUpdated
        ...
```

Entering it opens the subscription and waits until it is acknowledged; iterating yields changes until the server
completes it (the loop ends) or it is lost for good (:class:`SubscriptionLost`); leaving it ends it on the wire.
The work is done by an era's engine (:mod:`.modern`, :mod:`.legacy`); this module only picks one and adapts it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

import anyio.abc
import mcp_types

from mcp_client._typed import typed_methods
from mcp_client.calls import CallRunner
from mcp_client.policy import TimeoutPolicy
from mcp_client.policy.listen import ListenPolicy
from mcp_client.subscriptions.changes import Change, SubscriptionFilter
from mcp_client.subscriptions.legacy import LegacySubscription
from mcp_client.subscriptions.modern import ModernSubscription
from mcp_client.subscriptions.pending import PendingChanges

__all__ = ["Subscription"]


class Subscription:
    """An open subscription to a server's changes; made by :meth:`Client.listen <mcp_client.Client.listen>`.

    Use it as ``async with``, then iterate it. It can be entered once. The changes are level triggers: two equal
    ones still waiting for the consumer are yielded once, so a slow consumer never falls behind.
    """

    def __init__(
        self,
        runner: CallRunner,
        task_group: anyio.abc.TaskGroup,
        asked: SubscriptionFilter,
        *,
        policy: ListenPolicy,
        capabilities: mcp_types.ServerCapabilities | None,
        request_policy: TimeoutPolicy,
        close_timeout: float,
        invalidate: Callable[[Change], None] | None = None,
    ) -> None:
        self.asked = asked
        """The filter that was asked for."""
        self._pending = PendingChanges(policy.max_pending)
        self._engine: ModernSubscription | LegacySubscription
        era = runner.session.era
        if era is not None and era.listen_stream:
            self._engine = ModernSubscription(runner, task_group, asked, policy, self._pending, invalidate)
        else:
            self._engine = LegacySubscription(
                runner, task_group, asked, self._pending, capabilities, request_policy, close_timeout
            )
        self._entered = False
        self._closed = False

    @property
    def acknowledged(self) -> SubscriptionFilter:
        """The part of :attr:`asked` the server agreed to honour (the latest acknowledgement, after a re-listen).
        What it would not honour is missing here, not an error."""
        acknowledged = self._engine.acknowledged
        if acknowledged is None:
            raise RuntimeError("the subscription is not open yet: use 'async with client.listen(...)'")
        return acknowledged

    @property
    def subscription_id(self) -> int | str | None:
        """The id of the open ``subscriptions/listen`` request (2026-07-28; it changes with each re-listen)."""
        return self._engine.request_id

    @property
    def dropped(self) -> int:
        """How many changes were dropped because :attr:`ListenPolicy.max_pending <mcp_client.ListenPolicy>` of
        them were waiting for the consumer already (each logged; see :mod:`mcp_client.subscriptions.pending`)."""
        return self._pending.dropped

    @property
    def relistens(self) -> int:
        """How many times the subscription was opened again after a drop."""
        return self._engine.relistens

    async def __aenter__(self) -> Subscription:
        if self._entered:
            raise RuntimeError("a Subscription can be entered only once")
        self._entered = True
        await self._engine.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End the subscription (the iteration stops after what is waiting) and take it off the wire."""
        if self._closed:
            return
        self._closed = True
        self._pending.finish()
        if self._entered:  # (never opened: nothing is on the wire, nothing runs)
            await self._engine.close()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Change:
        return await self._pending.get()


typed_methods(Subscription)  # its async with, async for and aclose: failures typed, never an exception group
