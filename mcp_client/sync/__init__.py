"""The blocking API, for hosts without an event loop: the same clients, policies, errors and results.

:mod:`.client` (``Client``, ``ClientGroup``: their lifecycle), :mod:`.view` (the blocking methods of a
connected client, a group, a call handle and a subscription, generated from the async classes by
``python .ci/gen_sync.py``), :mod:`.base` (the hand-written half of those classes), :mod:`.portal` (running
coroutines for a blocking caller).
"""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:
    from mcp_client.sync.client import (
        DEFAULT_INTERRUPT_TIMEOUT as DEFAULT_INTERRUPT_TIMEOUT,
        Client as Client,
        ClientGroup as ClientGroup,
        ClientView as ClientView,
        SyncCall as SyncCall,
        SyncSubscription as SyncSubscription,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
