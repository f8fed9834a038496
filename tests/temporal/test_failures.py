"""What a failed MCP activity tells Temporal, one attempt at a time in temporalio's ActivityEnvironment.

Every error class the client raises inside an activity reaches Temporal as the typed ``ApplicationError`` (never an
exception group), with ``may_have_run`` and the retry the client's own rule allows; "did not run" only when true
(the maximum passing between attempts, a task left behind); the checkpoint confirmed in Temporal before the request
leaves, withdrawn when it surely never left; a clock that is not Temporal's. The scripted peer counts what reached
the server. Real time, asyncio (Temporal's SDK needs it); nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import mcp_types
import pytest
from temporalio.activity import ActivityCancellationDetails
from temporalio.api.failure.v1 import Failure
from temporalio.common import RetryPolicy as TemporalRetryPolicy
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from mcp_client import Client, MaxTimeout, RetryPolicy, TimeoutPolicy, TransportError, http, memory
from mcp_client.client.task_reference import TaskReference
from mcp_client.integrations.temporal import Checkpoint, activity_name
from mcp_client.integrations.temporal.activities import MCPActivities
from mcp_client.integrations.temporal.connections import Connections
from mcp_client.integrations.temporal.failures import retryable
from mcp_client.integrations.temporal.wire import RequestInput, ToolCallInput
from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio

POLICY = TimeoutPolicy(idle=10, maximum=30, connect=10)
UNSAFE = {"echo": RetryPolicy(idempotent=False)}  # echo is read-only; this rule makes it a call not safe to repeat


def _received(peer: ScriptedPeer, method: str) -> int:
    return sum(1 for m in peer.stats.received if m.get("method") == method)


def _environment(
    *,
    details: list[Any] | None = None,
    attempt: int = 1,
    elapsed: float = 0.0,
    skew: float = 0.0,
    schedule_to_close: float | None = None,
) -> ActivityEnvironment:
    """An attempt whose activity was first scheduled ``elapsed`` s before it started, on a service whose clock is
    ``skew`` s off the worker's."""
    started = datetime.now(UTC) + timedelta(seconds=skew)
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info,
        scheduled_time=started - timedelta(seconds=elapsed),
        started_time=started,
        heartbeat_details=details or [],
        attempt=attempt,
        heartbeat_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(seconds=schedule_to_close) if schedule_to_close is not None else None,
    )
    return env


class Confirmed:
    """The acknowledged heartbeat: a round trip that awaits, as a codec with a key service does. Records what the
    server had received when each confirmation returned; ``fail`` makes it raise (a codec that failed)."""

    def __init__(self, peer: ScriptedPeer, *, fail: bool = False, delay: float = 0.05) -> None:
        self.peer = peer
        self.fail = fail
        self.delay = delay
        self.confirmed: list[tuple[dict[str, Any], int]] = []

    async def __call__(self, details: Any) -> None:
        await anyio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("the key service is unavailable")
        self.confirmed.append((details, _received(self.peer, "tools/call")))

    @property
    def last(self) -> list[Any]:
        """What Temporal holds for the next attempt."""
        return [self.confirmed[-1][0]] if self.confirmed else []


def _activities(peer: ScriptedPeer, confirm: Any, **options: Any) -> MCPActivities:
    def factory() -> Client:
        return Client(memory(peer.serve), timeout=POLICY, **options)

    return MCPActivities(Connections({"peer": factory}), confirm=confirm)


def _texts(result: mcp_types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]


def _operation(activities: MCPActivities, operation: str) -> Callable[..., Awaitable[Any]]:
    by_name = {getattr(fn, "__temporal_activity_definition").name: fn for fn in activities.definitions()}
    return by_name[activity_name("peer", operation)]


async def _fail(activities: MCPActivities, env: ActivityEnvironment, operation: str, request: Any) -> ApplicationError:
    async with activities.connections.running():
        with pytest.raises(ApplicationError) as caught:
            await env.run(_operation(activities, operation), request)
    return caught.value


async def _task_reference(peer: ScriptedPeer, arguments: dict[str, Any]) -> TaskReference:
    """A task made by an earlier attempt, left running on the server."""
    async with Client(memory(peer.serve), timeout=POLICY) as client, client.tool_call("task_work", arguments) as call:
        reference = await call.handoff()
        assert reference is not None
        call.detach()
    return reference


TOOL_FAILURES = [
    # (operation, request, class, may_have_run, non_retryable, client options)
    ("call_tool", ToolCallInput("no_such_tool", {}, 10, 30), "InvalidParams", "no", True),
    ("call_tool", ToolCallInput("fail", {"code": -32603}, 10, 30), "InternalError", "maybe", True),
    ("call_tool", ToolCallInput("fail", {"code": -32601}, 10, 30), "MethodNotFound", "no", True),
    ("call_tool", ToolCallInput("slow", {"seconds": 5}, 10, 0.3), "MaxTimeout", "maybe", True),
    ("call_tool", ToolCallInput("silent", {}, 0.3, 30), "IdleTimeout", "maybe", True),
    ("call_tool", ToolCallInput("die", {}, 10, 30), "TransportError", "maybe", True),
    (
        "call_tool",
        ToolCallInput("task_work", {"seconds": 0.1, "outcome": "failed"}, 10, 30),
        "TaskFailed",
        "maybe",
        True,
    ),
    ("call_tool", ToolCallInput("bad_result_type", {}, 10, 30), "ProtocolError", "maybe", True),
    ("get_prompt", RequestInput(name="no_such_prompt"), "InvalidParams", "no", True),
    ("read_resource", RequestInput(uri="memo://nowhere"), "InvalidParams", "no", True),
    ("list_tools", RequestInput(maximum=0.0), "MaxTimeout", "no", True),
]


@pytest.mark.parametrize(("operation", "request_", "kind", "ran", "non_retryable"), TOOL_FAILURES)
async def test_every_failure_inside_an_activity_is_the_typed_error(
    operation: str, request_: Any, kind: str, ran: str, non_retryable: bool
) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    failure = await _fail(_activities(peer, Confirmed(peer)), _environment(), operation, request_)
    assert (failure.type, failure.non_retryable) == (kind, non_retryable)
    assert failure.details[0]["may_have_run"] == ran
    assert not isinstance(failure.__cause__, BaseExceptionGroup)


async def test_a_resumed_task_that_failed_is_typed_and_not_retried() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    reference = await _task_reference(peer, {"seconds": 0.2, "outcome": "failed"})
    env = _environment(details=[Checkpoint("task", reference.to_dict()).to_details()], attempt=2)
    failure = await _fail(_activities(peer, Confirmed(peer)), env, "call_tool", ToolCallInput("task_work"))
    assert (failure.type, failure.non_retryable, failure.details[0]["may_have_run"]) == ("TaskFailed", True, "maybe")
    assert _received(peer, "tools/call") == 1  # the first attempt's only


async def test_a_server_that_cannot_be_reached_is_a_retryable_connect_error() -> None:
    activities = MCPActivities(
        Connections({"peer": lambda: Client(http("http://127.0.0.1:9/mcp"), timeout=TimeoutPolicy(connect=5))}),
        confirm=Confirmed(ScriptedPeer()),
    )
    failure = await _fail(activities, _environment(), "call_tool", ToolCallInput("echo"))
    assert (failure.type, failure.non_retryable, failure.details[0]["may_have_run"]) == ("ConnectError", False, "no")


# -- "did not run" only when true: the maximum passing between attempts -------------------------------------------


async def test_a_maximum_passed_before_a_first_attempt_did_not_run() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment(elapsed=40)
    failure = await _fail(_activities(peer, Confirmed(peer)), env, "call_tool", ToolCallInput("echo", {}, 10, 30))
    assert (failure.type, failure.details[0]["may_have_run"]) == ("MaxTimeout", "no")
    assert _received(peer, "tools/call") == 0


async def test_a_maximum_passed_after_an_attempt_that_wrote_may_have_run() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment(details=[Checkpoint("written").to_details()], attempt=2, elapsed=40)
    failure = await _fail(_activities(peer, Confirmed(peer)), env, "call_tool", ToolCallInput("echo", {}, 10, 30))
    assert (failure.type, failure.non_retryable) == ("MaxTimeout", True)
    assert failure.details[0]["may_have_run"] == "maybe"
    assert "did not run" not in failure.message
    assert "never sent" not in failure.message
    assert _received(peer, "tools/call") == 0


async def test_a_maximum_passed_with_a_task_left_behind_cancels_the_task() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    reference = await _task_reference(peer, {"seconds": 30})
    env = _environment(details=[Checkpoint("task", reference.to_dict()).to_details()], attempt=2, elapsed=40)
    failure = await _fail(_activities(peer, Confirmed(peer)), env, "call_tool", ToolCallInput("task_work", {}, 10, 30))
    assert (failure.type, failure.details[0]["may_have_run"]) == ("MaxTimeout", "maybe")
    (task,) = peer.tasks.tasks.values()
    assert (_received(peer, "tasks/cancel"), task.status) == (1, "cancelled")  # never left without an owner


# -- no window: written is in Temporal before the request leaves; withdrawn when it never did ---------------------


async def test_written_is_confirmed_in_temporal_before_the_request_leaves_with_an_awaiting_codec() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    confirm = Confirmed(peer, delay=0.05)
    async with (activities := _activities(peer, confirm)).connections.running():
        await _environment().run(activities.call_tool, "peer", ToolCallInput("echo", {"text": "hi"}, 10, 30))
    assert confirm.confirmed[0] == ({"phase": "written"}, 0)  # acknowledged while no tools/call had been sent
    assert _received(peer, "tools/call") == 1


async def test_a_checkpoint_that_cannot_be_recorded_sends_nothing_and_is_retried() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    failure = await _fail(
        _activities(peer, Confirmed(peer, fail=True)), _environment(), "call_tool", ToolCallInput("echo", {}, 10, 30)
    )
    assert (failure.type, failure.non_retryable) == ("CheckpointNotRecorded", False)
    assert failure.details[0]["may_have_run"] == "no"
    assert _received(peer, "tools/call") == 0


async def test_a_codec_that_never_answers_costs_the_calls_maximum_and_sends_nothing() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    confirmed = Confirmed(peer)

    async def stuck(details: Any) -> None:
        if details == {"phase": "written"}:
            await anyio.sleep_forever()
        await confirmed(details)  # the withdrawal gets through

    failure = await _fail(_activities(peer, stuck), _environment(), "call_tool", ToolCallInput("echo", {}, 10, 0.3))
    assert (failure.type, failure.details[0]["may_have_run"]) == ("CheckpointNotRecorded", "no")
    assert _received(peer, "tools/call") == 0
    assert confirmed.last == [{"phase": "unsent"}]


async def test_a_call_that_never_left_withdraws_written_and_the_next_attempt_sends_it() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    confirm = Confirmed(peer)
    activities = _activities(peer, confirm, retry_rules=UNSAFE, retry=None)
    request = ToolCallInput("echo", {"text": "once"}, 10, 30)
    async with activities.connections.running():
        connection = await activities.connections.get("peer")
        await connection.tool("echo")  # listed while the server was up
        with pytest.raises(TransportError):
            await connection.client.call_tool("die")  # the connection is now dead: the next write cannot leave
        with pytest.raises(ApplicationError) as caught:
            await _environment().run(activities.call_tool, "peer", request)
        failure = caught.value
        assert (failure.type, failure.non_retryable, failure.details[0]["may_have_run"]) == (
            "TransportError",
            False,
            "no",
        )
        assert confirm.last == [{"phase": "unsent"}]  # what the next attempt reads
        result = await _environment(details=confirm.last, attempt=2).run(activities.call_tool, "peer", request)
    assert _texts(result) == ["once"]
    assert peer.stats.calls_by_tool["echo"] == 1


# -- the retry rule, the final timeout, the clock, a beat that fails ---------------------------------------------


def test_the_retry_rule_reads_what_the_call_recorded() -> None:
    poll = TransportError("the connection dropped while the task was polled", written=False)
    poll.may_have_run = True  # the server made a task: the call may have run
    assert retryable(poll, idempotent=False) is False
    assert retryable(poll, idempotent=False, resumable=True) is True  # the next attempt resumes the task
    assert retryable(poll, idempotent=True) is True


@pytest.mark.parametrize(
    ("details", "last_attempt", "confirm_fails", "cancels"),
    [
        (ActivityCancellationDetails(timed_out=True), False, False, 0),  # another attempt resumes it
        (ActivityCancellationDetails(timed_out=True), True, False, 1),  # the final timeout: no attempt follows
        (ActivityCancellationDetails(worker_shutdown=True), False, True, 1),  # its reference is not in Temporal
    ],
)
async def test_a_task_is_left_running_only_for_an_attempt_that_will_resume_it(
    details: ActivityCancellationDetails, last_attempt: bool, confirm_fails: bool, cancels: int
) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment(schedule_to_close=60)
    if last_attempt:
        env.info = dataclasses.replace(env.info, retry_policy=TemporalRetryPolicy(maximum_attempts=1))
    made = anyio.Event()
    confirm = Confirmed(peer)

    async def confirm_then_cancel(beat: Any) -> None:
        try:
            if beat["phase"] == "task" and confirm_fails:
                raise RuntimeError("the key service is unavailable")
            await confirm(beat)
        finally:
            if beat["phase"] == "task":
                made.set()

    activities = _activities(peer, confirm_then_cancel)

    async def cancel_when_made() -> None:
        await made.wait()
        await anyio.sleep(0.05)
        env.cancel(details)

    async with activities.connections.running(), anyio.create_task_group() as group:
        group.start_soon(cancel_when_made)
        with pytest.raises(asyncio.CancelledError):
            await env.run(activities.call_tool, "peer", ToolCallInput("task_work", {"seconds": 30}, 10, None))
    (task,) = peer.tasks.tasks.values()
    assert _received(peer, "tasks/cancel") == cancels
    assert task.status == ("cancelled" if cancels else "working")


@pytest.mark.parametrize("skew", [-3600.0, 3600.0])
async def test_a_worker_clock_off_by_an_hour_neither_refuses_nor_extends_the_call(skew: float) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    activities = _activities(peer, Confirmed(peer))
    async with activities.connections.running():
        result = await _environment(skew=skew).run(activities.call_tool, "peer", ToolCallInput("echo", {"text": "a"}))
        assert _texts(result) == ["a"]
        failure = None
        try:
            await _environment(skew=skew, elapsed=40).run(
                activities.call_tool, "peer", ToolCallInput("echo", {"text": "b"}, 10, 30)
            )
        except ApplicationError as exc:
            failure = exc
    assert failure is not None
    assert failure.type == "MaxTimeout"  # 40 s of Temporal's 30 s maximum had passed
    assert peer.stats.calls_by_tool["echo"] == 1


async def test_a_beat_the_sdk_could_not_record_after_the_write_is_typed_and_cancels_the_call() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment()
    activities = _activities(peer, Confirmed(peer), retry_rules={"silent": RetryPolicy(idempotent=False)})

    async def cancel_when_sent() -> None:
        while _received(peer, "tools/call") == 0:
            await anyio.sleep(0.01)
        env.cancel(ActivityCancellationDetails())  # what the SDK does when a heartbeat fails to encode: no reason

    async with activities.connections.running(), anyio.create_task_group() as group:
        group.start_soon(cancel_when_sent)
        with pytest.raises(ApplicationError) as caught:
            await env.run(activities.call_tool, "peer", ToolCallInput("silent", {}, 10, 30))
    failure = caught.value
    assert (failure.type, failure.non_retryable, failure.details[0]["may_have_run"]) == (
        "CheckpointNotRecorded",
        True,
        "maybe",
    )
    assert _received(peer, "notifications/cancelled") == 1


# -- one client per worker, or per workflow ------------------------------------------------------------------------


@pytest.mark.parametrize(("per_workflow", "clients"), [(False, 1), (True, 2)])
async def test_workflows_share_the_workers_client_unless_each_gets_its_own(per_workflow: bool, clients: int) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    built: list[Client] = []

    def factory() -> Client:
        built.append(Client(memory(peer.serve), timeout=POLICY))
        return built[-1]

    activities = MCPActivities(Connections({"peer": factory}, per_workflow=per_workflow), confirm=Confirmed(peer))
    async with activities.connections.running():
        for workflow_id in ("alice", "bob"):
            env = _environment()
            env.info = dataclasses.replace(env.info, workflow_id=workflow_id)
            result = await env.run(activities.call_tool, "peer", ToolCallInput("echo", {"text": workflow_id}))
            assert _texts(result) == [workflow_id]
        if per_workflow:
            assert not activities.connections.live()  # each workflow's own client closed after its activity
    assert len(built) == clients


# -- a beat the SDK could not record, anywhere in the activity ---------------------------------------------------
# The SDK cancels the activity with no reason when a fire-and-forget beat fails to encode (a codec that fails only
# sometimes) and, if the activity then ends in its cancellation, reports the codec's own error to Temporal: its
# class as the type, its text in history, retryable, with no may_have_run.


class _SdkCancels:
    """A confirmation during which the SDK's own beat of the same details fails to encode: it cancels the activity
    (no reason) while the confirmation is still in flight."""

    def __init__(self, env: ActivityEnvironment, peer: ScriptedPeer, phase: str) -> None:
        self.env, self.confirmed, self.phase = env, Confirmed(peer), phase

    async def __call__(self, details: Any) -> None:
        if details.get("phase") == self.phase:
            self.env.cancel(ActivityCancellationDetails())
            await anyio.sleep(1)
        await self.confirmed(details)


async def test_a_beat_the_sdk_could_not_record_while_written_is_confirmed_is_typed_and_sends_nothing() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment()
    activities = _activities(peer, _SdkCancels(env, peer, "written"), retry_rules=UNSAFE)
    failure = await _fail(activities, env, "call_tool", ToolCallInput("echo", {"text": "x"}, 10, 30))
    assert (failure.type, failure.non_retryable, failure.details[0]["may_have_run"]) == (
        "CheckpointNotRecorded",
        False,
        "no",
    )
    assert _received(peer, "tools/call") == 0


async def test_a_beat_the_sdk_could_not_record_while_a_task_is_resumed_is_typed() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    reference = await _task_reference(peer, {"seconds": 30})
    env = _environment(details=[Checkpoint("task", reference.to_dict()).to_details()], attempt=2)

    def beat_fails(*_: Any) -> None:  # the resumed attempt's first beat cannot be encoded
        env.cancel(ActivityCancellationDetails())

    env.on_heartbeat = beat_fails
    failure = await _fail(_activities(peer, Confirmed(peer)), env, "call_tool", ToolCallInput("task_work", {}, 10, 30))
    assert (failure.type, failure.details[0]["may_have_run"]) == ("CheckpointNotRecorded", "maybe")
    assert _received(peer, "tools/call") == 1  # the first attempt's only


async def test_a_beat_the_sdk_could_not_record_during_a_read_is_typed_and_retried() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    env = _environment()
    env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=0.03))  # a beat at once

    def beat_fails(*_: Any) -> None:
        env.cancel(ActivityCancellationDetails())

    class SlowListing(Client):
        async def list_tools(self, **options: Any) -> list[mcp_types.Tool]:
            await anyio.sleep(1)  # long enough for a beat
            return await super().list_tools(**options)

    env.on_heartbeat = beat_fails
    activities = MCPActivities(
        Connections({"peer": lambda: SlowListing(memory(peer.serve), timeout=POLICY)}), confirm=Confirmed(peer)
    )
    failure = await _fail(activities, env, "list_tools", RequestInput())
    assert (failure.type, failure.non_retryable, failure.details[0]["may_have_run"]) == (
        "CheckpointNotRecorded",
        False,
        "maybe",
    )


# -- an attempt after one that may have run never says "did not run" --------------------------------------------


async def test_an_attempt_that_cannot_connect_after_one_that_wrote_says_may_have_run() -> None:
    """Attempt 1 sent the call and its worker died; attempt 2 cannot reach the server (it restarts). Should that be
    the last attempt, the workflow must not read "no": the tool may have run on attempt 1."""
    activities = MCPActivities(
        Connections({"peer": lambda: Client(http("http://127.0.0.1:9/mcp"), timeout=TimeoutPolicy(connect=5))}),
        confirm=Confirmed(ScriptedPeer()),
    )
    env = _environment(details=[Checkpoint("written").to_details()], attempt=2)
    failure = await _fail(activities, env, "call_tool", ToolCallInput("echo"))
    assert (failure.type, failure.non_retryable) == ("ConnectError", False)  # another attempt may still connect
    assert failure.details[0]["may_have_run"] == "maybe"
    assert "did not run" not in failure.message
    assert "safe to try again" not in failure.message


# -- the listing a call needs is the call's -----------------------------------------------------------------------


class _UnansweredListing(anyio.abc.ByteReceiveStream):
    """What the server receives, with every ``tools/list`` lost on the way: a listing that is never answered."""

    def __init__(self, inner: anyio.abc.ByteReceiveStream) -> None:
        self.inner = inner

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            data = await self.inner.receive(max_bytes)
            if b'"tools/list"' not in data:
                return data

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_the_listing_a_call_needs_ends_by_the_calls_maximum_and_sends_nothing() -> None:
    peer = ScriptedPeer(era="modern", tasks=True)

    async def serve(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        await peer.serve(_UnansweredListing(receive), send)

    client_policy = TimeoutPolicy(idle=None, maximum=20, connect=10)  # the worker client's own, far longer
    activities = MCPActivities(
        Connections({"peer": lambda: Client(memory(serve), timeout=client_policy)}), confirm=Confirmed(peer)
    )
    failure = await _fail(activities, _environment(), "call_tool", ToolCallInput("echo", {}, None, 0.3))
    assert isinstance(failure.__cause__, MaxTimeout)
    assert failure.__cause__.timeout is not None
    assert failure.__cause__.timeout <= 0.3  # the call's maximum, not the client's
    assert failure.details[0]["may_have_run"] == "no"  # the tools/call never left
    assert _received(peer, "tools/call") == 0


# -- what reaches history: the failure and its whole cause chain --------------------------------------------------


async def test_a_codecs_error_text_never_reaches_history_through_the_cause_chain() -> None:
    """A payload codec's error may name its key service, a key id or a token; the worker logs it, history must not
    have it (Temporal's failure converter writes every ``__cause__`` of the failure, in clear)."""
    peer = ScriptedPeer(era="modern", tasks=True)

    async def codec_fails(details: Any) -> None:
        raise RuntimeError("https://kms.example/v1/keys/k1?token=KMS-SECRET refused")

    failure = await _fail(_activities(peer, codec_fails), _environment(), "call_tool", ToolCallInput("echo", {}))
    assert failure.type == "CheckpointNotRecorded"
    recorded = Failure()
    await DataConverter.default.encode_failure(failure, recorded)
    assert "KMS-SECRET" not in str(recorded)
    assert "kms.example" not in str(recorded)
    assert _received(peer, "tools/call") == 0
