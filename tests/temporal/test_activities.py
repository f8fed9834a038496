"""The MCP activities one attempt at a time, in temporalio's ActivityEnvironment, against the scripted peer.

What a real crash cannot show precisely: the order of the beats (``written`` is the first, handed to Temporal
before the request leaves; the task's reference follows), what the next attempt does with each checkpoint, the
cancel that reaches the server or is held back when only the worker goes away, and the retry rule. These run on
asyncio (Temporal's SDK needs it) on real time, with tasks of a fraction of a second; nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import mcp_types
import pytest
from temporalio.activity import ActivityCancellationDetails
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from mcp_client import (
    Client,
    ConnectError,
    IdleTimeout,
    MaxTimeout,
    RetryPolicy,
    ServerError,
    TimeoutPolicy,
    TransportError,
    http,
    memory,
)
from mcp_client.integrations.temporal import Checkpoint, WorkerLost, activity_name
from mcp_client.integrations.temporal.activities import MCPActivities
from mcp_client.integrations.temporal.connections import Connections
from mcp_client.integrations.temporal.failures import retryable
from mcp_client.integrations.temporal.wire import RequestInput, ToolCallInput
from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio

POLICY = TimeoutPolicy(idle=10, maximum=30, connect=10)


def _received(peer: ScriptedPeer, method: str) -> int:
    return sum(1 for m in peer.stats.received if m.get("method") == method)


def _environment(*, details: list[Any] | None = None, attempt: int = 1) -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info,
        scheduled_time=datetime.now(UTC),
        started_time=datetime.now(UTC),
        heartbeat_details=details or [],
        attempt=attempt,
        heartbeat_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=None,
    )
    return env


async def _confirmed(details: Any) -> None:
    """The acknowledged heartbeat, as the worker's client gives it: a round trip that awaits (as a codec may)."""
    await anyio.sleep(0.01)


def _activities(peer: ScriptedPeer, confirm: Any = _confirmed, **options: Any) -> MCPActivities:
    return MCPActivities(
        Connections({"peer": lambda: Client(memory(peer.serve), timeout=POLICY, **options)}), confirm=confirm
    )


async def _run(activities: MCPActivities, env: ActivityEnvironment, request: ToolCallInput) -> Any:
    async with activities.connections.running():
        return await env.run(activities.call_tool, "peer", request)


def _text(result: Any) -> str:
    return " ".join(block.text for block in result.content)


async def test_the_first_beat_is_written_before_the_request_leaves() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment()
    beats: list[tuple[Any, int]] = []
    env.on_heartbeat = lambda *details: beats.append((details, _received(peer, "tools/call")))
    result = await _run(_activities(peer), env, ToolCallInput("echo", {"text": "hi"}, 10, 30))
    assert _text(result) == "hi"
    assert beats[0] == (({"phase": "written"},), 0)  # handed to Temporal while no tools/call had reached the server


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_task_reference_follows_the_written_beat(era: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    env = _environment()
    beats: list[Any] = []
    env.on_heartbeat = lambda *details: beats.append(details[0] if details else None)
    result = await _run(_activities(peer), env, ToolCallInput("task_work", {"seconds": 0.3, "text": "x"}, 10, 30))
    assert _text(result) == "task done: x"
    assert beats[0] == {"phase": "written"}
    tasks = [beat for beat in beats if beat and beat["phase"] == "task"]
    assert tasks
    assert tasks[0]["task"]["taskId"] in peer.tasks.tasks
    assert tasks[0]["task"]["tool"] == "task_work"


async def test_the_next_attempt_resumes_the_task_and_never_calls_the_tool() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with (
        Client(memory(peer.serve), timeout=POLICY) as client,
        client.tool_call("task_work", {"seconds": 0.5, "text": "resumed"}) as call,
    ):
        reference = await call.handoff()
        assert reference is not None
        call.detach()
    env = _environment(details=[Checkpoint("task", reference.to_dict()).to_details()], attempt=2)
    beats: list[Any] = []
    env.on_heartbeat = lambda *details: beats.append(details[0])
    result = await _run(_activities(peer), env, ToolCallInput("task_work", {"seconds": 0.5, "text": "resumed"}, 10, 30))
    assert _text(result) == "task done: resumed"
    assert _received(peer, "tools/call") == 1  # the first attempt's only
    assert beats[0] == {"phase": "task", "task": reference.to_dict()}  # kept for an attempt after this one


async def test_a_call_that_may_have_run_is_not_repeated_unless_safe() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    written = [Checkpoint("written").to_details()]
    unsafe = _activities(peer, retry_rules={"echo": RetryPolicy(idempotent=False)})
    with pytest.raises(ApplicationError) as caught:
        await _run(unsafe, _environment(details=written, attempt=2), ToolCallInput("echo", {"text": "again"}))
    failure = caught.value
    assert (failure.type, failure.non_retryable) == ("WorkerLost", True)
    assert "may have run" in failure.message
    assert failure.details[0]["may_have_run"] == "maybe"
    assert _received(peer, "tools/call") == 0
    # echo is annotated read-only: without the rule it is safe to repeat, so the next attempt calls it again.
    result = await _run(
        _activities(peer), _environment(details=written, attempt=2), ToolCallInput("echo", {"text": "2"})
    )
    assert _text(result) == "2"
    assert _received(peer, "tools/call") == 1


@pytest.mark.parametrize(
    ("details", "cancels"),
    [
        (ActivityCancellationDetails(worker_shutdown=True), 0),  # the next attempt resumes the task
        (ActivityCancellationDetails(cancel_requested=True), 1),  # the workflow cancelled: tasks/cancel
    ],
)
async def test_a_cancelled_task_call_is_cancelled_on_the_server_only_when_the_workflow_asked(
    details: ActivityCancellationDetails, cancels: int
) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment()
    made = anyio.Event()

    async def confirm(details: Any) -> None:
        await _confirmed(details)
        if details["phase"] == "task":
            made.set()  # the reference is in Temporal: the next attempt can resume the task

    activities = _activities(peer, confirm=confirm)

    async def cancel_when_made() -> None:
        await made.wait()
        env.cancel(details)

    async with activities.connections.running(), anyio.create_task_group() as group:
        group.start_soon(cancel_when_made)
        with pytest.raises(asyncio.CancelledError):  # the activity ends cancelled, as Temporal expects
            await env.run(activities.call_tool, "peer", ToolCallInput("task_work", {"seconds": 30}, 10, 30))
    (task,) = peer.tasks.tasks.values()
    assert _received(peer, "tasks/cancel") == cancels
    assert task.status == ("cancelled" if cancels else "working")


async def test_a_server_that_cannot_be_reached_is_retryable_and_the_next_activity_connects_anew() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    built: list[Client] = []

    def factory() -> Client:
        # The first client points at a port nobody listens on; the next one at the peer.
        transport = http("http://127.0.0.1:9/mcp") if not built else memory(peer.serve)
        built.append(Client(transport, timeout=TimeoutPolicy(connect=5), retry=None))
        return built[-1]

    activities = MCPActivities(Connections({"peer": factory}), confirm=_confirmed)
    request = ToolCallInput("echo", {"text": "back"})
    async with activities.connections.running():
        with pytest.raises(ApplicationError) as caught:
            await _environment().run(activities.call_tool, "peer", request)
        assert (caught.value.type, caught.value.non_retryable) == ("ConnectError", False)
        result = await _environment(attempt=2).run(activities.call_tool, "peer", request)
    assert _text(result) == "back"
    assert len(built) == 2


async def test_a_reference_for_another_server_fails_for_good_and_calls_nothing() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    elsewhere = {"server": "endpoint:0123", "taskId": "t1", "protocol": "2026-07-28"}
    env = _environment(details=[Checkpoint("task", elsewhere).to_details()], attempt=2)
    with pytest.raises(ApplicationError) as caught:
        await _run(_activities(peer), env, ToolCallInput("task_work", {"seconds": 1}))
    assert (caught.value.type, caught.value.non_retryable) == ("InvalidTaskReference", True)
    assert "another server" in caught.value.message
    assert _received(peer, "tools/call") == 0
    assert _received(peer, "tasks/get") == 0


def _written(written: bool) -> TransportError:
    return TransportError("boom", written=written)


@pytest.mark.parametrize(
    ("error", "idempotent", "expected"),
    [
        (_written(False), False, True),  # never left: safe
        (_written(True), False, False),  # may have run, not safe to repeat
        (_written(True), True, True),  # idempotent
        (ServerError("internal", code=-32603), True, False),  # JSON-RPC errors are answers, never retried
        (MaxTimeout("late", timeout=1), True, False),  # the maximum is final
        (IdleTimeout("quiet", timeout=1), True, False),  # only where the policy retries idle timeouts
        (WorkerLost("t", None, attempt=2), True, False),
        (ConnectError("no server"), False, True),  # nothing reached a server: another attempt may
    ],
)
def test_the_retry_rule_is_the_clients(error: Any, idempotent: bool, expected: bool) -> None:
    assert retryable(error, idempotent=idempotent) is expected


def test_idle_timeouts_are_retryable_where_the_policy_says() -> None:
    policy = RetryPolicy(retry_idle_timeout=True)
    assert retryable(IdleTimeout("quiet", timeout=1), idempotent=True, policy=policy) is True
    assert retryable(IdleTimeout("quiet", timeout=1), idempotent=False, policy=policy) is False


async def test_the_read_operations_return_the_sdk_types_through_the_plugins_converter() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    activities = _activities(peer)
    by_name = {getattr(fn, "__temporal_activity_definition").name: fn for fn in activities.definitions()}
    converter = DataConverter(payload_converter_class=PydanticPayloadConverter).payload_converter
    reads: list[tuple[str, RequestInput, Any]] = [
        ("list_tools", RequestInput(), list[mcp_types.Tool]),
        ("list_prompts", RequestInput(), list[mcp_types.Prompt]),
        ("get_prompt", RequestInput(name="greet", arguments={"name": "Ada"}), mcp_types.GetPromptResult),
        ("list_resources", RequestInput(), list[mcp_types.Resource]),
        ("read_resource", RequestInput(uri="memo://hello"), mcp_types.ReadResourceResult),
    ]
    async with activities.connections.running():
        for operation, request, result_type in reads:
            value = await _environment().run(by_name[activity_name("peer", operation)], request)
            (decoded,) = converter.from_payloads(converter.to_payloads([value]), [result_type])
            assert decoded == value, operation
    tool_result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="no")], is_error=True, structured_content={"a": 1}
    )
    (decoded_result,) = converter.from_payloads(converter.to_payloads([tool_result]), [mcp_types.CallToolResult])
    assert decoded_result == tool_result  # isError is a result, carried as one
