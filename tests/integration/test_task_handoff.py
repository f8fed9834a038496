"""``call.handoff()`` and ``client.resume(ref)``: a task reference that survives a JSON store and another client.

Against the scripted peer in both eras, on trio's MockClock: the reference names the task, the protocol it was
made under and the server (never its URL), and a second client awaits the task from it; a reference of another
server or era is refused before anything is sent; malformed references are clear ``ValueError``\\ s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from mcp_client import Client, TaskReference, TimeoutPolicy, http
from mcp_client.client.task_reference import endpoint_id
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]
ERAS = [("modern", "2026-07-28"), ("legacy", "2025-11-25")]


def sent(peer: ScriptedPeer, method: str) -> list[dict[str, Any]]:
    return [m.get("params") or {} for m in peer.stats.received if m.get("method") == method]


@pytest.mark.parametrize(("era", "version"), ERAS)
async def test_a_handed_off_task_is_resumed_by_another_client_from_json(
    connect: Connect, era: str, version: str
) -> None:
    peer = ScriptedPeer(era=era, tasks=True)  # type: ignore[arg-type]
    async with connect(peer) as client, client.tool_call("task_work", {"seconds": 10, "text": "later"}) as call:
        reference = await call.handoff()
        assert reference is not None
        assert reference.task_id == call.task_id
        assert (reference.protocol, reference.tool) == (version, "task_work")
        assert reference.server == client.endpoint
        stored = json.dumps(reference.to_dict())
        call.detach()
    assert sent(peer, "tasks/cancel") == []  # detached: the task runs on
    async with connect(peer) as other:
        result = await other.resume(TaskReference.from_dict(json.loads(stored)), timeout=TimeoutPolicy(maximum=60))
    assert text_of(result) == "task done: later"
    assert len(sent(peer, "tools/call")) == 1  # the tool was called once; the second client only polled


async def test_a_plain_call_hands_off_nothing(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client, client.tool_call("echo", {"text": "hi"}) as call:
        assert await call.handoff() is None
        assert text_of(await call.result()) == "hi"


async def test_a_reference_of_another_server_or_era_is_refused_before_sending(connect: Connect) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    async with connect(peer) as client:
        elsewhere = TaskReference(server="endpoint:0123", task_id="t1", protocol="2026-07-28")
        with pytest.raises(ValueError, match="another server"):
            await client.resume(elsewhere)
        older = TaskReference(server=client.endpoint, task_id="t1", protocol="2025-11-25")
        with pytest.raises(ValueError, match="protocol 2025-11-25"):
            await client.resume(older)
        with pytest.raises(TypeError, match="TaskReference"):
            await client.resume({"taskId": "t1"})  # type: ignore[arg-type]
    assert sent(peer, "tasks/get") == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"taskId": "t", "protocol": "2026-07-28"}, "needs server"),
        ({"server": "s", "taskId": "", "protocol": "2026-07-28"}, "task_id must be a non-empty string"),
        ({"server": "s", "taskId": "t", "protocol": "2026-07-28", "ttl": -1}, "ttl must be"),
        ({"server": "s", "taskId": 7, "protocol": "2026-07-28"}, "task_id must be"),
        (["not", "an", "object"], "must be a JSON object"),
    ],
)
def test_malformed_references_are_value_errors(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TaskReference.from_dict(data)


def test_the_endpoint_identity_never_holds_the_url() -> None:
    transport = http("https://user:secret@ci.example/mcp?token=abc")
    identity = endpoint_id(transport, None)
    assert identity.startswith("endpoint:")
    assert "/as:" in identity
    assert "secret" not in identity
    assert "ci.example" not in identity
    assert "abc" not in identity
    assert identity != endpoint_id(http("https://ci.example/other"), None)


def test_an_http_identity_is_bound_to_the_credentials_and_the_query() -> None:
    """Everything a request is signed in with counts (the tenant of the query too); harmless headers do not."""
    bare = endpoint_id(http("https://ci.example/mcp"), None)
    assert bare == endpoint_id(http("https://ci.example/mcp", headers={"User-Agent": "x"}), None)
    assert "/" not in bare.removeprefix("endpoint:")  # (a client that signs in with nothing: as before)
    differing = [
        http("https://ci.example/mcp?tenant=a"),
        http("https://ci.example/mcp?tenant=b"),
        http("https://user:one@ci.example/mcp"),
        http("https://user:two@ci.example/mcp"),
        http("https://ci.example/mcp", headers={"Authorization": "Bearer one"}),
        http("https://ci.example/mcp", headers={"Authorization": "Bearer two"}),
        http("https://ci.example/mcp", headers={"X-Tenant": "a"}),
    ]
    identities = [endpoint_id(transport, None) for transport in differing]
    assert len(set(identities) | {bare}) == len(differing) + 1
    assert all(identity.startswith(bare + "/as:") for identity in identities)
    assert all("one" not in identity and "tenant" not in identity for identity in identities)
    own_client = [httpx2.AsyncClient(headers={"Authorization": f"Bearer {who}"}) for who in ("one", "two")]
    signed_by_client = {endpoint_id(http("https://ci.example/mcp", client=c), None) for c in own_client}
    assert signed_by_client == {identities[4], identities[5]}  # the same credentials, wherever they are set
    same = http("https://ci.example/mcp?tenant=a")
    assert endpoint_id(same, None) == identities[0]  # (stable: another process computes the same)
    assert endpoint_id(same, None, partition="alice") != endpoint_id(same, None, partition="bob")
