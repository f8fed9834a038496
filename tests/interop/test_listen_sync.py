"""The blocking ``listen()`` against the official Python SDK's listen server over stdio, on both portal backends."""

from __future__ import annotations

import sys

import pytest

from mcp_client import SubscriptionFilter, TimeoutPolicy, ToolsListChanged, stdio
from mcp_client.sync.client import Client
from tests.interop.conftest import INTEROP_DIR

SERVER = INTEROP_DIR / "servers" / "python_sdk_listen_server.py"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_blocking_listen_yields_changes_until_the_server_completes(backend: str) -> None:
    transport = stdio(sys.executable, [str(SERVER)])
    with Client(transport, timeout=TimeoutPolicy(idle=20, maximum=60), backend=backend) as client:
        with client.listen(prompts=False, resources=False) as sub:
            assert sub.acknowledged == SubscriptionFilter(tools=True)
            assert isinstance(sub.subscription_id, int | str)  # the listen's id, as the async handle has it
            changes = iter(sub)
            client.call_tool("add_tool", {"name": "fresh"})
            assert next(changes) == ToolsListChanged()
            client.call_tool("end_subscriptions")
            assert list(changes) == []
            assert sub.relistens == 0
        assert "fresh" in {tool.name for tool in client.list_tools()}
