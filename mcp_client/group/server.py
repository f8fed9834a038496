"""One server of a group: where it is in its life, and the state its task shares with the group.

A server of a group is started eagerly (when the group is entered) or lazily (by the first call that needs it; see
:mod:`mcp_client.group.lazy`). Its :class:`ServerStatus` moves::

    never_started ─┬─> starting ─┬─> ready ──┬─> stopped_idle ──> starting ...   (idle_stop, then used again)
    (lazy)         │             │           ├─> dead                          (the connection was lost)
                   │             │           └─> closed                        (the group was closed)
                   │             └─> failed ───> starting ...                  (lazy: the next call after the wait)
                   └─> closed
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import anyio
import mcp_types

from mcp_client.client.client import Client
from mcp_client.client.tool_pins import ToolPins
from mcp_client.policy.registry import PolicyRegistry
from mcp_client.policy.tool_filter import ALL_TOOLS, ToolFilter
from mcp_client.transports.base import Transport

__all__ = ["START_RETRY_FIRST", "START_RETRY_MAX", "GroupServer", "ServerStatus", "start_retry_delay"]

START_RETRY_FIRST = 1.0
"""Seconds after a lazy server's first failed start before a call tries to start it again."""
START_RETRY_MAX = 60.0
"""The longest wait between two tries: the wait doubles with each failed start in a row, up to this."""


def start_retry_delay(failures: int) -> float:
    """Seconds a lazy server that failed to start ``failures`` times in a row waits before the next try."""
    doublings = min(max(0, failures - 1), 64)  # (past the cap long before: 2.0 ** 1024 would overflow)
    return float(min(START_RETRY_MAX, START_RETRY_FIRST * 2.0**doublings))


class ServerStatus(enum.Enum):
    """Where one server of a group is in its life."""

    NEVER_STARTED = "never_started"
    """A lazy server no call has needed yet: no process, no connection."""
    STARTING = "starting"
    READY = "ready"
    """Started and running; its calls go through."""
    STOPPED_IDLE = "stopped_idle"
    """Stopped after ``idle_stop`` seconds without a call; the next call starts it again."""
    FAILED = "failed"
    """Did not start; :attr:`ClientGroup.failures` says why (a lazy server is tried again by a later call)."""
    DEAD = "dead"
    """Started, then its connection was lost (the process exited, the stream closed): its calls fail."""
    CLOSED = "closed"
    """The group was closed."""


@dataclass(eq=False)
class GroupServer:
    """One server of a group, and the state its task shares with the group."""

    name: str
    transport: Transport
    policies: PolicyRegistry
    max_in_flight: int | None = None
    lazy: bool = False
    phase: ServerStatus = ServerStatus.STARTING
    client: Client | None = None
    """The client of the running life (None before, between and after)."""
    error: Exception | None = None
    """Why the last start failed (cleared by a start that succeeds)."""
    start_failures: int = 0
    """Failed starts in a row."""
    failed_at: float = 0.0
    tools: dict[str, mcp_types.Tool] = field(default_factory=dict)
    snapshot_key: str | None = None
    """The digest naming a lazy server's snapshot (None: an eager server, no snapshot)."""
    tool_filter: ToolFilter = ALL_TOOLS
    """The tools the group lists and calls (``include_tools``/``exclude_tools``; default: all)."""
    seen: list[mcp_types.Tool] | None = None
    """A lazy server's snapshot: its listing as last kept (None: none yet)."""
    tool_pins: ToolPins | None = None
    """The pins the host gave for this server, kept by each of its lives (None: none given)."""
    started: anyio.Event = field(default_factory=anyio.Event)
    """Set when the current start ends (ready or failed)."""
    ended: anyio.Event | None = None
    """Set when the current life has left its client (None: no life yet)."""
    stop: anyio.Event = field(default_factory=anyio.Event)
    """Set when the group closes."""
    wake: anyio.Event = field(default_factory=anyio.Event)
    """Set to wake the life's task: the group closes, or a call ended (the idle clock starts over)."""
    start_scope: anyio.CancelScope | None = None
    """The scope of the current start, cancelled when the group closes first."""
    in_use: int = 0
    """Calls of the group running on this server now."""
    last_used: float = 0.0

    def __post_init__(self) -> None:
        if self.lazy:
            self.phase = ServerStatus.NEVER_STARTED

    @property
    def status(self) -> ServerStatus:
        if self.phase is ServerStatus.READY and self.client is not None and self.client.session.closed_error:
            return ServerStatus.DEAD
        return self.phase

    def annotations(self, tool: str) -> mcp_types.ToolAnnotations | None:
        """What ``tools/list`` said of ``tool`` (a listed tool without annotations gets the spec's defaults)."""
        listed = self.tools.get(tool)
        if listed is None:
            return None
        return listed.annotations if listed.annotations is not None else _NO_HINTS

    def use(self) -> None:
        """A call of the group starts on this server (it is not stopped idle while the call runs)."""
        self.in_use += 1

    def release(self) -> None:
        """That call ended: the idle clock starts now."""
        self.in_use -= 1
        self.last_used = anyio.current_time()
        self.wake.set()

    def idle(self) -> bool:
        """No call runs on it: none of the group's, no tool call of its client that has not ended (a handle made
        and not ended, a task-backed call between its polls), no request of its client awaiting an answer."""
        client = self.client
        return self.in_use == 0 and (client is None or (client.session.in_flight == 0 and not client.open_calls))


_NO_HINTS = mcp_types.ToolAnnotations()
