"""A task reference is bound to whom the task belongs: the credentials and query of an HTTP endpoint, the process
of a stdio server. Real sockets and processes need real time (``real_clock``); the tasks end within a second."""

from __future__ import annotations

import json
import sys

import pytest

from mcp_client import Client, TaskReference, TaskReferenceMismatch, TimeoutPolicy, http, stdio
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


async def test_a_reference_of_one_tenant_is_refused_by_a_client_of_another() -> None:
    """``?tenant=a`` made the task; a client on ``?tenant=b`` of the same endpoint refuses the reference before
    sending anything, with a typed error that says the task may have run."""
    peer = HttpPeer(ScriptedPeer(era="modern", tasks=True))
    policy = TimeoutPolicy(idle=5, maximum=10, connect=5)
    async with peer.serving() as url:
        async with (
            Client(http(url + "?tenant=a"), timeout=policy) as client,
            client.tool_call("task_work", {"seconds": 0.2, "text": "a's"}) as call,
        ):
            reference = await call.handoff()
            assert reference is not None
            call.detach()
        stored = TaskReference.from_dict(json.loads(json.dumps(reference.to_dict())))
        async with Client(http(url + "?tenant=b"), timeout=policy) as other:
            with pytest.raises(TaskReferenceMismatch) as caught:
                await other.resume(stored)
            with pytest.raises(ValueError, match="other credentials or another URL query"):
                other.check_reference(stored)
        polls = len(peer.stats.posts("tasks/get"))
        async with Client(http(url + "?tenant=a"), timeout=policy) as same:
            assert text_of(await same.resume(stored)) == "task done: a's"
    assert polls == 0
    assert may_have_run(caught.value) is Ran.MAYBE
    assert "tenant=" not in str(caught.value)


async def test_a_stdio_impostor_with_the_same_name_refuses_another_servers_reference() -> None:
    """Two stdio servers that report the same name: the reference of one is refused by the other, and by a new
    process of the same program (a restarted server may hand the task id to another task)."""
    peer = [sys.executable, "-m", "mcp_client.testing.peer", "--tasks"]
    policy = TimeoutPolicy(idle=10, maximum=30, connect=10)
    async with Client(stdio(peer[0], peer[1:]), timeout=policy) as client:
        async with client.tool_call("task_work", {"seconds": 0.2, "text": "one"}) as call:
            reference = await call.handoff()
            assert reference is not None
            assert reference.server.startswith("process:")
            client.check_reference(reference)  # the process that made it runs: the same client resumes it
            call.detach()
        assert text_of(await client.resume(reference)) == "task done: one"
    impostor = stdio(peer[0], [*peer[1:], "--page-size", "7"])  # another program, the same server name
    async with Client(impostor, timeout=policy) as other:
        with pytest.raises(TaskReferenceMismatch, match="another server"):
            await other.resume(reference)
    async with Client(stdio(peer[0], peer[1:]), timeout=policy) as again:
        with pytest.raises(TaskReferenceMismatch, match="another process"):
            await again.resume(reference)
