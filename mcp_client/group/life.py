"""The life of one server of a group, run in a task of its own inside the group's task group.

A life enters the server's :class:`~mcp_client.Client` (anyio requires the task that entered a context manager to
leave it), reports "started" (or "failed"), lists the server's tools for the annotation rules (and keeps the
listing of a lazy server as its snapshot), then waits until the group closes or, with ``idle_stop``, until the
server has had no call for that long; then it leaves its client (for stdio: close stdin, SIGTERM, SIGKILL,
bounded). A server stopped idle, or a lazy one that failed, gets a new life from the next call that needs it.

Idle means no call of the group (``call_tool``) runs on it, no tool call of its client is open
(:attr:`Client.open_calls <mcp_client.Client.open_calls>`: a handle made and not ended, a task-backed call between
its polls, a retry in its wait have no request in flight but are still calls) and no request of its client awaits an
answer. The group sees its own calls end; the end of its client's own calls it sees only when it looks, every
``idle_stop`` seconds while busy, so a server whose last use was such a call may stop up to that much sooner.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import mcp_types

from mcp_client._log_guard import package_logger
from mcp_client.client.client import Client
from mcp_client.client.tool_pins import ToolPins, tool_definition
from mcp_client.errors import ConnectError, MCPClientError
from mcp_client.events import Event
from mcp_client.group.server import GroupServer, ServerStatus
from mcp_client.group.snapshot import SnapshotStore
from mcp_client.policy.tool_filter import ALL_TOOLS

__all__ = ["CONNECT_GRACE", "ServerLives"]

logger = package_logger("mcp_client.group")

CONNECT_GRACE = 1.0
"""Seconds a life waits past a server's ``connect`` budget before giving up on it itself (the client's own limit,
which gives the better error, normally fires first)."""


class ServerLives:
    """Starts servers' lives in the group's task group, and holds what every life needs."""

    def __init__(
        self,
        client_options: Mapping[str, Any],
        *,
        list_tools: bool,
        idle_stop: float | None,
        snapshots: SnapshotStore,
        on_event: Callable[[GroupServer, Event], None],
    ) -> None:
        self.client_options = dict(client_options)
        self.list_tools = list_tools
        self.idle_stop = idle_stop
        self.snapshots = snapshots
        self.on_event = on_event
        self.task_group: anyio.abc.TaskGroup | None = None
        """The group's task group while it is open (None before it is entered, and from its close on)."""
        self.closed = False
        """The group is closing or closed: no new life."""

    def launch(self, server: GroupServer) -> None:
        """Start a new life of ``server`` (the group must be open and no other life of it running)."""
        if self.task_group is None:
            raise RuntimeError(f"server {server.name!r} is not running: use 'async with group'")
        server.phase = ServerStatus.STARTING
        server.started = anyio.Event()
        server.ended = anyio.Event()
        server.wake = anyio.Event()
        self.task_group.start_soon(self._run, server, name=f"mcp server {server.name!r}")

    def _client(self, server: GroupServer) -> Client:
        options = self.client_options
        if server.max_in_flight is not None:  # the server's own limit over the group's
            options = {**options, "max_in_flight": server.max_in_flight}
        if server.tool_filter is not ALL_TOOLS:  # the client applies it: group["name"] keeps it too
            options = {**options, "tool_filter": server.tool_filter}
        pins = server.tool_pins  # the host's own, for this server alone (kept by each of its lives)
        if server.seen and (pins is None or not pins.strict):
            # the snapshot is what was seen last (the model was shown it): a tool that differs now is reported as
            # a change; the host's pins keep what they name, and strict pins are not widened by it
            pins = pins if pins is not None else ToolPins()
            pins.observe([tool for tool in server.seen if tool.name not in pins])
        if pins is not None:
            options = {**options, "tool_pins": pins}
        return Client(
            server.transport,
            timeout=server.policies.server_timeout,
            retry=server.policies.server_retry,
            on_event=lambda event: self.on_event(server, event),
            **options,
        )

    async def _run(self, server: GroupServer) -> None:
        """One life: start, report, serve until stopped, shut down. Never raises."""
        client = self._client(server)
        connect = server.policies.server_timeout.connect
        budget = connect + CONNECT_GRACE if connect is not None else math.inf
        entered = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + budget) as start_scope:
                server.start_scope = start_scope
                if server.stop.is_set():
                    start_scope.cancel()
                async with client:
                    start_scope.deadline = math.inf
                    entered = True
                    server.client = client
                    if self.list_tools:
                        await self.refresh_tools(server)
                    server.phase, server.error, server.start_failures = ServerStatus.READY, None, 0
                    server.last_used = anyio.current_time()
                    server.started.set()
                    await self._serve(server)
            if start_scope.cancelled_caught and not entered:
                raise ConnectError(f"could not start {server.transport.description!r} within {connect:g} s")
        except Exception as exc:
            if not entered and server.stop.is_set():
                server.phase = ServerStatus.CLOSED  # the group closed before the start ended: no failure of its
            elif not entered:
                server.error, server.failed_at = exc, anyio.current_time()
                server.start_failures += 1
                server.phase = ServerStatus.FAILED
                logger.warning("server %r failed to start: %s", server.name, exc)
            else:
                logger.warning("server %r did not shut down cleanly: %s", server.name, exc)
        finally:
            if entered and server.phase is not ServerStatus.STOPPED_IDLE:
                server.phase = ServerStatus.CLOSED
            server.client = None
            server.start_scope = None
            server.started.set()
            if server.ended is not None:
                server.ended.set()

    async def _serve(self, server: GroupServer) -> None:
        """Wait until the group closes, or (``idle_stop``) the server has been idle that long."""
        while not server.stop.is_set():
            wake = server.wake = anyio.Event()
            if self.idle_stop is None or not server.idle():
                if self.idle_stop is not None:
                    server.last_used = anyio.current_time()  # (busy now)
                with anyio.move_on_after(math.inf if self.idle_stop is None else self.idle_stop):
                    await wake.wait()  # (a handle's request ends unseen: look again after idle_stop)
                continue
            left = server.last_used + self.idle_stop - anyio.current_time()
            if left <= 0:
                server.phase = ServerStatus.STOPPED_IDLE  # from now on, a call starts a new life
                logger.info("server %r stopped after %g s idle", server.name, self.idle_stop)
                return
            with anyio.move_on_after(left):
                await wake.wait()

    async def refresh_tools(self, server: GroupServer) -> list[mcp_types.Tool] | None:
        """List ``server``'s tools (for the annotation rules; a lazy server's snapshot too); None if that failed."""
        client = server.client
        assert client is not None
        try:
            tools = await client.list_tools()
        except MCPClientError as exc:
            logger.warning("server %r: tools/list failed (annotation rules left out): %s", server.name, exc)
            return None
        tools = [tool for tool in tools if server.tool_filter.allows(tool.name)]  # a filtered tool is never offered
        server.tools = {tool.name: tool for tool in tools}
        self.save_snapshot(server)
        return tools

    def save_snapshot(self, server: GroupServer) -> None:
        """Keep a lazy server's listing on disk; with ``pin_tools``, a changed tool is kept in its pinned form
        until the host accepts the change."""
        if not server.lazy or server.snapshot_key is None or server.client is None:
            return
        pins = server.client.tool_pins
        enforced = bool(self.client_options.get("pin_tools", False))
        definitions = [
            (pins.pinned(name) if enforced else None) or tool_definition(tool) for name, tool in server.tools.items()
        ]
        self.snapshots.save(server.snapshot_key, definitions)
        server.seen = [mcp_types.Tool.model_validate(definition) for definition in definitions]
