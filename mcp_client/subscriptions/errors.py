"""The errors of subscriptions: one that could not be opened, and one that was lost for good."""

from __future__ import annotations

from mcp_client.errors import MCPClientError

__all__ = ["SubscriptionError", "SubscriptionLost"]


class SubscriptionError(MCPClientError):
    """A subscription could not be opened: the server did not acknowledge ``subscriptions/listen`` within the
    policy's ``open_timeout``, or ended it before acknowledging it. (A server that refuses the request outright
    raises its :class:`~mcp_client.ServerError`; a broken channel its :class:`~mcp_client.TransportError`.)"""


class SubscriptionLost(SubscriptionError):
    """An open subscription ended for good, without the server's completion: the connection is gone, the server
    refused to re-open it, or the re-listens the :class:`~mcp_client.ListenPolicy` allows ran out. Raised by the
    iteration once the changes received before it have been yielded; ``__cause__`` is the last failure."""
