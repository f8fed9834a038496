"""``subscriptions/listen`` in the scripted peer (2026-07-28): subscriptions a test drives from outside.

Each listen request runs as a task of its connection that writes everything of its subscription itself (so over
HTTP it all goes to that request's response stream). The test talks to the open listens through the peer's
:class:`ListenBoard`::

    peer = ScriptedPeer(era="modern", listen=ListenScript(acknowledge="partial"))
    ...
    await peer.listens.wait_open()
    peer.listens.notify("notifications/tools/list_changed")
    peer.listens.tear_down()        # notifications/cancelled for each listen id (the server's teardown)
    peer.listens.complete()         # the graceful end: the listen's result
    peer.listens.drop()             # the stream ends with nothing (over HTTP; over stdio the peer dies)

What the script can make a listen do wrong or partly: acknowledge only part of the filter, never acknowledge,
or send a notification for the subscription before its acknowledgement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_client.testing._peer_tools import JsonObject, RequestId

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["SUBSCRIPTION_ID_META_KEY", "AckMode", "ListenBoard", "ListenEnd", "ListenScript", "PeerListen"]

SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

AckMode: TypeAlias = Literal["all", "partial", "never"]
ListenEnd: TypeAlias = Literal["completed", "torn down", "dropped", "cancelled", "aborted"]
_Command: TypeAlias = tuple[Literal["notify"], str, JsonObject] | tuple[Literal["complete", "tear down", "drop"]]
_KINDS = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}


@dataclass(frozen=True)
class ListenScript:
    """How the peer answers ``subscriptions/listen``.

    * ``acknowledge``: ``"all"`` honours the whole filter; ``"partial"`` honours ``toolsListChanged`` and the
      first resource URI only; ``"never"`` sends no acknowledgement (the listen stays open, silent).
    * ``early``: before the acknowledgement, send ``notifications/tools/list_changed`` for the subscription
      (which a client must ignore).
    * ``supported``: False answers ``subscriptions/listen`` with -32601, as a server without it does.
    """

    acknowledge: AckMode = "all"
    early: bool = False
    supported: bool = True


@dataclass
class PeerListen:
    """One open listen of the peer."""

    request_id: RequestId
    asked: JsonObject
    """The ``notifications`` filter of the request."""
    honoured: JsonObject | None = None
    """The filter acknowledged (None until then, and forever with ``acknowledge="never"``)."""
    commands: tuple[MemoryObjectSendStream[_Command], MemoryObjectReceiveStream[_Command]] = field(
        default_factory=lambda: anyio.create_memory_object_stream[_Command](math.inf)
    )
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def allows(self, method: str, params: JsonObject) -> bool:
        honoured = self.honoured or {}
        kind = _KINDS.get(method)
        if kind is not None:
            return honoured.get(kind) is True
        if method == "notifications/resources/updated":
            uri = params.get("uri")
            subscribed = honoured.get("resourceSubscriptions") or ()
            return isinstance(uri, str) and any(uri == s or uri.startswith(s.rstrip("/") + "/") for s in subscribed)
        return True  # anything else is the test's business


def honour(asked: JsonObject, mode: AckMode) -> JsonObject:
    """The filter the peer acknowledges for ``asked``."""
    if mode == "all":
        return {key: value for key, value in asked.items() if value}
    honoured: JsonObject = {}
    if asked.get("toolsListChanged") is True:
        honoured["toolsListChanged"] = True
    uris = asked.get("resourceSubscriptions")
    if isinstance(uris, list) and uris:
        honoured["resourceSubscriptions"] = uris[:1]
    return honoured


class ListenBoard:
    """The peer's open listens and how each one ended; the test's handle on them (shared by all connections)."""

    def __init__(self, script: ListenScript) -> None:
        self.script = script
        self.open: list[PeerListen] = []
        self.received: list[JsonObject] = []
        """The params of every ``subscriptions/listen`` received, in order."""
        self.ends: dict[RequestId, ListenEnd] = {}
        """How each listen ended."""
        self._changed = anyio.Event()

    async def wait_open(self, count: int = 1, *, acknowledged: bool = True) -> list[PeerListen]:
        """Wait until ``count`` listens are open (and acknowledged, unless told otherwise); return them."""
        while True:
            ready = [listen for listen in self.open if listen.honoured is not None or not acknowledged]
            if len(ready) >= count:
                return ready
            self._changed = anyio.Event()
            await self._changed.wait()

    def notify(self, method: str, params: JsonObject | None = None) -> int:
        """Send ``method`` on every acknowledged listen whose filter allows it; how many got it."""
        sent = 0
        for listen in self.open:
            if listen.honoured is not None and listen.allows(method, params or {}):
                listen.commands[0].send_nowait(("notify", method, dict(params or {})))
                sent += 1
        return sent

    def complete(self) -> None:
        """End every open listen gracefully: its completion result."""
        self._command(("complete",))

    def tear_down(self) -> None:
        """End every open listen with ``notifications/cancelled`` naming its id (a server's teardown)."""
        self._command(("tear down",))

    def drop(self) -> None:
        """End every open listen's stream with nothing (HTTP: the connection is cut; stdio: the peer dies)."""
        self._command(("drop",))

    def cancel(self, request_id: RequestId) -> bool:
        """The client ended the listen (``notifications/cancelled``, or its HTTP stream closed); False if unknown."""
        for listen in self.open:
            if listen.request_id == request_id:
                self.ends.setdefault(request_id, "cancelled")
                listen.scope.cancel()
                return True
        return False

    def _command(self, command: _Command) -> None:
        for listen in self.open:
            listen.commands[0].send_nowait(command)

    def _update(self) -> None:
        self._changed.set()

    async def serve(
        self,
        request_id: RequestId,
        params: JsonObject,
        send: Callable[[JsonObject], Awaitable[None]],
        drop: Callable[[], None],
    ) -> ListenEnd:
        """Run one listen until it ends; called in a task of the connection. Returns how it ended."""
        asked = params.get("notifications")
        listen = PeerListen(request_id, asked if isinstance(asked, dict) else {})
        self.received.append(params)
        meta = {SUBSCRIPTION_ID_META_KEY: request_id}
        self.open.append(listen)
        self._update()
        end: ListenEnd = "aborted"
        try:
            with listen.scope:
                end = await self._run(listen, meta, send, drop)
        finally:
            self.open.remove(listen)
            self.ends.setdefault(request_id, end)
            self._update()
        return self.ends[request_id]

    async def _run(
        self,
        listen: PeerListen,
        meta: JsonObject,
        send: Callable[[JsonObject], Awaitable[None]],
        drop: Callable[[], None],
    ) -> ListenEnd:
        request_id = listen.request_id
        if self.script.early:
            await send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": meta}})
        if self.script.acknowledge == "never":
            await anyio.sleep_forever()
        honoured = honour(listen.asked, self.script.acknowledge)
        ack = {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {"_meta": meta, "notifications": honoured}}
        await send(ack)
        listen.honoured = honoured
        self._update()
        async for command in listen.commands[1]:
            if command[0] == "notify":
                _, method, extra = command
                await send({"jsonrpc": "2.0", "method": method, "params": {**extra, "_meta": meta}})
            elif command[0] == "complete":
                result = {"resultType": "complete", "_meta": meta}
                await send({"jsonrpc": "2.0", "id": request_id, "result": result})
                return "completed"
            elif command[0] == "tear down":
                cancel = {"requestId": request_id, "reason": "the server is shutting the subscription down"}
                await send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
                return "torn down"
            else:
                drop()
                return "dropped"
        return "aborted"
