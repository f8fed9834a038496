"""Running one cell of the promise matrix: a world (the scripted peer behind one transport, its configured endpoint
full of secrets), a fault (the tool and policy that provoke it), an entry (the public way the call is made), and
what the cell saw (:class:`Seen`), for :mod:`tests.promises.test_matrix` to judge.

Every configured endpoint carries each secret it can: userinfo, an ``?api_key=`` query, a path secret and an
``Authorization`` header for HTTP (HTTP+SSE: its path is the peer's own), an environment value for stdio.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_client import (
    Call,
    Client,
    ClientGroup,
    RestartPolicy,
    TimeoutPolicy,
    Transport,
    http,
    memory,
    sse as sse_transport,
    stdio as stdio_transport,
)
from mcp_client.otel import Tracing
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer, arrival_key, read_arrivals
from tests.integration.sse_peer import SsePeer
from tests.promises.gate import gate

USERINFO_SECRET = "uiSECRETpw"
QUERY_SECRET = "qsSECRETkey"
PATH_SECRET = "sk-pathSECRET-4f9a2c7e1b"
"""A realistic path secret (a key's prefix and random characters: what :func:`mcp_client._redact.looks_secret` names
secret); a plain word in a path is no secret and stays in the redacted name."""
HEADER_SECRET = "hdrSECRETbearer"
ENV_SECRET = "envSECRETvalue"
SECRETS = (USERINFO_SECRET, QUERY_SECRET, PATH_SECRET, HEADER_SECRET, ENV_SECRET)

HOSTILE_MESSAGE = "boom\x1b]52;c;aGk=\x07\x1b[2J\x1b]0;owned\x07\x9b31m\r"
"""An error message a hostile server sends: an OSC 52 clipboard write, a screen clear, a title change, a C1 CSI."""

MAX_MESSAGE_SIZE = 64 * 1024
OVERSIZED = 256 * 1024
TOOL_HINTS_OFF: dict[str, Any] = {"max_in_flight": 8}  # every client has a limit, so that a slot left taken shows

FAKE_MARGIN = 1.0
REAL_MARGIN = 15.0
"""Seconds after the maximum by which a cell must be done: small on the fake clock, generous on a real one (no
timing claim: a bound that shows a call that outlived its maximum by far)."""


# -- faults ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """What provokes one fault: the plain tool and its arguments, the task tool's arguments (None: not scriptable),
    and the call's policy on each clock."""

    tool: str
    arguments: Mapping[str, Any]
    task_arguments: Mapping[str, Any] | None
    fake_policy: TimeoutPolicy
    real_policy: TimeoutPolicy
    cancel_on_arrival: bool = False
    close_on_arrival: bool = False
    era: str = "auto"
    """The peer's era: ``legacy`` where the fault is 2025-11-25's (a session to renew, the task-support listing)."""
    slow_method: str | None = None
    """A method the peer answers only after :data:`SLOW` seconds, from the moment the entry is open."""
    ends_sessions: bool = False
    """Once the entry is open, the HTTP peer forgets its sessions (the next request gets 404: a renewal)."""
    refused: bool = False
    """The server refuses the request before processing it, as the protocol defines the answer (a ``-32020``
    header mismatch is a validation failure, HTTP 400): "did not run" is the truth though the request arrived."""
    drops_before_write: bool = False
    """Once the entry is open, the way to the server goes before the call is written (:meth:`World.stage`)."""


_FAKE = TimeoutPolicy(idle=5, maximum=10, connect=30)
_REAL = TimeoutPolicy(idle=5, maximum=10, connect=30)

SLOW = 1000.0
"""Seconds a slow step takes: far beyond any cell's maximum."""
_STEP = TimeoutPolicy(idle=None, maximum=3, connect=30)
_REAL_STEP = TimeoutPolicy(idle=None, maximum=0.8, connect=30)
"""A call's own maximum that a slow step it needs must not outlive (no idle timeout: the maximum ends it)."""

FAULT_SPECS: dict[str, Fault] = {
    "server_error": Fault(
        "fail", {"code": -32603, "message": "boom"}, {"outcome": "failed", "seconds": 0.1}, _FAKE, _REAL
    ),
    "idle": Fault(
        "silent",
        {},
        {"seconds": 1000, "silent_polls_after": 0},
        TimeoutPolicy(idle=2, maximum=10, connect=30),
        TimeoutPolicy(idle=1, maximum=5, connect=30),  # (an adapter lists its tools under it: room for a busy host)
    ),
    "maximum": Fault(
        "chatty",
        {"interval": 0.1},
        {"seconds": 1000, "poll_interval_ms": 50},
        TimeoutPolicy(idle=2, maximum=3, connect=30),
        TimeoutPolicy(idle=2, maximum=0.8, connect=30),
    ),
    "cancel": Fault("silent", {}, {"seconds": 1000}, _FAKE, _REAL, cancel_on_arrival=True),
    "close": Fault("silent", {}, {"seconds": 1000}, _FAKE, _REAL, close_on_arrival=True),
    "server_death": Fault("die", {"after": 0}, None, _FAKE, _REAL),
    "hostile_text": Fault("fail", {"code": -32603, "message": HOSTILE_MESSAGE}, None, _FAKE, _REAL),
    "oversized": Fault("huge", {"size": OVERSIZED}, {"seconds": 0.1, "text": "x" * OVERSIZED}, _FAKE, _REAL),
    "drop_after_write": Fault("drop_mid_stream", {}, None, _FAKE, _REAL),
    "drop_before_write": Fault("increment", {"by": 1}, {"seconds": 0.1}, _FAKE, _REAL, drops_before_write=True),
    "slow_renewal": Fault(
        "silent", {}, {"seconds": 0.1}, _STEP, _REAL_STEP, era="legacy", slow_method="initialize", ends_sessions=True
    ),
    "slow_listing": Fault("silent", {}, {"seconds": 0.1}, _STEP, _REAL_STEP, era="legacy", slow_method="tools/list"),
    "header_mismatch": Fault(
        "fail",
        {"code": -32020, "message": "Mcp-Param-Account header does not match the body"},
        None,
        _FAKE,
        _REAL,
        refused=True,
    ),
    "flood": Fault(
        "flood_client",
        {"method": "ping", "count": 300, "notifications": 300, "answer": False},
        None,
        TimeoutPolicy(idle=2, maximum=10, connect=30),
        TimeoutPolicy(idle=1, maximum=5, connect=30),
    ),
}


# -- worlds --------------------------------------------------------------------------------------------------------


@dataclass
class World:
    """One transport to the scripted peer, made as a host configures it (secrets and all)."""

    name: str
    transport: Callable[[], Transport]
    arrivals: Callable[[], Counter[str]]
    fake_clock: bool
    cli_target: list[str] = field(default_factory=list)
    """What follows ``mcp-client call <tool> <arguments>`` to reach this server (empty: the CLI cannot)."""
    peer: ScriptedPeer | None = None
    """The scripted peer, where it runs in this process (None: in a process of its own)."""
    http_peer: HttpPeer | None = None
    sever: Callable[[], Awaitable[None]] | None = None
    """Takes the way to the server away, and returns once it is gone (a drop before the write): the in-memory
    peer stops serving (its streams closed), the stdio peer's process is killed, the HTTP port refuses every
    connection, the HTTP+SSE peer refuses the POST of the next call."""

    async def stage(self, fault: Fault) -> None:
        """Set the fault's stage once the entry is open (its own listing and session are not the fault's)."""
        if fault.drops_before_write:
            assert self.sever is not None, f"{self.name}: no way to drop before the write"
            await self.sever()
        if fault.slow_method is not None:
            assert self.peer is not None, f"{self.name}: the peer's script is fixed"
            self.peer.method_delays[fault.slow_method] = SLOW
        if fault.ends_sessions:
            assert self.http_peer is not None, f"{self.name}: no HTTP session to end"
            self.http_peer.end_sessions()


@asynccontextmanager
async def world(
    name: str, tmp_path: Path, *, fake_clock: bool, restart: bool = False, era: str = "auto", gated: bool = False
) -> AsyncIterator[World]:
    """The world of transport ``name``; ``gated``: an HTTP peer's port is behind a :class:`~tests.promises.gate.Gate`
    (its :attr:`World.sever` shuts it)."""
    size = MAX_MESSAGE_SIZE

    def _peer() -> ScriptedPeer:
        return ScriptedPeer(era="legacy" if era == "legacy" else "auto", tasks=True)

    if name == "memory":
        peer = _peer()
        serving = _Severable(peer)
        yield World(
            name,
            lambda: memory(serving.serve, max_message_size=size),
            lambda: peer.stats.arrivals,
            fake_clock,
            peer=peer,
            sever=serving.sever,
        )
    elif name == "stdio":
        arrivals = tmp_path / "arrivals.jsonl"
        argv = ["-m", "mcp_client.testing.peer", "--tasks", "--arrivals", str(arrivals), "--era", era]
        env = {"MATRIX_API_KEY": ENV_SECRET, "PYTHONPATH": os.pathsep.join(sys.path)}
        policy = RestartPolicy(max_restarts=3, initial_backoff=0.01) if restart else None
        cli_env = ["-e", f"MATRIX_API_KEY={ENV_SECRET}", "-e", f"PYTHONPATH={os.pathsep.join(sys.path)}"]
        yield World(
            name,
            lambda: stdio_transport(sys.executable, argv, env=env, max_message_size=size, restart=policy),
            lambda: read_arrivals(arrivals),
            fake_clock,
            [*cli_env, "--", sys.executable, *argv],
            sever=lambda: _kill_children(str(arrivals)),
        )
    elif name in ("http-core", "http-client"):
        peer = _peer()
        served = HttpPeer(peer, path=f"/mcp/{PATH_SECRET}")
        async with served.serving() as url, _gated(url, gated) as (url, shut):
            if name == "http-client":  # userinfo takes httpx2's client: the core engine is the one without it
                url = url.replace("http://", f"http://matrix:{USERINFO_SECRET}@")
            url = f"{url}?api_key={QUERY_SECRET}"
            headers = {"Authorization": f"Bearer {HEADER_SECRET}"}
            yield World(
                name,
                lambda: http(url, headers=headers, max_message_size=size),
                lambda: _http_arrivals(served),
                fake_clock,
                ["--url", url, "-H", f"Authorization: Bearer {HEADER_SECRET}"],
                peer=peer,
                http_peer=served,
                sever=shut,
            )
    elif name == "sse":
        peer = _peer()
        served_sse = SsePeer(peer, bearer=HEADER_SECRET)
        async with served_sse.serving() as client:
            url = f"http://sse.test/sse?api_key={QUERY_SECRET}"
            headers = {"Authorization": f"Bearer {HEADER_SECRET}"}

            async def refuse_the_call() -> None:
                served_sse.refuse_calls = 1

            yield World(
                name,
                lambda: sse_transport(url, headers=headers, client=client, max_message_size=size),
                lambda: peer.stats.arrivals,
                fake_clock,
                peer=peer,
                sever=refuse_the_call,
            )
    else:
        raise ValueError(f"no world {name!r}")


class _Severable:
    """The in-memory peer's serving, which :meth:`sever` ends: each connection's streams closed, as a process that
    exits closes its pipes. (A connection may be served in another thread's event loop: the blocking facade's.)"""

    def __init__(self, peer: ScriptedPeer) -> None:
        self._peer = peer
        self._serving: list[tuple[object, anyio.CancelScope, anyio.Event, threading.Event]] = []

    async def serve(self, receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        scope, ended, ended_anywhere = anyio.CancelScope(), anyio.Event(), threading.Event()
        self._serving.append((anyio.lowlevel.current_token(), scope, ended, ended_anywhere))
        try:
            with scope:
                await self._peer.serve(receive, send)
        finally:
            ended.set()
            ended_anywhere.set()

    async def sever(self) -> None:
        serving = list(self._serving)  # (not a connection opened later)
        assert serving, "the peer serves no connection"
        here = anyio.lowlevel.current_token()
        for token, scope, ended, ended_anywhere in serving:
            if token == here:
                scope.cancel()
                await ended.wait()
            else:
                await anyio.to_thread.run_sync(functools.partial(_cancel_in, token, scope))
                assert await anyio.to_thread.run_sync(ended_anywhere.wait, 30), "the peer still serves"


def _cancel_in(token: object, scope: anyio.CancelScope) -> None:
    """Cancel ``scope`` in the event loop of ``token`` (from a worker thread)."""
    anyio.from_thread.run_sync(scope.cancel, token=token)  # type: ignore[arg-type]


async def _kill_children(marker: str) -> None:
    """Kill this process's children whose command line holds ``marker``, and wait until each is reaped (its pipes
    closed with it, its exit seen by its client)."""
    pids = [pid for pid in child_processes() if marker in _command_line(pid)]
    assert pids, f"no process of {marker!r} to kill"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    with anyio.fail_after(30):  # until reaped: the client has seen its server's exit (not only its pipes' end)
        while any(Path(f"/proc/{pid}").exists() for pid in pids):
            await anyio.sleep(0.01)


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@asynccontextmanager
async def _gated(url: str, gated: bool) -> AsyncIterator[tuple[str, Callable[[], Awaitable[None]] | None]]:
    """``url``, behind a gate when ``gated`` (the URL of the gate's port, and how to shut it)."""
    if not gated:
        yield url, None
        return
    upstream = urlsplit(url).port
    assert upstream is not None
    async with gate(upstream) as the_gate:
        yield url.replace(f":{upstream}/", f":{the_gate.port}/", 1), the_gate.shut


def _http_arrivals(served: HttpPeer) -> Counter[str]:
    """The scripted peer's count, and the requests the HTTP server answered with a fault of its own (they never
    reach the peer: a drop after the write)."""
    arrivals = Counter(served.peer.stats.arrivals)
    for log in served.stats.requests:
        if log.fault is not None and log.message is not None and "id" in log.message:
            arrivals[arrival_key(str(log.message.get("method")), log.message.get("params"))] += 1
    return arrivals


# -- what a cell saw -----------------------------------------------------------------------------------------------


@dataclass
class Seen:
    """What one cell saw: the error its caller got (or the cancellation it asked for), the texts that reached the
    model or the terminal, and the peer's count of the call's arrival."""

    error: BaseException | None = None
    cancelled_by_caller: bool = False
    texts: list[str] = field(default_factory=list)
    """Texts a model or a terminal got: ``for_model``, an adapter's tool result, the CLI's output."""
    resuming: bool = False
    ended_at: float | None = None
    """When the call ended, where the caller goes on to wait for something else before it returns."""
    """Set once a task is being picked up (task_result, resume): the caller's cancel waits for it."""
    close: Callable[[], Awaitable[None]] | None = None
    """How the host closes what the entry opened (the client, the group, the blocking client) while a call runs."""
    exit_code: int | None = None
    spans: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    """The spans of the entry's client (an OpenTelemetry tracer provider of the cell's own)."""
    elapsed: float = 0.0
    arrived: int = 0
    slots_in_flight: int = 0


def tool_and_arguments(entry: str, fault: Fault) -> tuple[str, Mapping[str, Any]]:
    if entry in ("task", "task_result", "resume"):
        assert fault.task_arguments is not None
        return "task_work", fault.task_arguments
    return fault.tool, fault.arguments


Caller = Callable[[str, Mapping[str, Any], TimeoutPolicy, Seen], Awaitable[None]]
"""Makes the call: ``(tool, arguments, policy, seen)``; raises what its caller would get."""


@asynccontextmanager
async def entry_point(entry: str, the_world: World, seen: Seen, policy: TimeoutPolicy) -> AsyncIterator[Caller]:
    """The public way ``entry`` makes a call, opened on ``the_world`` with ``policy`` as its client's default (an
    adapter calls under it); its open and close are not timed. Every client it opens sends its spans to
    ``seen.spans``."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(seen.spans))
    tracing = Tracing(provider)
    try:
        async with _entry_point(entry, the_world, seen, policy, tracing) as caller:
            yield caller
    finally:
        provider.shutdown()


@asynccontextmanager
async def _entry_point(
    entry: str, the_world: World, seen: Seen, policy: TimeoutPolicy, tracing: Tracing
) -> AsyncIterator[Caller]:
    if entry in ("call_tool", "supervisor", "task"):
        async with Client(the_world.transport(), timeout=policy, on_event=tracing.on_event, **TOOL_HINTS_OFF) as client:
            seen.close = client.aclose

            async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
                try:
                    await client.call_tool(tool, arguments, timeout=policy)
                finally:
                    seen.slots_in_flight = _in_flight(client)

            yield call
    elif entry == "tool_call":
        async with Client(the_world.transport(), timeout=policy, on_event=tracing.on_event, **TOOL_HINTS_OFF) as client:
            seen.close = client.aclose

            async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
                try:
                    async with client.tool_call(tool, arguments, timeout=policy) as handle:
                        await handle.result()
                finally:
                    seen.slots_in_flight = _in_flight(client)

            yield call
    elif entry == "task_result":
        async with Client(the_world.transport(), timeout=policy, on_event=tracing.on_event, **TOOL_HINTS_OFF) as client:
            seen.close = client.aclose

            async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
                async with client.tool_call(tool, arguments, timeout=_REAL) as handle:
                    with anyio.fail_after(30):
                        while handle.task_id is None:
                            await anyio.sleep(0.01)
                    task_id = handle.task_id
                    handle.detach()
                seen.resuming = True
                try:
                    await client.task_result(task_id, timeout=policy)
                finally:
                    seen.ended_at = anyio.current_time()
                    seen.slots_in_flight = await _in_flight_after(client, handle)

            yield call
    elif entry == "resume":
        async with Client(the_world.transport(), timeout=policy, on_event=tracing.on_event, **TOOL_HINTS_OFF) as client:
            seen.close = client.aclose

            async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
                async with client.tool_call(tool, arguments, timeout=_REAL) as handle:
                    reference = await handle.handoff()
                    assert reference is not None, "the call became no task"
                    handle.detach()
                seen.resuming = True
                try:
                    await client.resume(reference, timeout=policy)
                finally:
                    seen.ended_at = anyio.current_time()
                    seen.slots_in_flight = await _in_flight_after(client, handle)

            yield call
    elif entry == "group":
        async with ClientGroup(
            {"matrix": the_world.transport()}, timeout=policy, on_event=tracing.on_group_event, **TOOL_HINTS_OFF
        ) as group:
            seen.close = group.aclose

            member = group["matrix"]

            async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
                try:
                    await group.call_tool(f"matrix/{tool}", arguments, timeout=policy)
                finally:
                    seen.slots_in_flight = _in_flight(member)

            yield call
    elif entry == "sync":
        from mcp_client.sync.client import Client as SyncClient

        blocking = await anyio.to_thread.run_sync(
            lambda: SyncClient(the_world.transport(), timeout=policy, on_event=tracing.on_event).open()
        )
        try:

            async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
                await anyio.to_thread.run_sync(lambda: blocking.call_tool(tool, dict(arguments), timeout=policy))

            async def close() -> None:
                await anyio.to_thread.run_sync(blocking.close)

            seen.close = close

            yield call
        finally:
            await anyio.to_thread.run_sync(blocking.close)
    elif entry in ("langchain", "openai_agents", "pydantic_ai"):
        async with Client(the_world.transport(), timeout=policy, on_event=tracing.on_event, **TOOL_HINTS_OFF) as client:
            seen.close = client.aclose
            with _spied_error_text(entry, seen):
                yield await _adapter_caller(entry, client)
            seen.slots_in_flight = _in_flight(client)
    elif entry == "temporal":
        async with _temporal_caller(the_world, policy, tracing, seen) as temporal_call:
            yield temporal_call
    elif entry == "cli":

        async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
            import json

            from mcp_client.cli.app import main

            argv = ["call", "--max", f"{policy.maximum:g}", "--retries", "0"]
            if policy.idle is not None:  # (none: the CLI's default idle timeout, which the maximum cuts short)
                argv += ["--idle", f"{policy.idle:g}"]
            argv += [tool, json.dumps(dict(arguments)), *the_world.cli_target]
            out, err = io.StringIO(), io.StringIO()

            def run() -> int:
                with redirect_stdout(out), redirect_stderr(err):
                    return main(argv)

            seen.exit_code = await anyio.to_thread.run_sync(run)
            seen.texts += [out.getvalue(), err.getvalue()]

        yield call
    else:
        raise ValueError(f"no entry point {entry!r}")


@asynccontextmanager
async def _temporal_caller(
    the_world: World, policy: TimeoutPolicy, tracing: Tracing, seen: Seen
) -> AsyncIterator[Caller]:
    """The Temporal activity, one attempt in temporalio's ``ActivityEnvironment`` (no Temporal server: the worker's
    clients, the activity and its failure are the package's; the real server's runs are in tests/temporal). The
    checkpoint's confirmation is acknowledged at once. Its failure is the ``ApplicationError`` Temporal records."""
    from temporalio.exceptions import ApplicationError
    from temporalio.testing import ActivityEnvironment

    from mcp_client.integrations.temporal import activity_name
    from mcp_client.integrations.temporal.activities import MCPActivities
    from mcp_client.integrations.temporal.connections import Connections
    from mcp_client.integrations.temporal.wire import ToolCallInput

    clients: list[Client] = []

    def factory() -> Client:
        client = Client(the_world.transport(), timeout=policy, on_event=tracing.on_event, **TOOL_HINTS_OFF)
        clients.append(client)
        return client

    async def confirm(details: Any) -> None:
        return None

    activities = MCPActivities(Connections({"matrix": factory}), confirm=confirm)
    by_name = {getattr(fn, "__temporal_activity_definition").name: fn for fn in activities.definitions()}
    operation = by_name[activity_name("matrix", "call_tool")]
    environment = _attempt_now(ActivityEnvironment)

    async def call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
        request = ToolCallInput(tool, dict(arguments), policy.idle, policy.maximum)
        try:
            await environment.run(operation, request)
        except ApplicationError as failure:
            seen.error = failure
            seen.texts += [failure.message, *(str(detail) for detail in failure.details)]
        finally:
            seen.slots_in_flight = sum(_in_flight(client) for client in clients)

    async with activities.connections.running():
        # (the worker's connection started before the fault is staged, as a worker's is by its earlier activities)
        activities.connections.release(await activities.connections.get("matrix"))
        yield call


def _attempt_now(environment_class: Any) -> Any:
    """A first attempt in temporalio's ``ActivityEnvironment``, scheduled and started now (the maximum counts from
    then)."""
    import dataclasses
    from datetime import UTC, datetime, timedelta

    started = datetime.now(UTC)
    environment = environment_class()
    environment.info = dataclasses.replace(
        environment.info, scheduled_time=started, started_time=started, heartbeat_timeout=timedelta(seconds=30)
    )
    return environment


async def _in_flight_after(client: Client, detached: Call[Any]) -> int:
    """The slots taken once the call that made the task, detached, had a moment to see its task end (the pick-up
    cancels the task when it stops early): what is still taken then is held for the task's life."""
    with anyio.move_on_after(2):
        await detached.wait()
    return _in_flight(client)


def _in_flight(client: Client) -> int:
    limit = client._in_flight_limit
    return limit.in_flight if limit is not None else 0


_ERROR_TEXT_MODULES = {
    "langchain": "mcp_client.integrations.langchain",
    "openai_agents": "mcp_client.integrations.openai_agents",
    "pydantic_ai": "mcp_client.integrations.pydantic_ai.results",
}
"""Where each adapter looks up ``error_text`` when it turns a failure into text for the model."""


@contextlib.contextmanager
def _spied_error_text(entry: str, seen: Seen) -> Iterator[None]:
    """An adapter turns a failure into text for the model through ``error_text``: keep the error it was given."""
    import importlib

    module = importlib.import_module(_ERROR_TEXT_MODULES[entry])
    original: Callable[[BaseException], str] = getattr(module, "error_text")  # noqa: B009 (each adapter's own)

    def spy(error: BaseException) -> str:
        seen.error = error
        text: str = original(error)
        seen.texts.append(text)
        return text

    setattr(module, "error_text", spy)  # noqa: B010
    try:
        yield
    finally:
        setattr(module, "error_text", original)  # noqa: B010


async def _adapter_caller(entry: str, client: Client) -> Caller:
    if entry == "langchain":
        from mcp_client.integrations.langchain import load_tools

        tools = {tool.name: tool for tool in await load_tools(client)}

        async def langchain_call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
            seen.texts.append(str(await tools[tool].ainvoke(dict(arguments))))

        return langchain_call
    if entry == "openai_agents":
        from mcp_client.integrations.openai_agents import MCPClientServer

        server = MCPClientServer(client)
        await server.list_tools()

        async def agents_call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
            result = await server.call_tool(tool, dict(arguments))
            seen.texts += [getattr(block, "text", "") for block in result.content]

        return agents_call
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from mcp_client.integrations.pydantic_ai import MCPToolset

    toolset = MCPToolset(client)

    async def pydantic_call(tool: str, arguments: Mapping[str, Any], policy: TimeoutPolicy, seen: Seen) -> None:
        steps = [
            lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, dict(arguments), tool_call_id="c1")]),
            lambda messages, info: ModelResponse(
                parts=[TextPart(str([p.content for p in messages[-1].parts if isinstance(p, ToolReturnPart)]))]
            ),
        ]

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return steps.pop(0)(messages, info)

        agent = Agent(FunctionModel(respond), toolsets=[toolset], retries=0)
        result = await agent.run("go")
        seen.texts.append(str(result.output))

    return pydantic_call


# -- running a cell ------------------------------------------------------------------------------------------------


def open_fds() -> int | None:
    try:
        return len(os.listdir("/proc/self/fd"))
    except FileNotFoundError:  # (not Linux: the count is left out)
        return None


def child_processes() -> list[int]:
    """Live (not zombie) processes whose parent is this one."""
    children = []
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            children.append(int(pid))
    return children


def running_tasks() -> int:
    """Tasks alive in this event loop (asyncio's, or every task of trio's tree)."""
    if anyio.get_current_task() and _is_asyncio():
        return len(asyncio.all_tasks())
    import trio

    def count(task: trio.lowlevel.Task) -> int:
        return 1 + sum(count(child) for nursery in task.child_nurseries for child in nursery.child_tasks)

    root = trio.lowlevel.current_root_task()
    assert root is not None
    return count(root)


def _is_asyncio() -> bool:
    import sniffio

    return sniffio.current_async_library() == "asyncio"


async def run_cell(entry: str, transport: str, fault_name: str, tmp_path: Path, *, fake_clock: bool) -> Seen:
    """Run one cell; return what it saw (the leftovers are checked by the caller, around this)."""
    fault = FAULT_SPECS[fault_name]
    policy = fault.fake_policy if fake_clock else fault.real_policy
    tool, arguments = tool_and_arguments(entry, fault)
    seen = Seen()
    key = f"tools/call {tool}"
    restart = entry == "supervisor"
    async with world(
        transport, tmp_path, fake_clock=fake_clock, restart=restart, era=fault.era, gated=fault.drops_before_write
    ) as the_world:
        picks_up = entry in ("task_result", "resume")

        async def once_arrived() -> None:
            """Until the server has the call (a pick-up: its first poll is under way too)."""
            while the_world.arrivals()[key] == 0 or (picks_up and not seen.resuming):
                await anyio.sleep(0.01)
            if picks_up:
                await anyio.sleep(0.2)

        async def calling() -> None:
            try:
                await call(tool, arguments, policy, seen)
            except Exception as error:  # (judged by the test: anything but an MCPClientError is a broken promise)
                seen.error = error

        # (the outer task group is entered before the client: a call may outlive the client's close)
        async with anyio.create_task_group() as outer, entry_point(entry, the_world, seen, policy) as call:
            await the_world.stage(fault)
            started = anyio.current_time()
            if fault.close_on_arrival:
                assert seen.close is not None
                done = anyio.Event()

                async def call_then_done() -> None:
                    try:
                        await calling()
                    finally:
                        seen.ended_at = seen.ended_at or anyio.current_time()
                        done.set()

                outer.start_soon(call_then_done)
                await once_arrived()
                await seen.close()
                with anyio.fail_after(bound(fault_name, fake_clock=fake_clock)):
                    await done.wait()
            else:
                async with anyio.create_task_group() as watchers:
                    with anyio.CancelScope() as scope:
                        if fault.cancel_on_arrival:

                            async def cancel_once_arrived() -> None:
                                await once_arrived()
                                scope.cancel()

                            watchers.start_soon(cancel_once_arrived)
                        await calling()
                    seen.cancelled_by_caller = scope.cancelled_caught
                    watchers.cancel_scope.cancel()
            seen.elapsed = (seen.ended_at if seen.ended_at is not None else anyio.current_time()) - started
        seen.arrived = the_world.arrivals()[key]
    return seen


def bound(fault_name: str, *, fake_clock: bool) -> float:
    fault = FAULT_SPECS[fault_name]
    policy = fault.fake_policy if fake_clock else fault.real_policy
    assert policy.maximum is not None
    return policy.maximum + (FAKE_MARGIN if fake_clock else REAL_MARGIN)
