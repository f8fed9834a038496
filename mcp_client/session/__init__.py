"""The wire of one connection: request ids and progress tokens, the in-flight table, routing, late drops,
cancellation on the wire, and the requests the server makes of the client.

:mod:`.session` (the :class:`Session`, one per connection) owns the tables; :mod:`.inflight` holds the records of
work in flight; :mod:`.server_requests` and :mod:`.handlers` answer what the server asks; :mod:`.listeners`,
:mod:`.batch` and :mod:`.pending` are its small parts (long-lived listeners, work after a read, the drain loop).
Below it are the transports (only their contract, :mod:`mcp_client.transports.base`) and the protocol eras; above
it the call room (:mod:`mcp_client.calls`).
"""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:
    from mcp_client.session.session import Session as Session

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
