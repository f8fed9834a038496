"""The result cache is bounded by bytes, not only by entries: a server whose answers are large (a resource read of
a big file, a listing of long descriptions) cannot grow it past its byte bound, whatever its entry bound."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_client import ResultCache
from mcp_client.cache.result_cache import HELD_PER_VALUE
from mcp_client.cache.store import DEFAULT_MAX_BYTES, CacheEntry, CacheKey, MemoryCacheStore

QUARTER_MIB = "x" * (256 * 1024)


def _read(text: str) -> dict[str, Any]:
    return {"contents": [{"uri": "file:///f", "text": text}], "ttlMs": 60_000, "cacheScope": "private"}


def test_large_answers_are_kept_up_to_the_byte_bound_and_the_oldest_go_first() -> None:
    cache = ResultCache()  # the default: 1,024 entries and 64 MiB
    for n in range(1024):
        cache.put("srv", "ctx", "resources/read", f"file:///{n}", _read(QUARTER_MIB), now=0.0)
    store = cache.store
    assert isinstance(store, MemoryCacheStore)
    assert store.bytes <= DEFAULT_MAX_BYTES == 64 * 1024 * 1024
    assert len(cache) == DEFAULT_MAX_BYTES // len(QUARTER_MIB) - 1  # each entry: its text and a little JSON
    assert cache.get("srv", "ctx", "resources/read", "file:///1023", now=1.0) is not None
    assert cache.get("srv", "ctx", "resources/read", "file:///0", now=1.0) is None


def test_an_answer_larger_than_the_byte_bound_is_not_kept_and_replaces_nothing_stale() -> None:
    cache = ResultCache(max_bytes=100_000)
    assert cache.put("srv", "ctx", "resources/read", "file:///f", _read("small"), now=0.0)
    assert not cache.put("srv", "ctx", "resources/read", "file:///f", _read(QUARTER_MIB), now=0.0)
    assert cache.get("srv", "ctx", "resources/read", "file:///f", now=1.0) is None
    store = cache.store
    assert isinstance(store, MemoryCacheStore)
    assert store.bytes == 0


def test_the_store_counts_what_it_forgets() -> None:
    store = MemoryCacheStore(limit=10, max_bytes=1_000)
    keys = [CacheKey("s", "p", "resources/read", str(n)) for n in range(4)]
    for key in keys:
        store.set(key, CacheEntry({}, 1.0, 400))
    assert store.keys() == keys[2:]
    assert store.bytes == 800
    store.set(keys[3], CacheEntry({}, 1.0, 100))  # a replacement counts once
    assert store.bytes == 500
    store.delete(keys[2])
    store.delete(keys[2])
    assert store.bytes == 100


@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_the_byte_bound_is_checked(value: Any) -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        ResultCache(max_bytes=value)


def test_an_answer_of_many_small_values_counts_what_it_costs_to_hold_not_only_its_bytes() -> None:
    """Red team: an entry's size was its JSON's bytes alone, so 200 kept reads of 60,000 empty objects each were
    34 MB of JSON under the 64 MiB bound and held 830 MB. Each value now counts ``HELD_PER_VALUE`` bytes too."""
    cache = ResultCache()
    answer: dict[str, Any] = {**_read("x"), "_meta": {"x": [{}] * 60_000}}
    for n in range(200):
        cache.put("srv", "ctx", "resources/read", f"file:///{n}", answer, now=0.0)
    store = cache.store
    assert isinstance(store, MemoryCacheStore)
    assert store.bytes <= DEFAULT_MAX_BYTES
    per_entry = 180_000 + HELD_PER_VALUE * 120_000  # its JSON and its values (commas and braces)
    assert len(cache) <= DEFAULT_MAX_BYTES // per_entry
    assert HELD_PER_VALUE == 64


def test_commas_in_a_kept_text_are_no_values() -> None:
    cache = ResultCache()
    text = "a," * 500_000
    cache.put("srv", "ctx", "resources/read", "file:///csv", _read(text), now=0.0)
    store = cache.store
    assert isinstance(store, MemoryCacheStore)
    assert store.bytes < len(text) + 200 + 10 * HELD_PER_VALUE
