"""ClientGroup: many servers from one ``mcp.json``, each under its own rules, started and shut down together.

Subprocess tests (the scripted peer over stdio, in two eras) run on real clocks with short limits; in-memory tests
where timing matters run on trio's fake clock, so their durations are exact and nothing sleeps for real.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_client import (
    ConnectError,
    Event,
    IdleTimeout,
    MaxTimeout,
    MCPClientError,
    TimeoutPolicy,
    TransportError,
    memory,
)
from mcp_client.config.load import ServerSpec, load_config, parse_policy
from mcp_client.group import ClientGroup, ServerStatus, split_tool_name
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.base import Transport
from mcp_client.transports.http import http
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

PEER = [sys.executable, "-m", "mcp_client.testing.peer"]


def stdio_entry(*options: str, policy: dict[str, Any] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": PEER[0], "args": [*PEER[1:], *options]}
    if policy is not None:
        entry["policy"] = policy
    return entry


def pid_of(group: ClientGroup, name: str) -> int:
    connection = group[name].session._connection
    assert connection is not None
    pid = connection.process_id
    assert pid is not None
    return pid


def process_is_gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (it does not exist, or it is a zombie not reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def mem(peer: ScriptedPeer, policy: dict[str, Any] | None = None, name: str = "in-memory peer") -> ServerSpec:
    return ServerSpec(memory(peer.serve, name=name), parse_policy(policy or {}))


async def mute(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
    """A server that reads nothing and answers nothing: its handshake never completes."""
    await anyio.sleep_forever()


# -- three servers, one file, real processes -----------------------------------------------------------------


@pytest.mark.real_clock
async def test_three_servers_in_one_config_each_under_its_own_limits(tmp_path: Path) -> None:
    """Two stdio peers (two eras) from one mcp.json plus an in-memory one: each call runs under its server's and
    tool's rules; leaving the group shuts every process down."""
    config = {
        "globalShortcut": "Ctrl+Space",  # another host's key: tolerated
        "mcpServers": {
            "fast": stdio_entry(
                "--era",
                "modern",
                policy={"timeout": {"idle": 0.5, "maximum": 20}, "tools": {"slo*": {"timeout": {"idle": 5}}}},
            ),
            "patient": {
                **stdio_entry("--era", "legacy", policy={"timeout": {"idle": 5, "maximum": 20}}),
                "type": "stdio",
                "alwaysAllow": ["echo"],
            },
        },
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    specs = load_config(path).specs()
    specs["memory"] = mem(ScriptedPeer(), {"timeout": {"maximum": 0.5}})

    async with ClientGroup(specs, timeout=TimeoutPolicy(idle=30, maximum=60, connect=20)) as group:
        assert group.failures == {}
        assert {name: group.status(name) for name in group} == dict.fromkeys(specs, ServerStatus.READY)
        assert group["fast"].protocol_version == "2026-07-28"
        assert group["patient"].protocol_version == "2025-11-25"
        for name in specs:
            assert text_of(await group.call_tool(f"{name}/echo", {"text": name})) == name
        pids = [pid_of(group, "fast"), pid_of(group, "patient")]

        with anyio.fail_after(10):
            with pytest.raises(IdleTimeout):  # fast: idle 0.5 s
                await group.call_tool("fast/silent")
            # fast, but the slo* rule gives 5 s idle: a 1 s silence is fine
            assert text_of(await group.call_tool("fast/slow", {"seconds": 1})) == "done"
            # patient: idle 5 s
            assert text_of(await group.call_tool("patient/slow", {"seconds": 1})) == "done"
            with pytest.raises(MaxTimeout):  # memory: maximum 0.5 s
                await group.call_tool("memory/slow", {"seconds": 1})
        assert all(not process_is_gone(pid) for pid in pids)

    assert all(process_is_gone(pid) for pid in pids)
    assert {group.status(name) for name in group} == {ServerStatus.CLOSED}


@pytest.mark.real_clock
async def test_a_server_that_cannot_start_is_reported_and_the_others_work(caplog: pytest.LogCaptureFixture) -> None:
    config = {
        "mcpServers": {
            "good": stdio_entry(),
            "broken": {"command": "/nonexistent/mcp-server-that-is-not-there", "args": []},
        }
    }
    async with ClientGroup.from_config(config, timeout=TimeoutPolicy(idle=30, maximum=60, connect=20)) as group:
        assert set(group.failures) == {"broken"}
        assert isinstance(group.failures["broken"], ConnectError)
        assert group.status("broken") is ServerStatus.FAILED
        assert group.status("good") is ServerStatus.READY
        assert set(group.clients) == {"good"}
        assert text_of(await group.call_tool("good/echo", {"text": "ok"})) == "ok"
        with pytest.raises(ConnectError, match="broken"):
            await group.call_tool("broken/echo")
        pid = pid_of(group, "good")
    assert "'broken' failed to start" in caplog.text
    assert process_is_gone(pid)


@pytest.mark.real_clock
async def test_a_stdio_server_dying_mid_call_fails_only_its_own_calls() -> None:
    config = {"mcpServers": {"doomed": stdio_entry(), "steady": stdio_entry("--era", "legacy")}}
    outcomes: dict[str, object] = {}

    async def call(qualified: str, arguments: dict[str, Any]) -> None:
        try:
            outcomes[qualified] = text_of(await group.call_tool(qualified, arguments))
        except MCPClientError as exc:
            outcomes[qualified] = exc

    async with ClientGroup.from_config(config, timeout=TimeoutPolicy(idle=30, maximum=60, connect=20)) as group:
        doomed_pid = pid_of(group, "doomed")
        with anyio.fail_after(20):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(call, "steady/slow", {"seconds": 1})
                task_group.start_soon(call, "doomed/die", {"after": 0.2})
        assert isinstance(outcomes["doomed/die"], TransportError)
        assert outcomes["steady/slow"] == "done"
        assert group.status("doomed") is ServerStatus.DEAD
        assert group.status("steady") is ServerStatus.READY
        with pytest.raises(TransportError, match="doomed"):
            await group.call_tool("doomed/echo")
        assert text_of(await group.call_tool("steady/echo", {"text": "still here"})) == "still here"
        steady_pid = pid_of(group, "steady")
    assert process_is_gone(doomed_pid)
    assert process_is_gone(steady_pid)


# -- in memory, on the fake clock ---------------------------------------------------------------------------


@pytest.mark.fake_clock
async def test_limits_differ_per_server_and_the_call_overrides_everything() -> None:
    servers = {
        "strict": mem(ScriptedPeer(), {"timeout": {"idle": 0.5}}),
        "lenient": mem(ScriptedPeer(), {"timeout": {"idle": 5}}),
    }
    async with ClientGroup(servers) as group:
        start = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await group.call_tool("strict/silent")
        assert anyio.current_time() - start == pytest.approx(0.5)

        start = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await group.call_tool("lenient/silent")
        assert anyio.current_time() - start == pytest.approx(5)

        start = anyio.current_time()
        with pytest.raises(IdleTimeout):
            await group.call_tool("strict/silent", timeout=TimeoutPolicy(idle=2, maximum=100))
        assert anyio.current_time() - start == pytest.approx(2)

        start = anyio.current_time()
        with pytest.raises(MaxTimeout):  # a number is the maximum; idle stays the server's 5 s
            await group.call_tool("lenient/silent", timeout=1)
        assert anyio.current_time() - start == pytest.approx(1)


@pytest.mark.fake_clock
async def test_tool_rules_by_glob_and_by_annotation() -> None:
    policy = {
        "timeout": {"idle": 10, "maximum": 100},
        "tools": {"re*": {"timeout": {"maximum": 2}}, "reindex": {"timeout": {"maximum": 3}}},
        "annotations": {"readOnlyHint": {"timeout": {"idle": 0.25}}},
    }
    async with ClientGroup({"s": mem(ScriptedPeer(), policy)}) as group:
        assert group.tools["s/silent"].annotations is not None  # listed at start, for the annotation rules
        start = anyio.current_time()
        with pytest.raises(IdleTimeout):  # silent is read-only: the annotation rule's 0.25 s
            await group.call_tool("s/silent")
        assert anyio.current_time() - start == pytest.approx(0.25)

        start = anyio.current_time()
        with pytest.raises(MaxTimeout):  # reindex (not read-only): the exact rule beats the glob
            await group.call_tool("s/reindex", {"seconds": 10, "progress_every": 0.5})
        assert anyio.current_time() - start == pytest.approx(3)

        timeout, _ = group.resolve("s/reindex_all")
        assert (timeout.idle, timeout.maximum) == (10, 2)  # the glob; the server's idle underneath


@pytest.mark.fake_clock
async def test_an_annotation_retry_rule_retries_read_only_tools_only() -> None:
    peer = ScriptedPeer()
    policy = {
        "timeout": {"idle": 1, "maximum": 100},
        "retry": None,
        "annotations": {"readOnlyHint": {"retry": {"attempts": 3, "retry_idle_timeout": True}}},
    }
    async with ClientGroup({"s": mem(peer, policy)}) as group:
        assert group.resolve("s/increment")[1] is None  # not read-only: the server's "no retries"
        retry = group.resolve("s/silent")[1]
        assert retry is not None
        assert retry.attempts == 3
        async with group.tool_call("s/silent") as call:
            with pytest.raises(IdleTimeout) as failure:
                await call.result()
        assert len(failure.value.attempts) == 3
        assert peer.stats.calls_by_tool["silent"] == 3


@pytest.mark.fake_clock
async def test_servers_start_concurrently_each_within_its_connect_budget() -> None:
    servers: dict[str, ServerSpec | Transport] = {
        "mute1": ServerSpec(memory(mute, name="mute1"), parse_policy({"timeout": {"connect": 2}})),
        "mute2": ServerSpec(memory(mute, name="mute2"), parse_policy({"timeout": {"connect": 3}})),
        "good": memory(ScriptedPeer().serve),  # a bare transport: no rules of its own
    }
    start = anyio.current_time()
    async with ClientGroup(servers, protocol="2026-07-28") as group:
        assert anyio.current_time() - start == pytest.approx(3)  # the longest budget, not the sum
        assert set(group.failures) == {"mute1", "mute2"}
        assert all(isinstance(error, ConnectError) for error in group.failures.values())
        assert text_of(await group.call_tool("good/echo", {"text": "hi"})) == "hi"


@pytest.mark.fake_clock
async def test_a_server_dying_later_fails_only_its_calls_and_status_says_so() -> None:
    seen: list[tuple[str, Event]] = []
    async with ClientGroup(
        {"a": mem(ScriptedPeer()), "b": mem(ScriptedPeer())}, on_event=lambda name, e: seen.append((name, e))
    ) as group:
        results: dict[str, object] = {}

        async def call(qualified: str, arguments: dict[str, Any]) -> None:
            try:
                results[qualified] = text_of(await group.call_tool(qualified, arguments))
            except MCPClientError as exc:
                results[qualified] = exc

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(call, "a/die", {"after": 1})
            task_group.start_soon(call, "b/slow", {"seconds": 2})
        assert isinstance(results["a/die"], TransportError)
        assert results["b/slow"] == "done"
        assert group.status("a") is ServerStatus.DEAD
        assert group.status("b") is ServerStatus.READY
        with pytest.raises(TransportError):
            await group.call_tool("a/echo")
    assert {name for name, _ in seen} == {"a", "b"}  # events carry the server's name


async def test_addressing_errors() -> None:
    async with ClientGroup({"s": mem(ScriptedPeer())}) as group:
        with pytest.raises(ValueError, match="server/tool"):
            await group.call_tool("echo")
        with pytest.raises(KeyError, match="nope"):
            await group.call_tool("nope/echo")
        assert "s" in group
        assert len(group) == 1
        listed = await group.list_tools()
        assert set(listed) == {"s"}
        assert "s/echo" in group.tools
    with pytest.raises(RuntimeError):
        group["s"]  # closed


def test_split_tool_name_and_bad_server_names() -> None:
    assert split_tool_name("srv/ns/tool") == ("srv", "ns/tool")
    for bad in ("tool", "/tool", "srv/"):
        with pytest.raises(ValueError, match="server/tool"):
            split_tool_name(bad)
    with pytest.raises(ValueError, match="'/'"):
        ClientGroup({"a/b": memory(ScriptedPeer().serve)})
    with pytest.raises(ValueError, match="non-empty"):
        ClientGroup({"": memory(ScriptedPeer().serve)})
    with pytest.raises(TypeError, match="retry_rules"):
        ClientGroup({}, retry_rules={})


async def test_list_changed_drops_the_annotations_until_the_next_listing() -> None:
    peer = ScriptedPeer()
    async with ClientGroup({"s": mem(peer, {"annotations": {"readOnlyHint": {"timeout": {"idle": 0.25}}}})}) as group:
        assert group.resolve("s/echo")[0].idle == 0.25
        group._event(group._servers["s"], _list_changed())
        assert group.resolve("s/echo")[0].idle == 60  # unknown again: the annotation rule no longer applies
        await group.list_tools()
        assert group.resolve("s/echo")[0].idle == 0.25


def _list_changed() -> Event:
    from mcp_client.events import ServerNotification

    return ServerNotification("notifications/tools/list_changed", {})


# -- HTTP: the session is deleted on close ------------------------------------------------------------------


async def test_closing_the_group_deletes_http_sessions() -> None:
    requests: list[httpx.Request] = []

    async def endpoint(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.method == "DELETE":
            return httpx.Response(200)
        body = json.loads(request.content)
        if "id" not in body:
            return httpx.Response(202)
        if body["method"] == "server/discover":
            return httpx.Response(404)
        if body["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"},
            }
            return httpx.Response(
                200, headers={"mcp-session-id": "s-1"}, json={"jsonrpc": "2.0", "id": body["id"], "result": result}
            )
        if body["method"] == "tools/list":
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})
        text = body["params"]["arguments"]["text"]
        answer = {"content": [{"type": "text", "text": text}]}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": answer})

    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http_client:
        servers = {"web": http("http://mcp.test/mcp", client=http_client), "local": memory(ScriptedPeer().serve)}
        async with ClientGroup(servers) as group:
            assert text_of(await group.call_tool("web/echo", {"text": "over http"})) == "over http"
            assert not [r for r in requests if r.method == "DELETE"]
        (delete,) = [r for r in requests if r.method == "DELETE"]
        assert delete.headers["Mcp-Session-Id"] == "s-1"
