"""The blocking API (``mcp_client.sync``) against the scripted peer as a subprocess, on asyncio and trio portals.

No test here is async: the point is a caller without an event loop. Every wait is bounded. Ctrl-C is simulated
for real: ``signal.raise_signal(SIGINT)`` from the client's event-loop thread once the request is on the wire, so
the main thread gets its ``KeyboardInterrupt`` while it blocks on the call.
"""

from __future__ import annotations

import contextvars
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from mcp_client import (
    ConnectError,
    Event,
    IdleTimeout,
    MaxTimeout,
    Progress,
    RequestSent,
    ServerError,
    TimeoutPolicy,
    ToolError,
    stdio,
)
from mcp_client.sync.client import Client, ClientGroup
from mcp_client.transports.stdio._transport import StdioTransport
from tests.integration.helpers import text_of

POLICY = TimeoutPolicy(idle=60, maximum=120, connect=30)

pytestmark = pytest.mark.parametrize("backend", ["asyncio", "trio"], scope="module")


def peer(*options: str) -> StdioTransport:
    return stdio(sys.executable, ["-m", "mcp_client.testing.peer", *options])


def stats(client: Client) -> dict[str, object]:
    data = json.loads(text_of(client.call_tool("stats")))
    assert isinstance(data, dict)
    return data


def process_gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def client(backend: str) -> Iterator[Client]:
    """One client (and server process) per backend, shared by the tests that leave it usable."""
    with Client(peer(), timeout=POLICY, backend=backend) as client:
        yield client


def test_lists_and_calls_like_the_async_client(client: Client) -> None:
    assert client.protocol_version == "2026-07-28"
    assert client.server_info is not None
    names = {tool.name for tool in client.list_tools()}
    assert {"echo", "slow", "silent", "stats"} <= names
    assert text_of(client.call_tool("echo", {"text": "hello"})) == "hello"
    assert client.request("tools/call", {"name": "echo", "arguments": {"text": "raw"}})["content"] == [
        {"type": "text", "text": "raw"}
    ]
    assert client.is_idempotent("echo")


def test_raises_the_same_typed_errors(client: Client) -> None:
    with pytest.raises(IdleTimeout) as idle:
        client.call_tool("silent", timeout=TimeoutPolicy(idle=0.3, maximum=10))
    assert idle.value.method == "tools/call"
    with pytest.raises(MaxTimeout):
        client.call_tool("chatty", {"interval": 0.05}, timeout=TimeoutPolicy(idle=5, maximum=0.4))
    with pytest.raises(ServerError) as failed:
        client.call_tool("fail", {"code": -32000, "message": "boom"})
    assert failed.value.code == -32000
    with pytest.raises(ToolError):
        client.call_tool("tool_error", raise_on_error=True)
    assert text_of(client.call_tool("echo", {"text": "still fine"})) == "still fine"


def test_a_plain_progress_callback_sees_every_update_in_order(client: Client) -> None:
    seen: list[Progress] = []
    result = client.call_tool("slow", {"seconds": 0.5, "progress_every": 0.1, "total": 5}, on_progress=seen.append)
    assert text_of(result) == "done"
    values = [p.progress for p in seen]
    assert values == sorted(values)
    assert values[-1] == 5
    assert all(p.total == 5 for p in seen)


def test_the_call_handle_iterates_progress_and_returns_the_result(client: Client) -> None:
    with client.tool_call("slow", {"seconds": 0.4, "progress_every": 0.1}) as call:
        values = [p.progress for p in call.progress()]
        result = call.result()
    assert text_of(result) == "done"
    assert values == sorted(values)
    assert values
    assert call.done
    assert len(call.request_ids) == 1


def test_the_call_handle_cancels_on_the_wire(client: Client) -> None:
    with client.tool_call("silent") as call:
        call.cancel("stop it")
        with pytest.raises(Exception, match="stop it"):
            call.result()
    (request_id,) = call.request_ids
    assert wait_until_cancelled(client, request_id)


def test_a_detached_call_handle_outlives_its_block(client: Client) -> None:
    with client.tool_call("slow", {"seconds": 0.3}) as call:
        assert call.detach() is call
        assert call.detached
    assert not call.done  # leaving the block did not cancel it
    assert text_of(call.result()) == "done"
    assert (call.method, call.policy) == ("tools/call", POLICY)


def wait_until_cancelled(client: Client, request_id: int | str) -> bool:
    for _ in range(50):
        if request_id in stats(client)["cancelled"]:  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_ctrl_c_cancels_the_call_on_the_wire_and_the_client_stays_usable(backend: str) -> None:
    sent: list[RequestSent] = []

    def on_event(event: Event) -> None:
        # On the client's event-loop thread: once the call is on the wire, "press Ctrl-C" (the main thread gets it).
        if isinstance(event, RequestSent) and event.method == "tools/call" and not sent:
            sent.append(event)
            signal.raise_signal(signal.SIGINT)

    assert threading.current_thread() is threading.main_thread()
    with Client(peer(), timeout=POLICY, on_event=on_event, backend=backend) as client:
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            client.call_tool("silent")
        assert time.monotonic() - started < 10
        (request,) = sent
        # The cancellation was written before the interrupt was re-raised: the peer saw it first.
        assert request.request_id in stats(client)["cancelled"]  # type: ignore[operator]
        assert text_of(client.call_tool("echo", {"text": "after ctrl-c"})) == "after ctrl-c"


def test_the_callers_context_variables_reach_the_event_hook(backend: str) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    seen: list[str] = []

    def on_event(event: Event) -> None:
        if isinstance(event, RequestSent) and event.method == "tools/call":
            seen.append(var.get())

    with Client(peer(), timeout=POLICY, on_event=on_event, backend=backend) as client:
        token = var.set("from the caller")
        try:
            client.call_tool("echo", {"text": "x"})
        finally:
            var.reset(token)
        client.call_tool("echo", {"text": "y"})
    assert seen == ["from the caller", "unset"]


def test_close_leaves_no_process_and_no_thread(backend: str) -> None:
    threads = set(threading.enumerate())
    client = Client(peer(), timeout=POLICY, backend=backend).open()
    pid = client.server_process_id
    assert pid is not None
    client.call_tool("echo", {"text": "x"})
    client.close()
    client.close()  # idempotent
    assert process_gone(pid)
    assert set(threading.enumerate()) <= threads
    with pytest.raises(RuntimeError, match="not connected"):
        client.call_tool("echo", {"text": "x"})


def test_a_failed_start_raises_and_leaves_no_thread(backend: str) -> None:
    threads = set(threading.enumerate())
    with pytest.raises(ConnectError):
        Client(stdio(sys.executable, ["-c", "pass"]), timeout=POLICY, backend=backend).open()
    assert set(threading.enumerate()) <= threads


def test_a_group_of_two_servers(backend: str) -> None:
    config = {
        "mcpServers": {
            "a": {"command": sys.executable, "args": ["-m", "mcp_client.testing.peer"]},
            "b": {"command": sys.executable, "args": ["-m", "mcp_client.testing.peer", "--era", "legacy"]},
        }
    }
    with ClientGroup.from_config(config, timeout=POLICY, backend=backend) as group:
        assert group.failures == {}
        assert sorted(group) == ["a", "b"]
        assert "a/echo" in group.tools
        assert text_of(group.call_tool("a/echo", {"text": "one"})) == "one"
        assert text_of(group.call_tool("b/echo", {"text": "two"})) == "two"
        assert group["b"].protocol_version == "2025-11-25"
        with pytest.raises(IdleTimeout):
            group.call_tool("b/silent", timeout=TimeoutPolicy(idle=0.3, maximum=10))
        with group.tool_call("a/slow", {"seconds": 0.2}) as call:
            assert text_of(call.result()) == "done"
        assert set(group.list_tools()) == {"a", "b"}
        pids = [view.server_process_id for view in group.clients.values()]
    assert all(pid is not None and process_gone(pid) for pid in pids)
