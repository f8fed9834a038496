"""What the session tells long-lived listeners (the subscription router): the protocol they implement, and the
loop that tells them, so that one failing listener never stops the reader. Touches nothing but logging."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from mcp_client._log_guard import package_logger
from mcp_client.errors import TransportError

__all__ = ["NotificationListener", "tell"]

logger = package_logger("mcp_client.session")


class NotificationListener(Protocol):
    """Something long-lived that wants the server's notifications as they are read (a subscription router).

    Both methods are called from the reader, must be quick, must not block; an exception is logged and dropped.
    """

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        """A notification other than progress arrived (after the session's own handling)."""

    def on_closed(self, error: TransportError) -> None:
        """The connection is gone; nothing more will arrive."""


def tell(listeners: Iterable[NotificationListener], what: str, *args: Any) -> None:
    """Call ``listener.<what>(*args)`` on each listener (a copy of the list: a listener may remove itself)."""
    for listener in list(listeners):
        try:
            getattr(listener, what)(*args)
        except Exception:
            logger.exception("notification listener failed in %s", what)
