"""The subscription router: one per session, it hands each notification to the subscriptions it belongs to.

At 2026-07-28 a notification on a listen stream names its subscription in
``_meta["io.modelcontextprotocol/subscriptionId"]`` (the ``subscriptions/listen`` request's id), and the router
demultiplexes by it, which stdio requires, since every subscription shares the one stream; a server's
``notifications/cancelled`` naming a listen id ends that subscription and nothing else. At 2025-11-25
notifications name no subscription: each is offered to every open subscription, which keeps what it asked for.
Called from the session's reader: never blocks, never raises. It touches only the session's listener hook.
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol

from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject
from mcp_client.errors import TransportError
from mcp_client.session.session import Session
from mcp_client.subscriptions.changes import SUBSCRIPTION_ID_KEY

__all__ = ["Route", "SubscriptionRouter", "router_for"]

logger = package_logger("mcp_client.subscriptions")


class Route(Protocol):
    """One open subscription, as the router sees it."""

    @property
    def unnamed(self) -> bool:
        """Whether it takes the notifications that name no subscription (2025-11-25)."""

    def owns(self, subscription_id: str) -> bool:
        """Whether ``subscription_id`` (normalised by :func:`id_key`) is the id of this subscription's listen."""

    def on_notification(self, method: str, params: JSONObject) -> None:
        """A notification for this subscription (2026: carrying its id; 2025: any)."""

    def on_torn_down(self, reason: str | None) -> None:
        """2026-07-28: the server sent ``notifications/cancelled`` for this subscription's listen request."""

    def on_closed(self, error: TransportError) -> None:
        """The connection is gone."""


def id_key(raw: object) -> str | None:
    """A JSON-RPC id as a comparable key (ids 7 and "7" are one request), or None if it cannot be an id."""
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        return None
    return str(raw)


class SubscriptionRouter:
    """Routes a session's notifications to its open subscriptions; see the module docstring."""

    def __init__(self, session: Session) -> None:
        self._routes: list[Route] = []
        session.add_listener(self)  # the session holds its router; the router holds no session
        self.uri_counts: dict[str, int] = {}
        """2025-11-25: how many open subscriptions hold each ``resources/subscribe``d URI."""

    def add(self, route: Route) -> None:
        """Start routing to ``route``."""
        self._routes.append(route)

    def remove(self, route: Route) -> None:
        """Stop routing to ``route`` (idempotent)."""
        if route in self._routes:
            self._routes.remove(route)

    def on_notification(self, method: str, params: JSONObject) -> None:
        if method == "notifications/cancelled":
            key = id_key(params.get("requestId"))
            route = self._owner(key) if key is not None else None
            if route is not None:
                reason = params.get("reason")
                route.on_torn_down(reason if isinstance(reason, str) else None)
            return
        meta = params.get("_meta")
        raw_id: Any = meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None
        if raw_id is None:
            for route in list(self._routes):
                if route.unnamed:
                    route.on_notification(method, params)
            return
        key = id_key(raw_id)
        owner = self._owner(key) if key is not None else None
        if owner is None:
            logger.debug("dropping %s for subscription %r, which is not open", method, raw_id)
            return
        owner.on_notification(method, params)

    def on_closed(self, error: TransportError) -> None:
        for route in list(self._routes):
            route.on_closed(error)

    def _owner(self, key: str) -> Route | None:
        for route in self._routes:
            if route.owns(key):
                return route
        return None


_ROUTERS: weakref.WeakKeyDictionary[Session, weakref.ref[SubscriptionRouter]] = weakref.WeakKeyDictionary()
"""Each session's router, held weakly both ways: the session's listener list is what keeps a router alive, and a
value that held its session would keep the key alive forever."""


def router_for(session: Session) -> SubscriptionRouter:
    """The session's router, made (and hooked into the session) the first time it is needed."""
    held = _ROUTERS.get(session)
    router = held() if held is not None else None
    if router is None:
        router = SubscriptionRouter(session)
        _ROUTERS[session] = weakref.ref(router)
    return router
