"""What a subscription delivers: the four change types, the filter asked for and acknowledged, and their wire forms.

Pure values and conversions, no I/O. A change is a level trigger ("this changed, fetch it again"), so two equal
changes waiting for the consumer are one: :func:`change_key` says which are equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "SUBSCRIPTION_ID_KEY",
    "Change",
    "PromptsListChanged",
    "ResourceUpdated",
    "ResourcesListChanged",
    "SubscriptionFilter",
    "ToolsListChanged",
    "change_from_notification",
    "change_key",
    "changes_for",
    "covers",
    "notification_of",
]

SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
"""The ``_meta`` key that ties a notification on a listen stream to its ``subscriptions/listen`` request."""


@dataclass(frozen=True, slots=True)
class ToolsListChanged:
    """The server's tools changed: list them again.

    ``after_relisten`` is True when no notification said so, but the subscription was opened again after a drop
    and whatever changed meanwhile is unknown (there is no replay).
    """

    after_relisten: bool = False


@dataclass(frozen=True, slots=True)
class PromptsListChanged:
    """The server's prompts changed: list them again. ``after_relisten``: see :class:`ToolsListChanged`."""

    after_relisten: bool = False


@dataclass(frozen=True, slots=True)
class ResourcesListChanged:
    """The server's resources changed: list them again. ``after_relisten``: see :class:`ToolsListChanged`."""

    after_relisten: bool = False


@dataclass(frozen=True, slots=True)
class ResourceUpdated:
    """The resource at ``uri`` changed: read it again. ``after_relisten``: see :class:`ToolsListChanged`."""

    uri: str
    after_relisten: bool = False


Change: TypeAlias = ToolsListChanged | PromptsListChanged | ResourcesListChanged | ResourceUpdated
"""Anything a subscription yields."""

_LIST_CHANGED: dict[str, type[ToolsListChanged | PromptsListChanged | ResourcesListChanged]] = {
    "notifications/tools/list_changed": ToolsListChanged,
    "notifications/prompts/list_changed": PromptsListChanged,
    "notifications/resources/list_changed": ResourcesListChanged,
}
RESOURCE_UPDATED = "notifications/resources/updated"


@dataclass(frozen=True, slots=True)
class SubscriptionFilter:
    """Which changes a subscription carries: the same fields as :meth:`Client.listen <mcp_client.Client.listen>`.

    ``Subscription.acknowledged`` is one of these too: the part of the request the server agreed to honour (at
    2025-11-25: what its capabilities and ``resources/subscribe`` answers promise).
    """

    tools: bool = False
    prompts: bool = False
    resources: bool = False
    resource_uris: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        *,
        tools: bool | None = None,
        prompts: bool | None = None,
        resources: bool | None = None,
        resource_uris: Iterable[str] = (),
    ) -> SubscriptionFilter:
        """Check the arguments of ``listen()`` and build the filter (URIs deduplicated, order kept).

        A list left out (``None``) is asked for only when nothing is named: no list given as ``True`` and no URI.
        """
        for name, flag in (("tools", tools), ("prompts", prompts), ("resources", resources)):
            if flag is not None and not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, not {type(flag).__name__}")
        if isinstance(resource_uris, str):
            raise TypeError("resource_uris must be a list of URIs, not one string")
        uris = tuple(dict.fromkeys(resource_uris))
        for uri in uris:
            if not isinstance(uri, str) or not uri:
                raise TypeError(f"every resource URI must be a non-empty string, got {uri!r}")
        unnamed = not (tools or prompts or resources or uris)  # then a list left out means yes
        return cls(
            tools=unnamed if tools is None else tools,
            prompts=unnamed if prompts is None else prompts,
            resources=unnamed if resources is None else resources,
            resource_uris=uris,
        )

    @property
    def empty(self) -> bool:
        """True when nothing is asked for."""
        return not (self.tools or self.prompts or self.resources or self.resource_uris)

    def to_wire(self) -> dict[str, Any]:
        """The ``SubscriptionFilter`` of ``subscriptions/listen``: only what is asked for (omitted means no)."""
        wire: dict[str, Any] = {}
        if self.tools:
            wire["toolsListChanged"] = True
        if self.prompts:
            wire["promptsListChanged"] = True
        if self.resources:
            wire["resourcesListChanged"] = True
        if self.resource_uris:
            wire["resourceSubscriptions"] = list(self.resource_uris)
        return wire

    def honoured(self, wire: object) -> SubscriptionFilter:
        """What the server acknowledged, from the ``notifications`` of its acknowledgement, limited to what was
        asked (a server cannot widen a subscription by acknowledging more)."""
        filter_ = wire if isinstance(wire, dict) else {}
        uris = filter_.get("resourceSubscriptions")
        agreed = {uri for uri in uris if isinstance(uri, str)} if isinstance(uris, list) else set()
        return SubscriptionFilter(
            tools=self.tools and filter_.get("toolsListChanged") is True,
            prompts=self.prompts and filter_.get("promptsListChanged") is True,
            resources=self.resources and filter_.get("resourcesListChanged") is True,
            resource_uris=tuple(uri for uri in self.resource_uris if uri in agreed),
        )

    def allows(self, change: Change) -> bool:
        """Whether ``change`` is one this filter carries."""
        if isinstance(change, ToolsListChanged):
            return self.tools
        if isinstance(change, PromptsListChanged):
            return self.prompts
        if isinstance(change, ResourcesListChanged):
            return self.resources
        return any(covers(subscribed, change.uri) for subscribed in self.resource_uris)


def covers(subscribed: str, uri: str) -> bool:
    """Whether an update of ``uri`` is news for a subscription to ``subscribed``: the same URI or a sub-resource
    of it (both eras let a server name "a sub-resource of the one that the client actually subscribed to"). A
    sub-resource continues the subscribed URI after a ``/``, ``?`` or ``#`` (``file:///dir`` covers
    ``file:///dir/a.txt``, never ``file:///dir2``)."""
    if uri == subscribed:
        return True
    if not uri.startswith(subscribed):
        return False
    return subscribed.endswith(("/", "?", "#")) or uri[len(subscribed)] in "/?#"


def change_from_notification(method: str, params: dict[str, Any]) -> Change | None:
    """The change a server notification announces, or None when it is none of the four (or malformed)."""
    kind = _LIST_CHANGED.get(method)
    if kind is not None:
        return kind()
    if method == RESOURCE_UPDATED:
        uri = params.get("uri")
        return ResourceUpdated(uri) if isinstance(uri, str) and uri else None
    return None


def change_key(change: Change) -> tuple[str, str]:
    """Equal keys for changes that mean the same refetch (``after_relisten`` aside)."""
    return (type(change).__name__, change.uri if isinstance(change, ResourceUpdated) else "")


def changes_for(honoured: SubscriptionFilter) -> list[Change]:
    """One change for everything ``honoured`` carries, marked ``after_relisten``: what a consumer must refetch
    after a gap in which notifications may have been lost."""
    changes: list[Change] = []
    if honoured.tools:
        changes.append(ToolsListChanged(after_relisten=True))
    if honoured.prompts:
        changes.append(PromptsListChanged(after_relisten=True))
    if honoured.resources:
        changes.append(ResourcesListChanged(after_relisten=True))
    changes.extend(ResourceUpdated(uri, after_relisten=True) for uri in honoured.resource_uris)
    return changes


def notification_of(change: Change) -> tuple[str, dict[str, Any]]:
    """The method and params of the notification that announces ``change`` (for a synthetic one)."""
    if isinstance(change, ResourceUpdated):
        return RESOURCE_UPDATED, {"uri": change.uri}
    method = next(name for name, kind in _LIST_CHANGED.items() if isinstance(change, kind))
    return method, {}
