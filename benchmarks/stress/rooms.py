"""The stress scenarios of the rooms beside the call path: subscriptions, the shared result cache, the supervisor.

* :func:`subscriptions_cut`: many subscriptions on one pipe (in memory, stdio's framing) or one endpoint (HTTP),
  each on a resource of its own, whose streams the server tears down or cuts again and again. Every subscription
  must heal (one ``after_relisten`` change per cut), hear its own updates and no other's, and leave no listen
  open, no route and no request in flight behind.
* :func:`cache_churn`: clients, each signed in as someone else (its own ``auth`` object, or an ``X-API-Key`` of a
  few rotating users), made and collected concurrently over one shared cache of ``private`` listings while
  invalidations land beside them. A client must never be served another sign-in's private entry: each ``auth``
  object's listing reaches the server with its own credential, and so does every user's first.
* :func:`supervised_listen`: a supervised stdio server killed again and again while a subscription listens on it,
  at both protocol eras: the subscription follows each new process, and no process or descriptor is left behind.

Each returns a :class:`~benchmarks.stress.scenarios.Tally`; every await is bounded, so a hang is reported.
"""

from __future__ import annotations

import gc
import os
import random
import signal
import sys
from collections.abc import Generator

import anyio
import httpx2

from benchmarks.stress.accounting import snapshot
from benchmarks.stress.scenarios import HANG_AFTER, Tally, _compare
from mcp_client import (
    Change,
    Client,
    ListenPolicy,
    MCPClientError,
    ResourceUpdated,
    RestartPolicy,
    ResultCache,
    Subscription,
    TimeoutPolicy,
    ToolsListChanged,
    http,
    memory,
    stdio,
)
from mcp_client.subscriptions.router import router_for
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ListenScript, ScriptedPeer

__all__ = ["cache_churn", "subscriptions_cut", "supervised_listen"]

POLICY = TimeoutPolicy(idle=None, maximum=20, connect=20)
FAST = ListenPolicy(open_timeout=10, initial_backoff=0.01, max_backoff=0.05, healthy_after=1)
UPDATED = "notifications/resources/updated"


async def _next(sub: Subscription) -> Change:
    with anyio.fail_after(HANG_AFTER):
        return await sub.__anext__()


# -- many subscriptions, cut streams -----------------------------------------------------------------------------


async def subscriptions_cut(transport: str, subscriptions: int, cuts: int, *, seed: int = 3) -> Tally:
    """``subscriptions`` listens on one connection; ``cuts`` times, the server ends a random half of them (in
    memory: its teardown, ``notifications/cancelled``) or cuts every stream (HTTP), then updates each resource."""
    tally = Tally(f"subscriptions_cut/{transport}")
    rng = random.Random(seed)
    peer = ScriptedPeer(era="modern", listen=ListenScript())
    uris = [f"memo://stress/{n}" for n in range(subscriptions)]
    before = snapshot()
    try:
        with anyio.fail_after(HANG_AFTER * (cuts + 2)):
            if transport == "http":
                async with HttpPeer(peer).serving() as url, Client(http(url), timeout=POLICY) as client:
                    await _cut_round(client, peer, uris, cuts, rng, tally, cut_all=True)
            else:
                async with Client(memory(peer.serve), timeout=POLICY) as client:
                    await _cut_round(client, peer, uris, cuts, rng, tally, cut_all=False)
    except MCPClientError as exc:
        tally.fail("crash", f"{transport}: the client failed as a whole: {exc!r}")
    except TimeoutError:
        tally.fail("hang", f"{transport}: the subscriptions did not heal in time")
    except Exception as exc:  # anything else escaping is the defect this suite exists to catch
        tally.fail("crash", f"{transport}: {exc!r}")
    if peer.listens.open:
        tally.fail("leak", f"{len(peer.listens.open)} listens still open at the server after the client closed")
    await anyio.sleep(0.2)
    _compare(before, snapshot(), tally)
    return tally


async def _cut_round(
    client: Client,
    peer: ScriptedPeer,
    uris: list[str],
    cuts: int,
    rng: random.Random,
    tally: Tally,
    *,
    cut_all: bool,
) -> None:
    subs = [client.listen(resource_uris=[uri], policy=FAST) for uri in uris]
    entered: list[Subscription] = []
    try:
        for sub in subs:
            await sub.__aenter__()
            entered.append(sub)
        await peer.listens.wait_open(len(uris))
        for _ in range(cuts):
            if cut_all:
                chosen = list(range(len(uris)))
                peer.listens.drop()
            else:
                chosen = sorted(rng.sample(range(len(uris)), max(1, len(uris) // 2)))
                ids = {subs[n].subscription_id for n in chosen}
                for listen in list(peer.listens.open):
                    if listen.request_id in ids:
                        listen.commands[0].send_nowait(("tear down",))
            for n in chosen:
                change = await _next(subs[n])
                if change != ResourceUpdated(uris[n], after_relisten=True):
                    tally.fail("lost", f"subscription {n} said {change!r} after its cut, not to refetch")
            tally.counts["cuts"] += 1
            tally.counts["healed"] += len(chosen)
            with anyio.fail_after(HANG_AFTER):
                await peer.listens.wait_open(len(uris))
            for uri in uris:
                peer.listens.notify(UPDATED, {"uri": uri})
            for n, sub in enumerate(subs):  # each its own update, and no other's
                change = await _next(sub)
                if change != ResourceUpdated(uris[n]):
                    tally.fail("lost", f"subscription {n} heard {change!r}, not its own update")
                tally.counts["updates"] += 1
        tally.counts["relistens"] = sum(sub.relistens for sub in subs)
    finally:
        for sub in entered:
            await sub.aclose()
    routes = len(router_for(client.session)._routes)
    if routes:
        tally.fail("leak", f"the router still holds {routes} routes after every subscription closed")
    if client.session.in_flight:
        tally.fail("leak", f"{client.session.in_flight} requests in flight after every subscription closed")


# -- the shared cache under identity churn -------------------------------------------------------------------------


class _SignIn(httpx2.Auth):
    """One sign-in: its own object, its own credential on every request."""

    def __init__(self, credential: str) -> None:
        self.credential = credential

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        request.headers["X-Signed-In-As"] = self.credential
        yield request


async def cache_churn(clients: int, *, users: int = 5, seed: int = 4) -> Tally:
    """``clients`` short-lived clients over one shared cache of ``private`` listings, in two lanes side by side:
    one of clients signed in by an ``auth`` object of their own, one of clients signed in by the ``X-API-Key`` of
    one of ``users``. Each client is collected before the next of its lane is made (so a new sign-in object may
    get a collected one's address), while the cache is invalidated at random beside them. Right after each
    client listed its tools, the server must have seen a listing asked with its credential: every ``auth``
    object's, and each user's the first time (or after an invalidation) it is seen."""
    tally = Tally("cache_churn/http")
    rng = random.Random(seed)
    peer = ScriptedPeer(era="modern", ttl_ms=600_000, cache_scope="private")
    http_peer = HttpPeer(peer)
    shared = ResultCache(limit=64)
    remaining = clients
    progressed = anyio.Event()  # set as each client ends

    def asked_with(header: str, value: str) -> int:
        return sum(1 for log in http_peer.stats.posts("tools/list") if log.headers.get(header) == value)

    before = snapshot()
    try:
        with anyio.fail_after(HANG_AFTER + clients):  # a second per client: far beyond what one needs
            async with http_peer.serving() as url:

                async def lane(kind: str) -> None:
                    nonlocal remaining
                    while remaining > 0:
                        remaining -= 1
                        number = clients - remaining
                        epoch = tally.counts["invalidations"]
                        if kind == "auth":
                            header, credential = "x-signed-in-as", f"client-{number}"
                            transport = http(url, auth=_SignIn(credential))
                            must_ask = True  # a new sign-in: nothing of its own can be kept
                        else:
                            header, credential = "x-api-key", f"user-{rng.randrange(users)}"
                            transport = http(url, headers={"X-API-Key": credential})
                            must_ask = credential not in stored_at or stored_at[credential] < epoch
                        asked = asked_with(header, credential)
                        async with Client(transport, timeout=POLICY, cache=shared) as client:
                            await client.list_tools()
                        if must_ask and asked_with(header, credential) == asked:
                            tally.fail("leak", f"{credential} was served a private listing it never asked for")
                        stored_at[credential] = tally.counts["invalidations"]
                        del client, transport
                        gc.collect()  # addresses are recycled: a new sign-in may land where an old one was
                        tally.counts["clients"] += 1
                        progressed.set()

                async def invalidations() -> None:
                    nonlocal progressed
                    finished, next_at = 0, rng.randint(2, 6)
                    while True:
                        await progressed.wait()
                        progressed = anyio.Event()
                        finished += 1
                        if finished >= next_at:  # every few clients, landing while others are in flight
                            await anyio.sleep(rng.uniform(0, 0.05))
                            shared.invalidate("tools/list")
                            tally.counts["invalidations"] += 1
                            finished, next_at = 0, rng.randint(2, 6)

                stored_at: dict[str, int] = {}  # the invalidations counted when a user's listing was last kept
                async with anyio.create_task_group() as tg:
                    tg.start_soon(invalidations)
                    async with anyio.create_task_group() as lanes:
                        lanes.start_soon(lane, "auth")
                        lanes.start_soon(lane, "key")
                    tg.cancel_scope.cancel()
    except MCPClientError as exc:
        tally.fail("crash", f"a client failed: {exc!r}")
    except TimeoutError:
        tally.fail("hang", "the churn did not finish in time")
    except Exception as exc:
        tally.fail("crash", repr(exc))
    tally.counts["listings_asked"] = len(http_peer.stats.posts("tools/list"))
    if len(shared) > 64:
        tally.fail("leak", f"the cache holds {len(shared)} entries, above its limit")
    await anyio.sleep(0.2)
    _compare(before, snapshot(), tally)
    return tally


# -- a supervised server killed during a listen ------------------------------------------------------------------


async def supervised_listen(era: str, kills: int) -> Tally:
    """A subscription on a supervised stdio peer (``era``: ``modern`` or ``legacy``) whose process is killed
    ``kills`` times: it must follow every new process, and leave nothing running."""
    tally = Tally(f"supervised_listen/{era}")
    restart = RestartPolicy(max_restarts=kills + 2, window=600, initial_backoff=0.01, max_backoff=0.05)
    command = stdio(sys.executable, ["-m", "mcp_client.testing.peer", "--era", era], restart=restart)
    before = snapshot()
    try:
        with anyio.fail_after(HANG_AFTER * (kills + 1)):
            async with (
                Client(command, timeout=POLICY) as client,
                client.listen(tools=True, policy=FAST) as sub,
            ):
                for kill in range(kills):
                    pid = client.server_process_id
                    if pid is None:
                        tally.fail("crash", "no server process to kill")
                        break
                    os.killpg(pid, signal.SIGKILL)
                    if era == "modern":
                        change = await _next(sub)  # the new process's listen, acknowledged: refetch
                        if change != ToolsListChanged(after_relisten=True):
                            tally.fail("lost", f"after kill {kill} the subscription said {change!r}")
                    # A 2025-11-25 peer that declares no capability yields no change to wait on: watch the count.
                    while sub.relistens <= kill:  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                    if client.server_process_id == pid:
                        tally.fail("lost", f"after kill {kill} the subscription is still on the dead process")
                    await client.call_tool("echo", {"text": "after"})  # the new process serves
                    tally.counts["kills"] += 1
                tally.counts["relistens"] = sub.relistens
                if sub.relistens != kills:
                    tally.fail("lost", f"{sub.relistens} re-listens for {kills} restarts: one each expected")
    except MCPClientError as exc:
        tally.fail("crash", f"{era}: {exc!r}")
    except TimeoutError:
        tally.fail("hang", f"{era}: the subscription did not follow the restarts in time")
    except Exception as exc:
        tally.fail("crash", f"{era}: {exc!r}")
    await anyio.sleep(0.3)  # a child the ladder just reaped is gone from /proc a moment later
    _compare(before, snapshot(), tally)
    return tally
