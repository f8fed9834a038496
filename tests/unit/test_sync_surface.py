"""The blocking API has every public member of the async one, with the same parameters (design.md, "The blocking
facade"): most are generated into sync/view.py (test_gen_sync.py keeps that current), the rest are written by hand
in sync/base.py and sync/client.py; these checks hold for both."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import mcp_client
import mcp_client.sync

ASYNC_ONLY = {
    "aclose": "the blocking classes have close()",
    "session": "the async session object is not used from another thread",
    "skills": "the skills extension is async only: a loaded skill reads its files through the async client",
}
SYNC_EXTRA_KEYWORDS = {"backend", "backend_options", "interrupt_timeout"}
"""Keyword-only parameters the blocking constructors add: which event loop runs in the background thread."""


def _public(cls: type) -> dict[str, Any]:
    return {name: getattr(cls, name) for name in dir(cls) if not name.startswith("_")}


def _parameters(function: Any) -> list[tuple[str, object, object]]:
    return [
        (p.name, p.kind, p.default)
        for p in inspect.signature(function).parameters.values()
        if p.name not in SYNC_EXTRA_KEYWORDS
    ]


@pytest.mark.parametrize(
    ("async_class", "sync_class"),
    [(mcp_client.Client, mcp_client.sync.Client), (mcp_client.ClientGroup, mcp_client.sync.ClientGroup)],
)
def test_every_async_method_has_a_blocking_twin_with_the_same_parameters(async_class: type, sync_class: type) -> None:
    async_members = _public(async_class)
    sync_members = _public(sync_class)
    missing = sorted(set(async_members) - set(sync_members) - set(ASYNC_ONLY))
    assert not missing, f"{sync_class.__qualname__} lacks {missing}"
    for name in sorted(set(async_members) & set(sync_members)):
        async_member, sync_member = async_members[name], sync_members[name]
        if isinstance(async_member, property) or not callable(async_member):
            assert isinstance(sync_member, property) or not callable(sync_member), name
            continue
        assert _parameters(sync_member) == _parameters(async_member), f"{name}: the parameters differ"


CALL_ASYNC_ONLY = {
    "start": "the with block starts a blocking call",
    "stop": "what the async client's close uses",
    "wait": "result() waits; errors are the caller's to see",
}


def test_the_blocking_call_handle_has_the_async_ones_members() -> None:
    missing = sorted(set(_public(mcp_client.Call)) - set(_public(mcp_client.sync.SyncCall)) - set(CALL_ASYNC_ONLY))
    assert not missing, f"SyncCall lacks {missing}"


def test_the_blocking_subscription_has_the_async_ones_members() -> None:
    async_only = {"aclose": "leaving the with block closes it"}
    sync_members = _public(mcp_client.sync.SyncSubscription)
    missing = sorted(set(_public(mcp_client.Subscription)) - set(sync_members) - set(async_only))
    assert not missing, f"SyncSubscription lacks {missing}"


@pytest.mark.parametrize(
    ("sync_class", "name"),
    [
        (mcp_client.sync.ClientView, "transport"),
        (mcp_client.sync.SyncCall, "method"),
        (mcp_client.sync.SyncCall, "policy"),
    ],
)
def test_the_async_instance_attributes_the_blocking_classes_show_are_properties(sync_class: type, name: str) -> None:
    """Instance attributes are no class members for the generator to read: sync/base.py writes these by hand."""
    assert isinstance(inspect.getattr_static(sync_class, name), property)
