"""The stress scenarios: a hostile peer, a soak with leak accounting, and a cancel-versus-result race.

Each runs on the current event loop (asyncio or trio) for a bounded time or number of rounds and returns a
:class:`Tally`: counts of what happened and a list of failures, each one of the kinds the suite fails on (crash,
hang, untyped error, lost answer, leak, duplicate execution). Every await on the client is bounded
(:data:`HANG_AFTER`), so a hang is reported, never waited out.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

import anyio
import mcp_types

from benchmarks.stress.accounting import Snapshot, snapshot
from mcp_client import (
    Client,
    Event,
    LateMessage,
    MCPClientError,
    ProgressRejected,
    ProtocolViolation,
    RequestCancelled,
    RequestSent,
    RetryPolicy,
    ServerError,
    TimeoutPolicy,
    http,
    memory,
    stdio,
)
from mcp_client.testing._peer_hostile import HOSTILE_KINDS
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer

__all__ = ["HANG_AFTER", "Tally", "TransportName", "cancel_race", "hostile", "soak"]

TransportName: TypeAlias = Literal["memory", "stdio", "http"]
HANG_AFTER = 30.0
"""Seconds after which any one step counts as a hang."""
LIMIT = 1_000_000
"""The clients' message size limit: the hostile peer's huge lines (2 MB) pass it."""
POLICY = TimeoutPolicy(idle=None, maximum=20, connect=20)


@dataclass(slots=True)
class Tally:
    """What one scenario counted, and what went wrong."""

    name: str
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)

    def fail(self, kind: str, detail: str) -> None:
        """Record one failure of ``kind`` (crash, hang, untyped, lost, leak, duplicate)."""
        self.counts[f"failure:{kind}"] += 1
        if len(self.failures) < 50:
            self.failures.append(f"{kind}: {detail}")

    def as_dict(self) -> dict[str, object]:
        """The tally for the JSON report."""
        return {"name": self.name, "counts": dict(self.counts), "failures": self.failures, "figures": self.figures}


@asynccontextmanager
async def connected(
    transport: TransportName, events: Callable[[Event], None], *, restartable_peer: ScriptedPeer | None = None
) -> AsyncIterator[Client]:
    """A client on the scripted peer over ``transport`` (stdio: the peer as a subprocess)."""
    peer = restartable_peer if restartable_peer is not None else ScriptedPeer()
    if transport == "memory":
        async with Client(memory(peer.serve, max_message_size=LIMIT), timeout=POLICY, on_event=events) as client:
            yield client
    elif transport == "stdio":
        command = stdio(sys.executable, ["-m", "mcp_client.testing.peer"], max_message_size=LIMIT)
        async with Client(command, timeout=POLICY, on_event=events) as client:
            yield client
    else:
        async with (
            HttpPeer(peer).serving() as url,
            Client(http(url, max_message_size=LIMIT), timeout=POLICY, on_event=events) as client,
        ):
            yield client


def _text(result: mcp_types.CallToolResult) -> str | None:
    block = result.content[0] if result.content else None
    return block.text if isinstance(block, mcp_types.TextContent) else None


# -- the hostile peer ------------------------------------------------------------------------------------------


async def hostile(transport: TransportName, rounds: int) -> Tally:
    """Every kind of bad input, ``rounds`` times, each with an echo in flight beside it: the bad line must be
    reported (a ``ProtocolViolation`` or ``ProgressRejected``), and neither the hostile call's answer (written
    in the same chunk) nor the echo's may be lost."""
    tally = Tally(f"hostile/{transport}")
    reported: Counter[str] = Counter()

    def on_event(event: Event) -> None:
        if isinstance(event, ProtocolViolation | ProgressRejected | LateMessage):
            reported[type(event).__name__] += 1

    try:
        with anyio.fail_after(HANG_AFTER * 4):
            async with connected(transport, on_event) as client:
                for round_number in range(rounds):
                    for kind in (*HOSTILE_KINDS, "result_and_error"):
                        before = sum(reported.values())
                        await _hostile_round(client, kind, f"{round_number}-{kind}", tally)
                        if kind != "result_and_error" and sum(reported.values()) == before:
                            tally.fail("lost", f"{kind}: no event reported the bad line")
    except MCPClientError as exc:
        tally.fail("crash", f"{transport}: the client failed as a whole: {exc!r}")
    except TimeoutError:
        tally.fail("hang", f"{transport}: the hostile run did not finish within {HANG_AFTER * 4:g} s")
    except Exception as exc:  # anything else escaping the client is the defect this suite exists to catch
        tally.fail("crash", f"{transport}: {exc!r}")
    tally.counts.update({f"event:{name}": n for name, n in reported.items()})
    return tally


async def _hostile_round(client: Client, kind: str, tag: str, tally: Tally) -> None:
    answers: dict[str, str | None] = {}

    async def echo() -> None:
        answers["echo"] = _text(await client.call_tool("echo", {"text": tag}))

    async def bad() -> None:
        if kind == "result_and_error":
            try:
                await client.call_tool("result_and_error")
            except ServerError:
                answers["bad"] = "typed"
            return
        answers["bad"] = _text(await client.call_tool("hostile", {"kind": kind}))

    try:
        with anyio.fail_after(HANG_AFTER):
            async with anyio.create_task_group() as tg:
                tg.start_soon(echo)
                tg.start_soon(bad)
    except MCPClientError as exc:  # (before TimeoutError: the client's timeouts are TimeoutErrors too)
        tally.fail("lost", f"{kind}: a call failed ({exc!r})")
        return
    except TimeoutError:
        tally.fail("hang", f"{kind}: a call did not end")
        return
    except Exception as exc:
        tally.fail("untyped", f"{kind}: {exc!r}")
        return
    tally.counts["calls"] += 2
    expected = "typed" if kind == "result_and_error" else f"survived {kind}"
    if answers.get("bad") != expected:
        tally.fail("lost", f"{kind}: the hostile call answered {answers.get('bad')!r}")
    if answers.get("echo") != tag:
        tally.fail("lost", f"{kind}: the echo beside it answered {answers.get('echo')!r}")
    tally.counts["rounds"] += 1


# -- the soak ----------------------------------------------------------------------------------------------------


async def soak(transport: TransportName, seconds: float, *, workers: int = 8, seed: int = 1) -> Tally:
    """Calls for ``seconds``: echoes, calls cancelled at random, calls that hit their maximum or idle limit,
    progress, and a non-idempotent counter; then what the process holds is compared with before."""
    tally = Tally(f"soak/{transport}")
    rng = random.Random(seed)
    async with connected(transport, lambda event: None) as warm:  # the first connection's one-off costs
        await warm.call_tool("echo", {"text": "warm-up"})
    before = snapshot()
    increments = 0
    counter = 0
    try:
        async with connected(transport, lambda event: None) as client:
            stop_at = anyio.current_time() + seconds
            rss: list[tuple[int, int]] = []

            async def worker(number: int) -> None:
                nonlocal increments
                local = random.Random(rng.random())
                while anyio.current_time() < stop_at:
                    sent = await _soak_call(client, local, tally)
                    increments += sent
                    if number == 0 and tally.counts["calls"] % 1000 < workers:
                        rss.append((tally.counts["calls"], snapshot().rss_bytes))

            async with anyio.create_task_group() as tg:
                for number in range(workers):
                    tg.start_soon(worker, number)
            with anyio.fail_after(HANG_AFTER):
                counter = int(_text(await client.call_tool("increment", {"by": 0})) or -1)
                await client.session.drain_cancels(5)
            session = client.session
            held = {
                "in_flight": session.in_flight,
                "by_token": len(session._by_token),
                "cancels_in_progress": len(session._cancels_in_progress),
                "server_requests": len(session._server_requests._running),
            }
            for table, size in held.items():
                if size:
                    tally.fail("leak", f"the session's {table} table holds {size} entries after the soak")
            if transport == "stdio":  # in-process peers (memory, HTTP) record every message they see: not ours
                tally.figures.update(_growth(rss))
    except Exception as exc:
        tally.fail("crash", f"{transport}: {exc!r}")
    if counter > increments:
        tally.fail("duplicate", f"the counter is {counter} after {increments} increments were sent")
    tally.counts["increments_sent"] = increments
    tally.counts["increments_run"] = counter
    await anyio.sleep(0.2)  # a child the ladder just reaped is gone from /proc a moment later
    _compare(before, snapshot(), tally)
    return tally


async def _soak_call(client: Client, rng: random.Random, tally: Tally) -> int:
    """One random call; returns 1 if it was a non-idempotent increment that went out."""
    roll = rng.random()
    tally.counts["calls"] += 1
    kind = "echo" if roll < 0.6 else "cancelled" if roll < 0.75 else "maximum" if roll < 0.85 else "progress"
    kind = kind if roll < 0.95 else "increment"
    try:
        with anyio.fail_after(HANG_AFTER):
            if roll < 0.6:
                text = f"soak {rng.random()}"
                if _text(await client.call_tool("echo", {"text": text})) != text:
                    tally.fail("lost", "an echo came back with another text")
                tally.counts["ok"] += 1
            elif roll < 0.75:
                with anyio.move_on_after(rng.uniform(0, 0.01)) as scope:
                    await client.call_tool("slow", {"seconds": 0.005})
                tally.counts["cancelled" if scope.cancelled_caught else "ok"] += 1
            elif roll < 0.85:
                maximum = TimeoutPolicy(idle=None, maximum=rng.uniform(0.001, 0.01))
                try:
                    await client.call_tool("slow", {"seconds": 0.005}, timeout=maximum)
                    tally.counts["ok"] += 1
                except MCPClientError:
                    tally.counts["timed_out"] += 1
            elif roll < 0.95:
                policy = TimeoutPolicy(idle=2, maximum=10)  # progress keeps it alive; generous for a loaded host
                await client.call_tool("slow", {"seconds": 0.02, "progress_every": 0.005}, timeout=policy)
                tally.counts["ok"] += 1
            else:
                await client.call_tool("increment", {"by": 1}, retry=RetryPolicy(attempts=3))
                tally.counts["ok"] += 1
                return 1
    except MCPClientError as exc:  # (before TimeoutError: the client's timeouts are TimeoutErrors too)
        tally.fail("lost", f"a call ({kind}) that should have succeeded failed: {exc!r}")
    except TimeoutError:
        tally.fail("hang", f"a soak call ({kind}) did not end within {HANG_AFTER:g} s")
    except Exception as exc:
        tally.fail("untyped", f"{kind}: {exc!r}")
    return 0


def _growth(samples: list[tuple[int, int]]) -> dict[str, float]:
    """RSS growth per 1,000 calls over the second half of the run (the first half warms caches and arenas)."""
    if len(samples) < 4:
        return {}
    half = samples[len(samples) // 2 :]
    (calls_a, rss_a), (calls_b, rss_b) = half[0], half[-1]
    if calls_b == calls_a:
        return {}
    return {
        "rss_growth_kib_per_1000_calls_second_half": (rss_b - rss_a) / 1024 / (calls_b - calls_a) * 1000,
        "rss_first_kib": samples[0][1] / 1024,
        "rss_last_kib": samples[-1][1] / 1024,
    }


def _compare(before: Snapshot, after: Snapshot, tally: Tally) -> None:
    for name in ("fds", "tasks", "children"):
        was, now = getattr(before, name), getattr(after, name)
        tally.figures[f"{name}_before"], tally.figures[f"{name}_after"] = was, now
        if was >= 0 and now > was:
            tally.fail("leak", f"{name}: {was} before, {now} after")
    if tally.name != "soak/stdio":
        return  # (RSS and traced memory: see _growth)
    tally.figures["rss_kib_before"], tally.figures["rss_kib_after"] = before.rss_bytes / 1024, after.rss_bytes / 1024
    if before.traced_bytes >= 0:
        tally.figures["traced_kib_before"] = before.traced_bytes / 1024
        tally.figures["traced_kib_after"] = after.traced_bytes / 1024


# -- the cancel-versus-result race -------------------------------------------------------------------------------


async def cancel_race(transport: TransportName, rounds: int, *, seed: int = 2) -> Tally:
    """Echo calls cancelled a random few microseconds after they were sent, so that the cancel and the answer
    cross: each call ends in its result or in cancellation, never both; every answer the server wrote to a
    cancelled call is a ``LateMessage`` (stdio and memory), none reported twice."""
    tally = Tally(f"cancel_race/{transport}")
    rng = random.Random(seed)
    sent: set[int] = set()
    late: Counter[int] = Counter()

    def on_event(event: Event) -> None:
        if isinstance(event, RequestSent) and event.method == "tools/call":
            sent.add(int(event.request_id))
        elif isinstance(event, LateMessage) and event.kind == "response" and isinstance(event.request_id, int):
            late[event.request_id] += 1

    cancelled_ids: list[int] = []
    try:
        async with connected(transport, on_event) as client:
            for _ in range(rounds):
                before = set(sent)
                try:
                    with anyio.fail_after(HANG_AFTER):
                        with anyio.move_on_after(rng.uniform(0, 0.002)) as scope:
                            await client.call_tool("echo", {"text": "race"})
                        if scope.cancelled_caught:
                            tally.counts["cancelled"] += 1
                            cancelled_ids.extend(sent - before)
                        else:
                            tally.counts["answered"] += 1
                except RequestCancelled:
                    tally.counts["cancelled"] += 1
                except MCPClientError as exc:  # (before TimeoutError: the client's timeouts are TimeoutErrors too)
                    tally.fail("lost", repr(exc))
                except TimeoutError:
                    tally.fail("hang", "a raced call did not end")
            with anyio.fail_after(HANG_AFTER):
                await client.session.drain_cancels(5)
                # On one pipe the stats answer comes after every answer written before it: all are routed by now.
                stats = json.loads(_text(await client.call_tool("stats")) or "{}")
            answered = {int(rid) for rid, outcome in stats.get("outcomes", {}).items() if outcome == "completed"}
    except Exception as exc:
        tally.fail("crash", f"{transport}: {exc!r}")
        answered = set()
    duplicates = [rid for rid, n in late.items() if n > 1]
    if duplicates:
        tally.fail("duplicate", f"answers reported late more than once: {duplicates[:5]}")
    # Over HTTP at 2026-07-28 the cancel closes the answer's stream: an answer written then never arrives.
    checked = cancelled_ids if transport != "http" else []
    missing = [rid for rid in checked if rid in answered and rid not in late]
    tally.counts["late_messages"] = sum(late.values())
    tally.counts["cancelled_after_write"] = len(cancelled_ids)
    tally.counts["cancelled_but_answered"] = len([rid for rid in cancelled_ids if rid in answered])
    tally.counts["answers_without_late_message"] = len(missing)
    if missing:
        tally.fail("lost", f"{len(missing)} answers to written, cancelled calls left no LateMessage")
    return tally
