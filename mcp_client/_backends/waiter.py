"""A face for the old path of :class:`~mcp_client._backends.base.Waiter` (it lives in :mod:`.base` now).

Kept only for ``calls/in_flight_limit.py``, whose import line moves to :mod:`.base` with the call room's
reshaping; delete this module then.
"""

from __future__ import annotations

from mcp_client._backends.base import Waiter as Waiter

__all__ = ["Waiter"]
