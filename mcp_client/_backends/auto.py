"""The one chooser of the async backend: :func:`current_backend`, as httpcore's ``_backends/auto.py`` and anyio's
``get_async_backend``.

It looks once, inside the running loop; the session and the stdio transport call it when they start and keep what
it returns, so no request asks again. trio's module is imported only when trio runs, so an asyncio program never
loads trio. Nothing else in the package tells the backends apart.
"""

from __future__ import annotations

import asyncio

from mcp_client._backends import asyncio as asyncio_backend
from mcp_client._backends.base import Backend

__all__ = ["current_backend"]


def current_backend() -> Backend:
    """The backend of the running event loop. Call it inside the loop, once per connection, and keep it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop running: anyio runs on trio
        from mcp_client._backends import trio as trio_backend

        return trio_backend.running_backend()
    return asyncio_backend.running_backend()
