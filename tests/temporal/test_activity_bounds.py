"""A Temporal ``tools/call`` activity ends by the call's maximum, whatever it does for the call first: the listing
that tells it whether the tool is safe to repeat, and starting the worker's connection to the server (open). One
attempt in temporalio's ActivityEnvironment over the scripted peer, whose slow step takes far longer than the
maximum (the guard around each attempt only stops a hang; nothing asserts a duration)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from mcp_client import Client, TimeoutPolicy, memory
from mcp_client.integrations.temporal import activity_name
from mcp_client.integrations.temporal.activities import MCPActivities
from mcp_client.integrations.temporal.connections import Connections
from mcp_client.integrations.temporal.wire import ToolCallInput
from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio

CONNECT = 30.0
"""The worker client's connect budget: far more than the call's maximum."""
GUARD = 10.0


def _attempt_now() -> ActivityEnvironment:
    """A first attempt, scheduled and started now (the maximum counts from then)."""
    started = datetime.now(UTC)
    environment = ActivityEnvironment()
    environment.info = dataclasses.replace(
        environment.info, scheduled_time=started, started_time=started, heartbeat_timeout=timedelta(seconds=30)
    )
    return environment


async def _confirmed(details: Any) -> None:
    return None


async def _attempt(peer: ScriptedPeer, maximum: float) -> ApplicationError:
    def factory() -> Client:
        return Client(memory(peer.serve), timeout=TimeoutPolicy(idle=None, maximum=100, connect=CONNECT))

    activities = MCPActivities(Connections({"peer": factory}), confirm=_confirmed)
    by_name = {getattr(fn, "__temporal_activity_definition").name: fn for fn in activities.definitions()}
    operation = by_name[activity_name("peer", "call_tool")]
    async with activities.connections.running():
        with anyio.fail_after(GUARD), pytest.raises(ApplicationError) as caught:
            await _attempt_now().run(operation, ToolCallInput("echo", {"text": "hi"}, None, maximum))
    return caught.value


async def test_the_listing_the_activity_needs_ends_by_the_calls_maximum() -> None:
    """Red team: the listing of the tool's annotations ran under the worker client's default (100 s here), not the
    call's maximum."""
    peer = ScriptedPeer(era="modern")
    peer.method_delays["tools/list"] = 1000
    failure = await _attempt(peer, maximum=0.5)
    assert failure.type == "MaxTimeout"
    assert failure.details[0]["may_have_run"] == "no"
    assert peer.stats.arrivals["tools/call echo"] == 0


async def test_starting_the_workers_connection_ends_by_the_calls_maximum() -> None:
    """Red team: the activity that starts the worker's connection waited for the client's connect budget (30 s
    here) behind a slow ``initialize``, not for the call's maximum. Then, on asyncio, the start's cancelled task
    ended with a ``CancelledError`` that was its own context (CPython's exit stack, closed while the cancellation
    was handled), and anyio's task group spun on it forever: the worker's shutdown hung at full CPU."""
    peer = ScriptedPeer(era="legacy")
    peer.method_delays["initialize"] = 1000
    failure = await _attempt(peer, maximum=0.5)
    assert failure.type == "MaxTimeout"
    assert failure.details[0]["may_have_run"] == "no"
    assert peer.stats.arrivals["tools/call echo"] == 0
