"""Subscriptions to a server's changes: ``client.listen(...)`` on both protocol eras.

At 2026-07-28 one subscription is one long-lived ``subscriptions/listen`` request that re-opens itself after a
drop (:mod:`.modern`); at 2025-11-25 it is the session's own notifications plus ``resources/subscribe``
(:mod:`.legacy`). Either way the consumer iterates the same four change types (:mod:`.changes`).
"""

from mcp_client.policy.listen import DEFAULT_LISTEN_POLICY, ListenPolicy
from mcp_client.subscriptions.changes import (
    Change,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    SubscriptionFilter,
    ToolsListChanged,
)
from mcp_client.subscriptions.errors import SubscriptionError, SubscriptionLost
from mcp_client.subscriptions.subscription import Subscription

__all__ = [
    "DEFAULT_LISTEN_POLICY",
    "Change",
    "ListenPolicy",
    "PromptsListChanged",
    "ResourceUpdated",
    "ResourcesListChanged",
    "Subscription",
    "SubscriptionError",
    "SubscriptionFilter",
    "SubscriptionLost",
    "ToolsListChanged",
]
