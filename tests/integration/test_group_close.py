"""Closing a :class:`~mcp_client.group.ClientGroup` from a task other than the one that entered it, as a
:class:`~mcp_client.Client` is: while its eager servers start, the start is given up and undone before ``aclose()``
returns (the entering task gets a :class:`~mcp_client.ConnectError`); once it runs, ``aclose()`` says plainly that
only the entering task can close it, and leaves the group intact. In-memory peers whose ``initialize`` never
answers in time; on trio's fake clock the group's connect budget would end the start, not the test."""

from __future__ import annotations

import anyio
import pytest

from mcp_client import ConnectError, TimeoutPolicy, memory
from mcp_client.group import ClientGroup, ServerStatus
from mcp_client.testing.peer import ScriptedPeer

pytestmark = pytest.mark.anyio

GUARD = 20.0


def _group(peer: ScriptedPeer) -> ClientGroup:
    return ClientGroup({"a": memory(peer.serve)}, timeout=TimeoutPolicy(idle=None, maximum=100, connect=1000))


async def test_closing_a_group_from_another_task_while_its_servers_start_undoes_the_start() -> None:
    """Red team: ``aclose()`` returned at once while the group's ``__aenter__`` waited for its servers, and the
    group then came up and ran, as if it had never been closed."""
    peer = ScriptedPeer(era="legacy")
    peer.method_delays["initialize"] = 10_000
    group = _group(peer)
    entered: list[ClientGroup] = []
    raised: list[BaseException] = []

    async def enter() -> None:
        try:
            async with group:
                entered.append(group)
                await anyio.sleep_forever()
        except ConnectError as exc:
            raised.append(exc)

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(enter)
            await anyio.wait_all_tasks_blocked()
            assert group.status("a") is ServerStatus.STARTING
            await group.aclose()
            assert len(raised) == 1  # the start was undone before aclose() returned
            assert entered == []
            assert group.status("a") is not ServerStatus.READY
            assert peer.stats.arrivals["initialize"] == 1


async def test_closing_a_running_group_from_another_task_is_refused_and_leaves_it_working() -> None:
    """Red team: ``aclose()`` from another task left the task group of the task that entered the group, and the
    caller got anyio's ``RuntimeError`` about cancel scopes inside an exception group (or trio's misnesting)."""
    peer = ScriptedPeer(era="legacy")
    group = _group(peer)
    ready, done = anyio.Event(), anyio.Event()
    texts: list[str] = []

    async def enter() -> None:
        async with group:
            ready.set()
            await done.wait()
            result = await group.call_tool("a/echo", {"text": "still here"})
            texts.append(str(result.content[0].model_dump().get("text")))

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(enter)
            await ready.wait()
            with pytest.raises(RuntimeError, match="by the task that entered it"):
                await group.aclose()
            done.set()
    assert texts == ["still here"]
    assert group.status("a") is ServerStatus.CLOSED
