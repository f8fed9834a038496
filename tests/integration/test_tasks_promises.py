"""The promises of a plain call hold for a task-backed one: whether it may have run is told truthfully, closing
the client ends the calls awaited elsewhere with a typed error and cancels their tasks, input is asked for once.

Against the scripted peer in both eras, on trio's MockClock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types
import pytest

from mcp_client import (
    Call,
    Client,
    Event,
    MaxTimeout,
    Progress,
    ProtocolError,
    RequestCancelled,
    RequestFinished,
    Slow,
    TaskCancelSent,
    TimeoutPolicy,
    memory,
)
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of
from tests.integration.line_server import JSON, LineServer, Notify, RpcError

POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]
ERAS = [("modern", "2026-07-28"), ("legacy", "2025-11-25")]


async def task_made(call: Call[Any]) -> str:
    """Wait (bounded) until the server made the call's task; its id."""
    with anyio.fail_after(5):
        while call.task_id is None:
            await anyio.sleep(0.01)
    return call.task_id


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_maximum_between_polls_tells_the_model_the_task_may_have_run(
    connect: Connect, era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("task_work", {"seconds": 60}, timeout=TimeoutPolicy(idle=5, maximum=2.5))
    error = caught.value
    assert may_have_run(error) is Ran.MAYBE
    assert error.may_have_run is True
    assert "did not run" not in error.for_model
    assert "check its effects before calling it again" in error.for_model
    assert error.tool == "task_work"


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_cancelled_task_call_tells_the_model_it_may_have_run(connect: Connect, era: str, version: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client, client.tool_call("task_work", {"seconds": 60}) as call:
        await task_made(call)
        await anyio.sleep(1)
        call.cancel("user pressed stop")
        with pytest.raises(RequestCancelled) as caught:
            await call.result()
    assert may_have_run(caught.value) is Ran.MAYBE
    assert "did not run" not in caught.value.for_model


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_closing_the_client_ends_a_task_call_awaited_elsewhere_and_cancels_its_task(
    connect: Connect, events: list[Event], era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    caught: list[BaseException] = []
    async with anyio.create_task_group() as task_group, connect(peer) as client:

        async def caller() -> None:
            try:
                await client.call_tool("task_work", {"seconds": 60})
            except Exception as exc:  # what the caller sees, whatever it is
                caught.append(exc)

        task_group.start_soon(caller)
        await anyio.sleep(1)
        started = anyio.current_time()
        await client.aclose()  # while the caller, in a task of its own, waits for the task
        closing = anyio.current_time() - started
    (error,) = caught
    assert isinstance(error, RequestCancelled)
    assert may_have_run(error) is Ran.MAYBE
    assert closing < 1  # bounded by the cancel timeout, and here the peer answers at once
    task = peer.tasks.tasks["task-1"]
    assert (task.cancel_requests, task.status) == (1, "cancelled")
    assert [(e.task_id, e.acknowledged) for e in events if isinstance(e, TaskCancelSent)] == [("task-1", True)]


def _legacy_task_server() -> LineServer:
    """A 2025-11-25 server that offers task-backed tool calls and lists two tools that allow them; a call of
    ``changes`` says the tools changed (as the server answers)."""

    async def handle(method: str, params: JSON, notify: Notify) -> JSON:
        if method == "tools/list":
            tool = {"inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}
            return {"tools": [{"name": "plain", **tool}, {"name": "changes", **tool}]}
        if method == "tools/call":
            if params.get("name") == "changes":
                await notify("notifications/tools/list_changed", {})
            return {"content": []}
        raise RpcError(-32601, method)

    capabilities = {"tools": {"listChanged": True}, "tasks": {"requests": {"tools": {"call": {}}}}}
    return LineServer(handle, era="legacy", capabilities=capabilities)


async def test_a_tool_missing_from_the_listing_does_not_list_the_tools_again_on_every_call() -> None:
    server = _legacy_task_server()
    async with Client(memory(server.serve), timeout=POLICY, cache=False) as client:
        for _ in range(3):
            await client.call_tool("unlisted")
    assert server.methods().count("tools/list") == 1
    assert server.methods().count("tools/call") == 3


async def test_list_changed_drops_the_task_support_hints_they_are_learnt_again() -> None:
    server = _legacy_task_server()
    async with Client(memory(server.serve), timeout=POLICY, cache=False) as client:
        await client.call_tool("plain")  # lists the tools first: "plain" allows a task
        await client.call_tool("changes")  # the server says its tools changed
        await client.call_tool("plain")  # stale hints are worse than none: listed again
    assert server.methods().count("tools/list") == 2


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_status_notification_wakes_the_poll_of_its_task(connect: Connect, era: str, version: str) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        started = anyio.current_time()
        arguments = {"seconds": 1, "poll_interval_ms": 30_000, "notify_status": True}
        await client.call_tool("task_work", arguments)
        elapsed = anyio.current_time() - started
    assert elapsed == pytest.approx(1, abs=0.01)  # not the 30 s the server asked to wait between polls
    assert peer.tasks.tasks["task-1"].polls == 1


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_task_backed_call_is_one_call_one_request_finished_and_slow_in_the_task_phase(
    connect: Connect, events: list[Event], era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        policy = TimeoutPolicy(idle=5, maximum=30, notify_after=2)
        await client.call_tool("task_work", {"seconds": 4}, timeout=policy)
    finished = [e for e in events if isinstance(e, RequestFinished) and e.method != "server/discover"]
    if era == "legacy":
        finished = [e for e in finished if e.method not in ("initialize", "tools/list")]
    (only,) = finished
    assert only.method == "tools/call"
    assert only.error is None
    assert 4 <= only.elapsed <= 6  # creation, polls (backing off while nothing changes) and result: one call
    (slow,) = [e for e in events if isinstance(e, Slow)]
    assert slow.elapsed == pytest.approx(2, abs=0.01)  # between two polls, on time
    assert slow.method == "tools/call"


async def test_the_handle_names_the_tool_on_its_errors_as_call_tool_does(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        await client.list_tools()
        async with client.tool_call("task_work", {"seconds": 60}, timeout=2) as call:
            with pytest.raises(MaxTimeout) as caught:
                await call.result()
    assert caught.value.tool == "task_work"
    assert caught.value.tool_annotations is not None
    assert "'task_work'" in caught.value.for_model
    assert may_have_run(caught.value) is Ran.MAYBE


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_report_of_another_task_id_is_a_protocol_error_and_ours_is_cancelled(
    connect: Connect, era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client:
        with pytest.raises(ProtocolError, match="task-1-garbled") as caught:
            await client.call_tool("task_work", {"seconds": 60, "garble_ids_after": 1})
        await anyio.sleep(0.1)
    assert may_have_run(caught.value) is Ran.MAYBE
    task = peer.tasks.tasks["task-1"]
    assert (task.cancel_requests, task.status) == (1, "cancelled")


async def test_a_call_made_from_a_handles_progress_callback_is_a_call_of_its_own(connect: Connect) -> None:
    """The handle hands its call to call_tool in its own task; nothing started from there inherits it."""
    peer = ScriptedPeer(era="modern")
    inner: list[mcp_types.CallToolResult] = []
    async with connect(peer) as client:

        async def on_progress(update: Progress) -> None:
            if not inner:
                inner.append(await client.call_tool("echo", {"text": "inner"}))

        arguments = {"seconds": 1, "progress_every": 0.2}
        async with client.tool_call("slow", arguments, on_progress=on_progress) as call:
            result = await call.result()
    assert text_of(result) == "done"
    assert [text_of(r) for r in inner] == ["inner"]
