"""One token renewal at a time per token store, so a rotated refresh token is never sent twice.

Every :class:`~mcp_client.auth.OAuth` on the same store object shares one lock, found in a registry keyed by the
store itself (weakly: the entry goes with the store; never by ``id()``, which a later object may reuse). A store
shared between processes may offer ``renewal_lock()``, an async context manager held inside that lock around the
whole renewal (read the stored token, refresh it, write the answer): :class:`~mcp_client.auth.FileTokenStorage`
takes a file lock there. A store that cannot be weakly referenced or hashed gets the lock of its ``OAuth`` only.

May touch anyio and the standard library; the file lock itself lives in :mod:`mcp_client.auth._file_lock`.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio

__all__ = ["renewal_lock"]

_LOCKS: weakref.WeakKeyDictionary[Any, anyio.Lock] = weakref.WeakKeyDictionary()


def _shared_lock(storage: object) -> anyio.Lock | None:
    try:
        lock = _LOCKS.get(storage)
        if lock is None:
            lock = _LOCKS[storage] = anyio.Lock()
    except TypeError:  # not weakly referenceable, or not hashable
        return None
    return lock


@asynccontextmanager
async def renewal_lock(storage: object, fallback: anyio.Lock) -> AsyncIterator[None]:
    """Hold the renewal lock of ``storage`` (``fallback``: the caller's own, for a store without one)."""
    async with _shared_lock(storage) or fallback:
        across: AbstractAsyncContextManager[Any] | None = None
        factory = getattr(storage, "renewal_lock", None)
        if callable(factory):
            across = factory()
        if across is None:
            yield
            return
        async with across:
            yield
