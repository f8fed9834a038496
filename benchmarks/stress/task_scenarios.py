"""The stress scenarios of task-backed calls and of the restart supervisor.

* :func:`task_storm`: many task-backed calls at once against task servers that misbehave: statuses that step
  backwards, tasks the server forgets (expiry), reports under a garbled task id, polls that hang, tasks that fail,
  maximums shorter than the task, and over HTTP polls whose connection drops mid-answer. Every call must end by its
  maximum with its result or the typed error its scenario calls for, ``tools/call`` must go out once per call, and
  every task the client gave up on must get exactly one ``tasks/cancel`` (none for a task that ended or that the
  server forgot).
* :func:`supervised_task_kills`: a supervised stdio server killed while a task-backed call polls its task: the call
  must fail at once with a ``TransportError`` that says it may have run, never be sent again, and the next call
  must run on the restarted process; no process, pipe or task may be left behind.

Each returns a :class:`~benchmarks.stress.scenarios.Tally`; every await is bounded, so a hang is reported.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections import Counter
from typing import Any

import anyio

from benchmarks.stress.accounting import snapshot
from benchmarks.stress.scenarios import HANG_AFTER, Tally, TransportName, _compare, _text
from mcp_client import (
    Client,
    Event,
    IdleTimeout,
    MaxTimeout,
    MCPClientError,
    ProtocolError,
    RequestSent,
    RestartPolicy,
    ServerRestarted,
    TaskCreated,
    TaskFailed,
    TaskNotFound,
    TimeoutPolicy,
    TransportError,
    TransportFailure,
    http,
    memory,
    stdio,
)
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.http_peer import HttpFault, HttpPeer
from mcp_client.testing.peer import ScriptedPeer

__all__ = ["supervised_task_kills", "task_storm"]

POLICY = TimeoutPolicy(idle=2, maximum=6, connect=20)

_BACKWARDS = [
    {"status": "working", "message": "step 2", "updated": 2},
    {"status": "working", "message": "step 1", "updated": 1},
    {"status": "working", "message": "step 3", "updated": 3},
    {"status": "completed", "updated": 4},
]

# kind: (arguments, the call's own policy or None, the error it must end with or None for a result, cancelled?)
_KINDS: dict[str, tuple[dict[str, Any], TimeoutPolicy | None, type[MCPClientError] | None, bool]] = {
    "completes": ({"seconds": 0.3}, None, None, False),
    "backwards": ({"script": _BACKWARDS}, None, None, False),
    "forgotten": ({"seconds": 60, "expire_after": 0.3}, None, TaskNotFound, False),
    "garbled": ({"seconds": 60, "garble_ids_after": 1}, None, ProtocolError, True),
    "hangs": ({"seconds": 60, "silent_polls_after": 1}, TimeoutPolicy(idle=0.4, maximum=6), IdleTimeout, True),
    "outlives": ({"seconds": 60}, TimeoutPolicy(idle=2, maximum=0.6), MaxTimeout, True),
    "fails": ({"seconds": 0.2, "outcome": "failed"}, None, TaskFailed, False),
}


async def task_storm(transport: TransportName, rounds: int, *, calls: int = 14, seed: int = 3) -> Tally:
    """``rounds`` rounds of ``calls`` concurrent task-backed calls of random misbehaving kinds (see the module)."""
    tally = Tally(f"tasks/{transport}")
    rng = random.Random(seed)
    before = snapshot()
    try:
        for _ in range(rounds):
            kinds = [rng.choice(sorted(_KINDS)) for _ in range(calls)]
            with anyio.fail_after(HANG_AFTER):
                await _storm_round(transport, kinds, tally)
    except TimeoutError:
        tally.fail("hang", f"{transport}: a round of task calls did not end within {HANG_AFTER:g} s")
    except Exception as exc:  # anything escaping the client is the defect this suite exists to catch
        tally.fail("crash", f"{transport}: {exc!r}")
    await anyio.sleep(0.2)
    _compare(before, snapshot(), tally)
    return tally


async def _storm_round(transport: TransportName, kinds: list[str], tally: Tally) -> None:
    peer = ScriptedPeer(era="modern", tasks=True)
    created: dict[str, str] = {}  # task id -> the kind of its call

    def on_event(event: Event) -> None:
        if isinstance(event, TaskCreated):
            tally.counts["tasks_created"] += 1
        elif isinstance(event, TransportFailure):
            tally.counts["polls_cut"] += 1

    async def one(client: Client, number: int, kind: str) -> None:
        arguments, policy, expected, _ = _KINDS[kind]
        tag = f"{kind}-{number}"
        try:
            with anyio.fail_after(HANG_AFTER / 2):
                if policy is None:
                    result = await client.call_tool("task_work", {**arguments, "text": tag})
                else:
                    result = await client.call_tool("task_work", {**arguments, "text": tag}, timeout=policy)
        except MCPClientError as exc:
            if expected is None or not isinstance(exc, expected):
                tally.fail("untyped", f"{kind}: {type(exc).__name__}: {exc}")
            elif may_have_run(exc) is not Ran.MAYBE:
                tally.fail("lost", f"{kind}: {type(exc).__name__} does not say the task may have run")
            tally.counts[f"ended:{type(exc).__name__}"] += 1
        except TimeoutError:
            tally.fail("hang", f"{kind}: the call did not end by its maximum")
        else:
            if expected is not None:
                tally.fail("lost", f"{kind}: a result where {expected.__name__} was due")
            elif _text(result) != f"task done: {tag}":
                tally.fail("lost", f"{kind}: the result of another call: {_text(result)!r}")
            tally.counts["ended:result"] += 1
        tally.counts["calls"] += 1

    async def run_calls(client: Client) -> None:
        async with anyio.create_task_group() as group:
            for number, kind in enumerate(kinds):
                group.start_soon(one, client, number, kind)
        await anyio.sleep(0.3)  # the background tasks/cancel of the calls that gave up

    if transport == "memory":
        async with Client(memory(peer.serve), timeout=POLICY, on_event=on_event, retry=None) as client:
            await run_calls(client)
    else:
        serving = HttpPeer(peer, faults={"tasks/get": HttpFault("drop_mid_stream", times=3)})
        async with (
            serving.serving() as url,
            Client(http(url), timeout=POLICY, on_event=on_event, retry=None) as client,
        ):
            await run_calls(client)
    for task in peer.tasks.tasks.values():
        created[task.task_id] = str(task.arguments.get("text", "")).rsplit("-", 1)[0]
    sent = peer.stats.calls_by_tool["task_work"]
    if sent != len(kinds):
        tally.fail("duplicate", f"{len(kinds)} calls sent tools/call {sent} times")
    for task in peer.tasks.tasks.values():
        kind = created[task.task_id]
        should_cancel = _KINDS[kind][3]
        if task.cancel_requests != (1 if should_cancel else 0):
            tally.fail("leak", f"{kind}: task {task.task_id} got {task.cancel_requests} tasks/cancel")
        tally.counts["tasks_cancelled"] += task.cancel_requests


class _Signals:
    """What the event hook tells the round under way: the task was created, the server is back."""

    def __init__(self) -> None:
        self.created = anyio.Event()
        self.restarted = anyio.Event()


async def supervised_task_kills(rounds: int) -> Tally:
    """Kill a supervised stdio server ``rounds`` times while a task-backed call polls (see the module)."""
    tally = Tally("tasks_supervised/stdio")
    sends: Counter[str] = Counter()
    signals = _Signals()

    def on_event(event: Event) -> None:
        if isinstance(event, RequestSent) and event.method == "tools/call" and event.target == "task_work":
            sends["task_work"] += 1
        elif isinstance(event, TaskCreated):
            signals.created.set()
        elif isinstance(event, ServerRestarted):
            signals.restarted.set()

    restart = RestartPolicy(max_restarts=rounds + 1, window=3600, initial_backoff=0.05, max_backoff=0.2)
    command = stdio(sys.executable, ["-m", "mcp_client.testing.peer", "--tasks"], restart=restart)
    before = snapshot()
    try:
        with anyio.fail_after(HANG_AFTER * 2):
            async with Client(command, timeout=POLICY, on_event=on_event) as client:
                for round_number in range(rounds):
                    signals = _Signals()
                    await _kill_during_task(client, round_number, signals, tally)
                    tally.counts["rounds"] += 1
    except TimeoutError:
        tally.fail("hang", "the supervised task runs did not finish in time")
    except Exception as exc:
        tally.fail("crash", repr(exc))
    if sends["task_work"] != tally.counts["rounds"]:
        tally.fail("duplicate", f"{tally.counts['rounds']} task calls sent tools/call {sends['task_work']} times")
    await anyio.sleep(0.2)
    _compare(before, snapshot(), tally)
    return tally


async def _kill_during_task(client: Client, round_number: int, signals: _Signals, tally: Tally) -> None:
    outcome: list[MCPClientError] = []

    async def task_call() -> None:
        try:
            await client.call_tool("task_work", {"seconds": 30, "text": f"kill-{round_number}"})
        except MCPClientError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(task_call)
        with anyio.fail_after(HANG_AFTER / 2):
            await signals.created.wait()
        await anyio.sleep(0.15)  # a poll or two on the first process
        started = anyio.current_time()
        with contextlib.suppress(TransportError):  # ("die" is not idempotent: it is not sent again)
            await client.call_tool("die")
    ended = anyio.current_time() - started
    error = outcome[0] if outcome else None
    if not isinstance(error, TransportError):
        tally.fail("untyped", f"round {round_number}: the task call ended with {error!r}")
    elif may_have_run(error) is not Ran.MAYBE:
        tally.fail("lost", f"round {round_number}: the killed task call does not say it may have run")
    if ended > 2:
        tally.fail("hang", f"round {round_number}: the task call took {ended:.1f} s to fail after the kill")
    with anyio.fail_after(HANG_AFTER / 2):
        await signals.restarted.wait()
        answer = await client.call_tool("echo", {"text": f"after-{round_number}"})
    if _text(answer) != f"after-{round_number}":
        tally.fail("lost", f"round {round_number}: the call after the restart got {_text(answer)!r}")
