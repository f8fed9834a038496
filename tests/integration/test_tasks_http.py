"""Task-backed calls over real Streamable HTTP on loopback: polls that fail on the transport are retried inside the
maximum, every ``tasks/*`` POST names its task in ``Mcp-Name``, and a task outlives the connection it started on.

Real sockets need real time (``real_clock``); the scripted tasks finish within a second or so.
"""

from __future__ import annotations

import anyio
import mcp_types
import pytest

from mcp_client import (
    Client,
    Event,
    HeaderMismatch,
    MaxTimeout,
    TaskCreated,
    TimeoutPolicy,
    TransportFailure,
    http,
)
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.http_peer import HttpFault, HttpPeer
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=5, maximum=10, connect=5)


def _client(url: str, events: list[Event], **options: object) -> Client:
    return Client(http(url), timeout=POLICY, on_event=events.append, retry=None, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("fault", ["http_500", "drop_mid_stream"])
async def test_a_poll_failing_twice_then_answering_does_not_fail_the_call(events: list[Event], fault: str) -> None:
    peer = HttpPeer(ScriptedPeer(tasks=True), faults={"tasks/get": HttpFault(fault, times=2)})  # type: ignore[arg-type]
    async with peer.serving() as url, _client(url, events) as client:
        result = await client.call_tool("task_work", {"seconds": 0.3, "text": "survived"})
    assert text_of(result) == "task done: survived"
    polls = peer.stats.posts("tasks/get")
    assert [log.fault for log in polls[:2]] == [fault, fault]
    assert len(polls) >= 3
    assert len({log.rpc_id for log in polls}) == len(polls)  # each retry is a new request with a new id
    assert sum(isinstance(e, TransportFailure) for e in events) == 2
    assert peer.stats.posts("tasks/cancel") == []


async def test_every_task_request_names_its_task_in_mcp_name(events: list[Event]) -> None:
    peer = HttpPeer(ScriptedPeer(tasks=True))
    async with peer.serving() as url, _client(url, events) as client:
        with pytest.raises(MaxTimeout):
            await client.call_tool("task_work", {"seconds": 30}, timeout=TimeoutPolicy(idle=5, maximum=0.6))
        await anyio.sleep(0.2)
    (created,) = [e for e in events if isinstance(e, TaskCreated)]
    task_posts = [log for log in peer.stats.posts() if (log.rpc_method or "").startswith("tasks/")]
    assert {log.rpc_method for log in task_posts} == {"tasks/get", "tasks/cancel"}
    assert all(log.headers.get("mcp-name") == created.task_id for log in task_posts)
    assert all(log.headers.get("mcp-method") == log.rpc_method for log in task_posts)
    assert peer.stats.errors == []
    assert peer.peer.tasks.tasks[created.task_id].status == "cancelled"


async def test_a_new_client_resumes_a_task_over_http(events: list[Event]) -> None:
    peer = HttpPeer(ScriptedPeer(tasks=True))
    async with peer.serving() as url:
        async with _client(url, events) as first, first.tool_call("task_work", {"seconds": 0.8}) as call:
            with anyio.fail_after(5):
                while call.task_id is None:
                    await anyio.sleep(0.01)
            task_id = call.task_id
            call.detach()
        assert peer.stats.posts("tasks/cancel") == []
        async with _client(url, events) as second:
            result = await second.task_result(task_id, timeout=5)
    assert text_of(result) == "task done: ok"


async def test_a_poll_answered_header_mismatch_never_sends_the_tool_call_again(events: list[Event]) -> None:
    """The header re-list is about the tools/call request; a poll that fails is the task's phase: one task only."""
    peer = HttpPeer(ScriptedPeer(tasks=True))
    async with peer.serving() as url, _client(url, events) as client:
        with pytest.raises(HeaderMismatch) as caught:
            await client.call_tool("task_work", {"seconds": 5, "poll_errors": [-32020, -32020]})
        await anyio.sleep(0.2)
    assert len(peer.stats.posts("tools/call")) == 1
    assert list(peer.peer.tasks.tasks) == ["task-1"]
    assert caught.value.tool == "task_work"
    assert may_have_run(caught.value) is Ran.MAYBE  # the task was created: it may have run
    assert peer.peer.tasks.tasks["task-1"].status == "cancelled"


async def test_answers_a_failed_tasks_update_lost_are_sent_again_not_asked_again(events: list[Event]) -> None:
    """The spec: clients SHOULD deduplicate input requests. The person answered once; the answer is re-sent."""
    ask = {
        "method": "elicitation/create",
        "params": {"message": "Colour?", "requestedSchema": {"type": "object", "properties": {}}},
    }
    script = [
        {"status": "input_required", "input": {"k1": ask}, "updated": 1},
        {"status": "input_required", "input": {"k1": ask}, "updated": 2},  # the update never arrived
        {"status": "working", "updated": 3},
        {"status": "completed", "updated": 4},
    ]
    asked: list[str] = []

    async def elicitation(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"colour": f"c{len(asked)}"})

    peer = HttpPeer(ScriptedPeer(tasks=True), faults={"tasks/update": HttpFault("http_500", times=1)})
    async with peer.serving() as url, _client(url, events, elicitation=elicitation) as client:
        result = await client.call_tool("task_work", {"script": script, "text": "answered"})
    assert text_of(result) == "task done: answered"
    assert asked == ["Colour?"]
    assert [log.fault for log in peer.stats.posts("tasks/update")] == ["http_500", None]
    delivered = peer.peer.tasks.tasks["task-1"].input_responses
    assert delivered == [{"k1": {"action": "accept", "content": {"colour": "c1"}}}]


async def test_a_legacy_result_read_that_fails_on_the_transport_is_read_again(events: list[Event]) -> None:
    """2025-11-25: tasks/result of a finished task is a read, safe to repeat."""
    peer = HttpPeer(ScriptedPeer(era="legacy", tasks=True), faults={"tasks/result": HttpFault("http_500", times=1)})
    async with peer.serving() as url, _client(url, events) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("task_work", {"seconds": 0.3, "text": "read twice"})
    assert text_of(result) == "task done: read twice"
    assert [log.fault for log in peer.stats.posts("tasks/result")] == ["http_500", None]
    assert peer.stats.posts("tasks/cancel") == []
