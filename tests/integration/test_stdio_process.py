"""stdio against real processes, on real clocks: the scripted peer as a subprocess, and a tiny inline server.

Few tests, none timing-sensitive: every wait is bounded and generous. They pin what only a real process shows:
pipes, exit codes, stderr, the child's environment, and a shutdown that leaves nothing behind.
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from mcp_client import (
    CancelSent,
    Client,
    ConnectError,
    Event,
    LateMessage,
    MaxTimeout,
    MCPClientError,
    ProtocolViolation,
    RequestSent,
    ServerStderr,
    TimeoutPolicy,
    TransportError,
    stdio,
)
from mcp_client.transports.stdio._transport import ShutdownTimings, StdioTransport
from tests.integration.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=60, maximum=120, connect=30)
"""Long limits: a call that fails here fails for its own reason, long before these."""

MINI_SERVER = r"""
import json, os, signal, subprocess, sys, time

flags = set(sys.argv[1:])
if "--ignore-term" in flags:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
stubborn = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " if "--stubborn-child" in flags else ""
spawn = "--spawn" in flags or "--stubborn-child" in flags
child = subprocess.Popen([sys.executable, "-c", stubborn + "import time; time.sleep(120)"]) if spawn else None

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        info = {"name": "mini", "version": "1"}
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
    elif message["method"] == "tools/call":
        name = message["params"]["arguments"]["name"]
        facts = {"value": os.environ.get(name), "pid": os.getpid(), "child": child.pid if child else None}
        result = {"content": [{"type": "text", "text": json.dumps(facts)}]}
    else:
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not here"}})
        continue
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    if "--stop-reading" in flags and message["method"] == "initialize":
        time.sleep(120)
    if "--pause-reading" in flags and message["method"] == "initialize":
        time.sleep(2)
while "--ignore-eof" in flags:
    time.sleep(1)
"""
"""A legacy-era server in a few lines: refuses discover, answers initialize, and has one tool that reports an
environment variable, its pid and (with ``--spawn``) the pid of a child it started (``--stubborn-child``: one that
ignores SIGTERM). ``--ignore-term`` ignores
SIGTERM; ``--ignore-eof`` keeps running after its stdin closes; ``--stop-reading`` never reads again after the
handshake, ``--pause-reading`` only for two seconds."""


def peer(*options: str) -> StdioTransport:
    return stdio(sys.executable, ["-m", "mcp_client.testing.peer", *options])


def mini_server(*flags: str, **options: object) -> StdioTransport:
    return StdioTransport(sys.executable, ("-c", MINI_SERVER, *flags), **options)  # type: ignore[arg-type]


def process_is_gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (it does not exist, or it is a zombie its parent has not reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


async def wait_for(predicate: Callable[[], object], seconds: float = 10) -> None:
    """Poll ``predicate`` every 10 ms, for at most ``seconds``."""
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.01)


@pytest.mark.parametrize(("era", "version"), [("modern", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_echo_round_trip_over_stdio(era: str, version: str) -> None:
    """stdio: a tool call round trip with a real server process, in both eras."""
    async with Client(peer("--era", era), timeout=POLICY) as client:
        result = await client.call_tool("echo", {"text": "über stdio ✓"})
        assert client.protocol_version == version

    assert text_of(result) == "über stdio ✓"


async def test_server_death_fails_every_call_in_flight_at_once() -> None:
    """The stdio process dying fails every call in flight with TransportError, at once, long before any timeout."""
    failures: list[MCPClientError] = []

    async def doomed(client: Client, tool: str, arguments: dict[str, object]) -> None:
        try:
            await client.call_tool(tool, arguments)
        except MCPClientError as exc:
            failures.append(exc)

    async with Client(peer(), timeout=POLICY) as client:
        start = anyio.current_time()
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(doomed, client, "silent", {})
                die_after: dict[str, object] = {"after": 0.2}
                tg.start_soon(doomed, client, "die", die_after)
        elapsed = anyio.current_time() - start
        with pytest.raises(TransportError) as after_death:
            await client.call_tool("echo")

    assert len(failures) == 4
    assert all(isinstance(error, TransportError) for error in failures)
    assert elapsed < 15, "at once: far sooner than the 60 s idle timeout"
    assert len({error.request_ids for error in failures}) == 4
    assert after_death.value.written is False


async def test_garbage_lines_are_reported_and_the_next_call_works() -> None:
    """Lines that are not JSON objects are ProtocolViolation events; the connection and the next call carry on."""
    events: list[Event] = []
    async with Client(peer(), timeout=POLICY, on_event=events.append) as client:
        result = await client.call_tool("garbage")
        after = await client.call_tool("echo", {"text": "next"})

    assert text_of(result) == "survived"
    assert text_of(after) == "next"
    assert [e.raw for e in events if isinstance(e, ProtocolViolation)] == [b"this is not json", b"[1,2,3]"]


async def test_half_a_line_then_death() -> None:
    """Half a message, then the process dies: a ProtocolViolation, and the call fails with TransportError."""
    events: list[Event] = []
    async with Client(peer(), timeout=POLICY, on_event=events.append) as client:
        with anyio.fail_after(20), pytest.raises(TransportError) as caught:
            await client.call_tool("half_line")

    assert caught.value.written is True
    violations = [e for e in events if isinstance(e, ProtocolViolation)]
    assert [v.raw for v in violations] == [b'{"jsonrpc":"2.0","id":']


async def test_stderr_lines_are_events_not_errors() -> None:
    """Each line on the server's stderr is a ServerStderr event (and goes to on_stderr); it is not an error."""
    events: list[Event] = []
    lines: list[str] = []
    transport = stdio(sys.executable, ["-m", "mcp_client.testing.peer"], on_stderr=lines.append)
    async with Client(transport, timeout=POLICY, on_event=events.append) as client:
        result = await client.call_tool("stderr", {"text": "warming up the cache"})
        await wait_for(lambda: "warming up the cache" in lines)
        await wait_for(lambda: any(isinstance(e, ServerStderr) for e in events))
        after = await client.call_tool("echo", {"text": "fine"})

    assert text_of(result) == "ok"
    assert text_of(after) == "fine"
    assert [e.line for e in events if isinstance(e, ServerStderr)] == ["warming up the cache"]


@pytest.mark.parametrize("inherit_env", [False, True])
async def test_child_gets_the_parents_secrets_only_when_asked(
    monkeypatch: pytest.MonkeyPatch, inherit_env: bool
) -> None:
    """The child gets a minimal environment plus `env`; the parent's other variables only with inherit_env=True."""
    monkeypatch.setenv("MCP_TEST_PARENT_SECRET", "hunter2")
    transport = mini_server(env={"MCP_TEST_GIVEN": "given"}, inherit_env=inherit_env)
    async with Client(transport, timeout=POLICY) as client:
        secret = json.loads(text_of(await client.call_tool("env", {"name": "MCP_TEST_PARENT_SECRET"})))
        given = json.loads(text_of(await client.call_tool("env", {"name": "MCP_TEST_GIVEN"})))
        path = json.loads(text_of(await client.call_tool("env", {"name": "PATH"})))

    assert secret["value"] == ("hunter2" if inherit_env else None)
    assert given["value"] == "given"
    assert path["value"] == os.environ["PATH"]


async def test_bash_functions_in_allow_listed_variables_are_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value starting with ``()`` is an exported bash function (Shellshock's shape): left out, as the official
    SDK does, even under an allow-listed name."""
    monkeypatch.setenv("TERM", "() { :;}; echo pwned")
    monkeypatch.setenv("LANG", "C.UTF-8")
    async with Client(mini_server(), timeout=POLICY) as client:
        term = json.loads(text_of(await client.call_tool("env", {"name": "TERM"})))
        lang = json.loads(text_of(await client.call_tool("env", {"name": "LANG"})))

    assert term["value"] is None
    assert lang["value"] == "C.UTF-8"


async def test_shutdown_leaves_no_process_behind() -> None:
    """Leaving the client ends the server process (and it is reaped): nothing is left running."""
    async with Client(peer(), timeout=POLICY) as client:
        await client.call_tool("echo")
        pid = client.server_process_id
        assert pid is not None
        os.kill(pid, 0)  # alive while connected

    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_shutdown_reaches_the_servers_children() -> None:
    """The server runs in a process group of its own: shutdown ends the processes it started too."""
    async with Client(mini_server("--spawn"), timeout=POLICY) as client:
        facts = json.loads(text_of(await client.call_tool("env", {"name": "HOME"})))
        assert not process_is_gone(facts["child"])

    with pytest.raises(ProcessLookupError):
        os.kill(facts["pid"], 0)
    await wait_for(lambda: process_is_gone(facts["child"]))


async def test_a_server_that_ignores_stdin_close_and_sigterm_is_killed() -> None:
    """The shutdown ladder: close stdin, wait; SIGTERM, wait; SIGKILL. A server ignoring the first two still ends."""
    transport = mini_server("--ignore-term", "--ignore-eof", shutdown=ShutdownTimings(0.2, 0.2, 0.5))
    async with Client(transport, timeout=POLICY) as client:
        facts = json.loads(text_of(await client.call_tool("env", {"name": "HOME"})))
        closing = anyio.current_time()
    shutdown_took = anyio.current_time() - closing

    with pytest.raises(ProcessLookupError):
        os.kill(facts["pid"], 0)
    assert shutdown_took >= 0.4  # it did wait on both gentler rungs before killing
    assert shutdown_took < 10


async def test_a_command_that_does_not_exist_is_a_connect_error() -> None:
    """A server process that cannot be started is a ConnectError."""
    with pytest.raises(ConnectError):
        async with Client(stdio("/nonexistent/mcp-server-binary"), timeout=POLICY):
            pass


async def test_a_server_that_never_answers_the_handshake_is_a_connect_error() -> None:
    """connect bounds process start plus handshake: a mute process is a ConnectError, and it is not left behind."""
    transport = stdio(sys.executable, ["-c", "import sys; sys.stdin.read()"])
    with anyio.fail_after(20), pytest.raises(ConnectError):
        async with Client(transport, timeout=TimeoutPolicy(connect=0.5), probe_timeout=0.2):
            pass


async def test_a_burst_of_progress_reaches_a_sync_callback_in_order_and_complete() -> None:
    """Over a real pipe (read by the event loop itself on asyncio), a sync callback sees strictly increasing
    progress in the caller's context, coalesced per read, and the last update before the result returns."""
    who = contextvars.ContextVar("who", default="nobody")
    seen: list[tuple[float, str]] = []
    who.set("caller")
    async with Client(peer("--era", "modern"), timeout=POLICY) as client:
        result = await client.call_tool(
            "slow",
            {"seconds": 0.3, "progress_every": 0.002},
            on_progress=lambda update: seen.append((update.progress, who.get())),
        )

    values = [value for value, _ in seen]
    assert text_of(result) == "done"
    assert values == sorted(set(values))
    assert values[-1] == 150
    assert {context for _, context in seen} == {"caller"}


async def test_a_maximum_is_never_reported_before_it_has_passed() -> None:
    """Timers are set a little early (timer_lead) and the last stretch is waited out: early is never allowed."""
    async with Client(peer("--era", "modern"), timeout=POLICY) as client:
        for _ in range(5):
            started = anyio.current_time()
            with pytest.raises(MaxTimeout):
                await client.call_tool("slow", {"seconds": 5}, timeout=TimeoutPolicy(idle=None, maximum=0.03))
            assert anyio.current_time() - started >= 0.03


async def test_a_server_that_stops_reading_cannot_hold_a_write_past_the_maximum() -> None:
    """The pipe fills up (the server reads nothing after the handshake): the write waits, bounded by the maximum,
    and the client still shuts the server down."""
    big = "x" * 4_000_000  # far more than a pipe buffers
    async with Client(mini_server("--stop-reading"), timeout=POLICY) as client:
        with anyio.fail_after(20), pytest.raises(MaxTimeout):
            await client.call_tool("env", {"name": big}, timeout=TimeoutPolicy(idle=None, maximum=0.5))
        pid = client.server_process_id
    assert pid is not None
    await wait_for(lambda: process_is_gone(pid))


async def test_a_write_to_a_server_that_exited_is_a_transport_error_not_a_hang() -> None:
    """Its stdin is gone: the request fails typed, and says it was not written (or that it may have been)."""
    async with Client(mini_server(), timeout=POLICY) as client:
        pid = client.server_process_id
        assert pid is not None
        os.kill(pid, 9)
        await wait_for(lambda: process_is_gone(pid))
        with anyio.fail_after(20), pytest.raises(TransportError):
            await client.call_tool("env", {"name": "HOME"})


async def test_a_call_made_in_a_scope_already_cancelled_writes_nothing_to_the_pipe() -> None:
    """The write that cannot block goes out without an await; a caller's cancel called before still stops it."""
    events: list[Event] = []
    async with Client(peer("--era", "modern"), timeout=POLICY, on_event=events.append) as client:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await client.call_tool("echo", {"text": "never"})
        assert scope.cancelled_caught
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"

    sent = [e for e in events if isinstance(e, RequestSent) and e.method == "tools/call"]
    assert len(sent) == 1
    assert not [e for e in events if isinstance(e, LateMessage | CancelSent)]
