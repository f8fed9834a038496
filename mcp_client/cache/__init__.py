"""Results kept as long as the server says they stay fresh (2026-07-28 ``CacheableResult``), and who they belong
to.

:mod:`.result_cache` (the rules, pure: ``now`` passed in), :mod:`.store` (where entries live; a host may bring
its own), :mod:`.partition` (the server key and the authorization context), :mod:`.requests` (a client's cacheable
requests and list pagination through the cache).
"""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:
    from mcp_client.cache.partition import authorization_context as authorization_context
    from mcp_client.cache.result_cache import (
        CACHEABLE_METHODS as CACHEABLE_METHODS,
        LIST_METHODS as LIST_METHODS,
        MAX_TTL as MAX_TTL,
        PUBLIC as PUBLIC,
        CacheMode as CacheMode,
        ResultCache as ResultCache,
        invalidated_by as invalidated_by,
    )
    from mcp_client.cache.store import (
        CacheEntry as CacheEntry,
        CacheKey as CacheKey,
        CacheStore as CacheStore,
        MemoryCacheStore as MemoryCacheStore,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
