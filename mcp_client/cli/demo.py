"""``mcp-client demo``: the timeout policy at work, against the bundled demo server over stdio (or HTTP).

Four scenes, each one real call with real protocol traffic:

a. a slow call outlives its idle timeout because every progress notification resets the idle timer;
b. a silent call is ended by its idle timeout, and the server confirms it was told to stop;
c. a chatty call (progress forever) is ended by its hard maximum, which progress never extends;
d. a long call is cancelled cleanly by Ctrl-C (or, after a few seconds, automatically).

With ``--http`` the same scenes run over Streamable HTTP against the scripted peer served in this process, where a
cancellation closes the call's response stream; with ``--url`` they run against any server with the demo tools.

The server's ``stats`` tool reports how each call ended on its side, so the demo shows the cancellation
reaching the server instead of asking you to believe it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types

import mcp_client
from mcp_client import (
    Call,
    CancelSent,
    Client,
    IdleTimeout,
    IdleTimerReset,
    MaxTimeout,
    MCPClientError,
    RequestCancelled,
    RequestSent,
    TimeoutPolicy,
    Transport,
    http,
    stdio,
)
from mcp_client._redact import redacted_url
from mcp_client.cli.display import ProgressView, print_error, progress_line
from mcp_client.cli.interrupts import EventLog, Interrupts
from mcp_client.cli.outcome import CTRL_C_REASON
from mcp_client.cli.safe_text import markup

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["FAST", "NORMAL", "Timings", "run_demo"]

DEMO_SERVER_MODULE: Final = "mcp_client.testing.demo_server"


@dataclass(frozen=True)
class Timings:
    """The durations of the scenes, in seconds."""

    idle: float
    maximum: float
    reindex_seconds: float
    reindex_every: float
    chatty_interval: float
    chatty_maximum: float
    ctrl_c_wait: float
    long_seconds: float = 30.0
    confirm: float = 2.0


NORMAL: Final = Timings(
    idle=1.0, maximum=10.0, reindex_seconds=3.0, reindex_every=0.4, chatty_interval=0.2, chatty_maximum=2.5,
    ctrl_c_wait=5.0,
)  # fmt: skip
FAST: Final = Timings(
    idle=0.5, maximum=5.0, reindex_seconds=1.5, reindex_every=0.2, chatty_interval=0.1, chatty_maximum=1.2,
    ctrl_c_wait=1.5,
)  # fmt: skip


@dataclass
class Scene:
    """One scene's verdict."""

    key: str
    title: str
    expected: str
    got: str = "did not run"
    ok: bool = False


@dataclass
class Outcome:
    """How one call of a scene ended."""

    result: mcp_types.CallToolResult | None
    error: MCPClientError | None
    request_id: int | str | None
    elapsed: float
    progress_updates: int
    idle_resets: int


@dataclass
class Stage:
    """What every scene gets."""

    client: Client
    log: EventLog
    console: Console
    timings: Timings
    interrupts: Interrupts
    over_http: bool = False

    @property
    def cancel_ways(self) -> frozenset[mcp_client.CancelMethod]:
        """How a cancellation may go out: a notification on stdio; over HTTP, closing the response stream (at
        2026-07-28) or the notification and the stream close (at 2025-11-25)."""
        if not self.over_http:
            return frozenset({mcp_client.CancelMethod.NOTIFICATION})
        return frozenset({mcp_client.CancelMethod.STREAM_CLOSE, mcp_client.CancelMethod.NOTIFICATION_AND_STREAM_CLOSE})

    @property
    def telling(self) -> str:
        """How the client tells the server to stop, in words."""
        return "closes the call's response stream" if self.over_http else "sends notifications/cancelled"


def demo_transport() -> mcp_client.StdioTransport:
    """``python -m mcp_client.testing.demo_server``, able to import this very copy of mcp_client."""
    source_root = str(Path(mcp_client.__file__).resolve().parent.parent)
    python_path = os.pathsep.join(filter(None, [source_root, os.environ.get("PYTHONPATH")]))
    return stdio(sys.executable, ["-m", DEMO_SERVER_MODULE], env={"PYTHONPATH": python_path})


DEMO_TOOLS: Final = frozenset({"reindex", "stuck", "chatty", "stats"})
"""The tools the scenes call; a server at ``--url`` must have them all."""


async def run_demo(
    interrupts: Interrupts,
    console: Console,
    *,
    fast: bool = False,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> int:
    """Run the four scenes; 0 when each behaved as expected, 1 otherwise.

    Against the bundled demo server over stdio by default; with ``url``, over Streamable HTTP against that
    endpoint, or (``url=""``) against the bundled scripted peer served over HTTP in this process.
    """
    timings = FAST if fast else NORMAL
    console.rule("[bold]mcp-client demo")
    if url is None:
        console.print(
            f"Starting the bundled demo server: [cyan]{Path(sys.executable).name} -m {DEMO_SERVER_MODULE}[/] "
            "(stdio). Every call below is real protocol traffic.",
            highlight=False,
        )
        return await play_scenes(interrupts, console, timings, demo_transport(), over_http=False)
    if url:
        console.print(
            f"Talking Streamable HTTP to [cyan]{markup(redacted_url(url))}[/]. Every call below is real protocol "
            "traffic.",
            highlight=False,
        )
        return await play_scenes(interrupts, console, timings, http(url, headers=headers), over_http=True)
    from mcp_client.testing.http_peer import HttpPeer
    from mcp_client.testing.peer import ScriptedPeer

    async with HttpPeer(ScriptedPeer(era="auto")).serving() as served:
        console.print(
            f"Serving the bundled scripted peer over Streamable HTTP at [cyan]{served}[/] (in this process). "
            "Every call below is real protocol traffic.",
            highlight=False,
        )
        return await play_scenes(interrupts, console, timings, http(served), over_http=True)


async def play_scenes(
    interrupts: Interrupts, console: Console, timings: Timings, transport: Transport, *, over_http: bool
) -> int:
    log = EventLog()
    scenes: list[Scene] = []
    try:
        client = Client(transport, timeout=TimeoutPolicy(idle=10, maximum=30, connect=20), on_event=log)
        async with client:
            info = client.server_info
            name = f"{info.name} {info.version}" if info is not None else "the demo server"
            console.print(f"Connected to {markup(name)}, protocol {client.protocol_version}.", highlight=False)
            missing = DEMO_TOOLS - {tool.name for tool in await client.list_tools()}
            if missing:
                console.print(
                    f"[bold red]This server is not a demo server[/]: it has no {', '.join(sorted(missing))} tool.",
                    highlight=False,
                )
                return 1
            stage = Stage(client, log, console, timings, interrupts, over_http)
            for play in (scene_progress, scene_silent, scene_chatty, scene_ctrl_c):
                scenes.append(await play(stage))
    except MCPClientError as exc:
        console.print("[bold red]The demo server failed:[/]")
        print_error(console, exc, log)
        return 1
    return summarise(console, scenes)


def summarise(console: Console, scenes: list[Scene]) -> int:
    from rich.table import Table

    table = Table(title="Summary", title_justify="left")
    table.add_column("scene", no_wrap=True)
    table.add_column("what happened")
    table.add_column("", no_wrap=True)
    for scene in scenes:
        verdict = "[green]OK[/]" if scene.ok else "[bold red]FAILED[/]"
        table.add_row(f"{scene.key}. {scene.title}", markup(scene.got), verdict)
    console.print()
    console.print(table)
    failed = [scene for scene in scenes if not scene.ok]
    for scene in failed:
        console.print(
            f"[bold red]scene {scene.key} failed[/]: expected {markup(scene.expected)}; got {markup(scene.got)}"
        )
    if not failed:
        console.print("[green]Every scene behaved as expected.[/]")
    return 1 if failed else 0


# -- the scenes ----------------------------------------------------------------------------------------------


async def scene_progress(stage: Stage) -> Scene:
    t = stage.timings
    scene = Scene("a", "progress resets the idle timer", "a result, after several idle timer resets")
    introduce(
        stage,
        scene,
        f"reindex takes {t.reindex_seconds:g} s, but the idle timeout is only {t.idle:g} s "
        f"(maximum {t.maximum:g} s). It reports progress every {t.reindex_every:g} s, and each accepted "
        "progress notification resets the idle timer, so the call lives as long as the server shows signs of life.",
    )
    outcome = await run_call(
        stage,
        "reindex",
        {"collection": "docs", "seconds": t.reindex_seconds, "progress_every": t.reindex_every},
        TimeoutPolicy(idle=t.idle, maximum=t.maximum),
    )
    if outcome.result is not None:
        text = " ".join(b.text for b in outcome.result.content if isinstance(b, mcp_types.TextContent))
        say(stage, f"succeeded after {outcome.elapsed:.1f} s: {text!r}")
        say(stage, f"idle timer reset {outcome.idle_resets} times (IdleTimerReset events)")
        scene.got = f"a result after {outcome.elapsed:.1f} s; idle timer reset {outcome.idle_resets} times"
        scene.ok = not outcome.result.is_error and outcome.idle_resets >= 2 and outcome.elapsed > t.idle
    else:
        report_error(stage, scene, outcome)
    return scene


async def scene_silent(stage: Stage) -> Scene:
    t = stage.timings
    scene = Scene("b", "a silent call hits its idle timeout", f"IdleTimeout after ~{t.idle:g} s; server cancelled")
    introduce(
        stage,
        scene,
        f"stuck never answers and never reports progress. After {t.idle:g} s without a sign of life the call "
        f"fails with IdleTimeout, and the client tells the server to stop (it {stage.telling}).",
    )
    outcome = await run_call(stage, "stuck", {}, TimeoutPolicy(idle=t.idle, maximum=t.maximum))
    await judge_cancellation(stage, scene, outcome, IdleTimeout)
    return scene


async def scene_chatty(stage: Stage) -> Scene:
    t = stage.timings
    scene = Scene("c", "the maximum ends a chatty call", f"MaxTimeout after ~{t.chatty_maximum:g} s; server cancelled")
    introduce(
        stage,
        scene,
        f"chatty reports progress every {t.chatty_interval:g} s, forever. Progress keeps resetting the "
        f"{t.idle:g} s idle timer, but nothing extends the hard maximum of {t.chatty_maximum:g} s.",
    )
    policy = TimeoutPolicy(idle=t.idle, maximum=t.chatty_maximum)
    outcome = await run_call(stage, "chatty", {"interval": t.chatty_interval}, policy)
    if outcome.error is not None:
        say(stage, f"{outcome.progress_updates} progress updates arrived; idle timer reset {outcome.idle_resets} times")
    await judge_cancellation(stage, scene, outcome, MaxTimeout, need_progress=True)
    return scene


async def scene_ctrl_c(stage: Stage) -> Scene:
    t = stage.timings
    scene = Scene("d", "Ctrl-C cancels a call cleanly", "RequestCancelled; server cancelled")
    introduce(
        stage,
        scene,
        f"Press Ctrl-C within {t.ctrl_c_wait:g} s to cancel a long call (or wait and it is cancelled for you). "
        f"reindex would take {t.long_seconds:g} s; Ctrl-C calls call.cancel(), the client {stage.telling}, "
        "and the call raises RequestCancelled.",
    )
    outcome = await run_call(
        stage,
        "reindex",
        {"collection": "archive", "seconds": t.long_seconds, "progress_every": 0.5},
        TimeoutPolicy(idle=max(t.idle, 2.0), maximum=t.long_seconds + 10),
        ctrl_c=True,
        auto_cancel=t.ctrl_c_wait,
    )
    if isinstance(outcome.error, RequestCancelled):
        pressed = outcome.error.reason == CTRL_C_REASON
        say(stage, "you pressed Ctrl-C" if pressed else f"no Ctrl-C within {t.ctrl_c_wait:g} s: cancelled for you")
    await judge_cancellation(stage, scene, outcome, RequestCancelled)
    return scene


# -- helpers -------------------------------------------------------------------------------------------------


def introduce(stage: Stage, scene: Scene, explanation: str) -> None:
    stage.console.print()
    stage.console.rule(f"[bold]Scene {scene.key}: {scene.title}", align="left")
    stage.console.print(explanation, highlight=False)


def say(stage: Stage, text: str) -> None:
    stage.console.print(f"  -> {markup(text)}", highlight=False)


def report_error(stage: Stage, scene: Scene, outcome: Outcome) -> None:
    if outcome.error is not None:
        print_error(stage.console, outcome.error)
        scene.got = f"{type(outcome.error).__name__}: {outcome.error}"
    else:
        scene.got = "a result"


async def judge_cancellation(
    stage: Stage, scene: Scene, outcome: Outcome, expected: type[MCPClientError], *, need_progress: bool = False
) -> None:
    """The call must have failed with ``expected``, been cancelled on the wire, and the server must agree."""
    error = outcome.error
    if not isinstance(error, expected) or outcome.request_id is None:
        if outcome.result is not None:
            text = " ".join(b.text for b in outcome.result.content if isinstance(b, mcp_types.TextContent))
            say(stage, f"unexpected result: {text!r}")
        report_error(stage, scene, outcome)
        return
    say(stage, f"{type(error).__name__} after {outcome.elapsed:.2f} s: {error} (request id {outcome.request_id})")
    sent, server_says = await server_confirmation(stage, outcome.request_id)
    if sent is not None:
        say(stage, f"CancelSent for request {sent.request_id}: how = {sent.how.value}, reason {sent.reason!r}")
    else:
        say(stage, "no CancelSent event: the cancellation did not go out")
    say(stage, f"the server (stats) says request {outcome.request_id} was: {server_says or 'not recorded'}")
    scene.got = f"{type(error).__name__} after {outcome.elapsed:.1f} s; server: {server_says or 'no record'}"
    scene.ok = (
        sent is not None
        and sent.how in stage.cancel_ways
        and server_says == "cancelled"
        and (outcome.progress_updates > 0 or not need_progress)
    )


async def server_confirmation(stage: Stage, request_id: int | str) -> tuple[CancelSent | None, str | None]:
    """The ``CancelSent`` event of the request, and its outcome as the server recorded it (via ``stats``)."""
    limit = stage.timings.confirm
    event = await stage.log.wait_for(lambda e: isinstance(e, CancelSent) and e.request_id == request_id, limit)
    sent = event if isinstance(event, CancelSent) else None
    server_says: str | None = None
    with anyio.move_on_after(limit):
        while server_says is None:
            stats = await stage.client.call_tool("stats", timeout=TimeoutPolicy(idle=limit, maximum=limit))
            text = "".join(b.text for b in stats.content if isinstance(b, mcp_types.TextContent))
            outcomes: Any = json.loads(text).get("outcomes", {})
            found = outcomes.get(str(request_id)) if isinstance(outcomes, dict) else None
            server_says = str(found) if found is not None else None
            if server_says is None:  # the server records the outcome once the cancelled task has unwound
                await anyio.sleep(0.05)
    return sent, server_says


async def run_call(
    stage: Stage,
    tool: str,
    arguments: dict[str, Any],
    policy: TimeoutPolicy,
    *,
    ctrl_c: bool = False,
    auto_cancel: float | None = None,
) -> Outcome:
    """Call ``tool`` with a progress bar; Ctrl-C (when ``ctrl_c``) or ``auto_cancel`` seconds cancel it."""
    mark = stage.log.mark()
    started = anyio.current_time()
    result: mcp_types.CallToolResult | None = None
    error: MCPClientError | None = None
    label = f"{tool} (idle {policy.idle:g} s, max {policy.maximum:g} s)"
    with progress_line(stage.console, label, transient=False) as view:
        async with stage.client.tool_call(tool, arguments, timeout=policy) as call, anyio.create_task_group() as tg:
            if ctrl_c:
                stage.interrupts.target = lambda: call.cancel(CTRL_C_REASON)
            if auto_cancel is not None:
                tg.start_soon(cancel_later, call, auto_cancel)
            try:
                await follow(call, view)
                result = await call.result()
            except MCPClientError as exc:
                error = exc
            finally:
                stage.interrupts.target = None
                tg.cancel_scope.cancel()
        view.finish(f"{tool}: {'done' if error is None else type(error).__name__}", ok=error is None)
    elapsed = anyio.current_time() - started
    events = stage.log.since(mark)
    request_id: int | str | None = error.request_ids[-1] if error is not None and error.request_ids else None
    if request_id is None:
        sent = [e for e in events if isinstance(e, RequestSent) and e.method == "tools/call"]
        request_id = sent[0].request_id if sent else None
    resets = sum(1 for e in events if isinstance(e, IdleTimerReset) and e.request_id == request_id)
    return Outcome(result, error, request_id, elapsed, view.updates, resets)


async def follow(call: Call[mcp_types.CallToolResult], view: ProgressView) -> None:
    async for update in call.progress():
        view.update(update)


async def cancel_later(call: Call[Any], delay: float) -> None:
    await anyio.sleep(delay)
    call.cancel(f"no Ctrl-C within {delay:g} s: cancelled automatically")
