"""Many servers at once: start them concurrently, address their tools as ``server/tool``, shut them all down.

```python
async with ClientGroup.from_config("mcp.json") as group:
    print(group.failures)                      # servers that did not start, and why
    result = await group.call_tool("search/query", {"q": "anyio"})
```

Each server runs in a task of its own that enters its :class:`~mcp_client.Client`, reports "started" (or
"failed"), waits for the group to close, and leaves its client (anyio requires a context manager to be left by
the task that entered it). So:

* servers start concurrently, each within the ``connect`` budget of its policy;
* a server that fails to start is recorded in :attr:`ClientGroup.failures` and logged; the others are not touched;
* a server that dies later fails its own calls (:class:`~mcp_client.TransportError`) and nothing else;
* closing the group shuts every server down concurrently: for stdio, close stdin, SIGTERM, SIGKILL (bounded); for
  HTTP at 2025-11-25, the session is deleted.

Each server's calls run under its :class:`~mcp_client.policy.registry.PolicyRegistry` (the ``policy`` block of its
``mcp.json`` entry) over the group's client options: precedence call > tool rule > annotation rule > server >
client default. The annotations come from a ``tools/list`` the group makes when a server starts (and again on
every :meth:`ClientGroup.list_tools`); a failure of that listing is logged and only leaves the annotation rules
out.
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import mcp_types

from mcp_client._log_guard import package_logger
from mcp_client.calls.in_flight_limit import check_max_in_flight
from mcp_client.calls.progress import ProgressCallback
from mcp_client.client.call import Call
from mcp_client.client.client import Client
from mcp_client.config.load import ServerSpec, load_config
from mcp_client.errors import ConnectError, MCPClientError, TransportError
from mcp_client.events import Event, ServerNotification, TransportFailure
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.policy.registry import PartialTimeout, PolicyRegistry, RetryArg
from mcp_client.policy.retry import DEFAULT_RETRY, RetryPolicy
from mcp_client.policy.timeout import DEFAULT_TIMEOUT, TimeoutPolicy, as_timeout_policy
from mcp_client.policy.tool_filter import ALL_TOOLS, ToolFilter, ToolNotAllowed
from mcp_client.transports.base import Transport

__all__ = ["ClientGroup", "GroupEventHook", "ServerStatus", "split_tool_name"]

logger = package_logger("mcp_client.group")

GroupEventHook = Callable[[str, Event], None]
"""``on_event`` of a group: called with the server's name and each event of its client."""

_CONNECT_GRACE = 1.0
"""Seconds the group waits past a server's ``connect`` budget before giving up on it itself (the client's own
limit, which gives the better error, normally fires first)."""


class ServerStatus(enum.Enum):
    """Where one server of a group is in its life."""

    STARTING = "starting"
    READY = "ready"
    """Started; its calls go through."""
    FAILED = "failed"
    """Did not start; :attr:`ClientGroup.failures` says why."""
    DEAD = "dead"
    """Started, then its connection was lost (the process exited, the stream closed): its calls fail."""
    CLOSED = "closed"
    """The group was closed."""


def split_tool_name(qualified: str) -> tuple[str, str]:
    """``"server/tool"`` → ``("server", "tool")``. Server names hold no ``/``; tool names may."""
    server, slash, tool = qualified.partition("/")
    if not slash or not server or not tool:
        raise ValueError(f"a tool of a group is addressed as 'server/tool', got {qualified!r}")
    return server, tool


@dataclass(eq=False)
class _Server:
    """One server of a group, and the state its task shares with the group."""

    name: str
    transport: Transport
    policies: PolicyRegistry
    max_in_flight: int | None = None
    tool_filter: ToolFilter = ALL_TOOLS
    client: Client | None = None
    error: Exception | None = None
    tools: dict[str, mcp_types.Tool] = field(default_factory=dict)
    closed: bool = False
    started: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)

    @property
    def status(self) -> ServerStatus:
        if self.error is not None:
            return ServerStatus.FAILED
        if self.closed:
            return ServerStatus.CLOSED
        if self.client is None:
            return ServerStatus.STARTING
        if self.client.session.closed_error is not None:
            return ServerStatus.DEAD
        return ServerStatus.READY

    def annotations(self, tool: str) -> mcp_types.ToolAnnotations | None:
        """What ``tools/list`` said of ``tool`` (a listed tool without annotations gets the spec's defaults)."""
        listed = self.tools.get(tool)
        if listed is None:
            return None
        return listed.annotations if listed.annotations is not None else _NO_HINTS


_NO_HINTS = mcp_types.ToolAnnotations()


class ClientGroup:
    """Several MCP servers, started together and addressed by name.

    ```python
    async with ClientGroup({"search": stdio("uvx", ["search-server"]), "docs": http(url)}) as group:
        result = await group.call_tool("docs/lookup", {"term": "anyio"})
    ```

    Args:
        servers: The servers by name: a :class:`~mcp_client.config.load.ServerSpec` (transport and rules) or a bare
            :class:`~mcp_client.Transport` (no rules of its own). Names must be non-empty and hold no ``/``.
        on_event: Called with the server's name and each event of its client; quick, must not block.
        list_tools: List each server's tools when it starts, for the annotation rules (default: yes).
        **client_options: Passed to every :class:`~mcp_client.Client`. ``timeout`` and ``retry`` are the client
            default under every server's rules; ``retry_rules`` is not accepted (use the ``policy`` block).
            ``max_in_flight`` limits each server on its own; a server's ``ServerSpec.max_in_flight`` (its
            ``policy.max_in_flight`` in ``mcp.json``) replaces it for that server.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerSpec | Transport],
        *,
        on_event: GroupEventHook | None = None,
        list_tools: bool = True,
        **client_options: Any,
    ) -> None:
        if "retry_rules" in client_options:
            raise TypeError("ClientGroup does not take retry_rules: give the servers tool rules instead")
        if "on_event" in client_options or "transport" in client_options:
            raise TypeError("on_event is the group's own (server name, event); transport comes from servers")
        default_timeout = as_timeout_policy(client_options.pop("timeout", DEFAULT_TIMEOUT))
        default_retry: RetryPolicy | None = client_options.pop("retry", DEFAULT_RETRY)
        self._servers: dict[str, _Server] = {}
        for name, spec in servers.items():
            _check_name(name)
            if isinstance(spec, Transport):
                spec = ServerSpec(spec)
            policies = spec.policies.with_defaults(default_timeout, default_retry)
            limit = check_max_in_flight(spec.max_in_flight, where=f"the max_in_flight of server {name!r}")
            self._servers[name] = _Server(name, spec.transport, policies, limit, spec.tool_filter)
        self._on_event = on_event
        self._list_tools = list_tools
        self._client_options = client_options
        self._stack: AsyncExitStack | None = None
        self._entered = False

    @classmethod
    def from_config(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any],
        *,
        on_event: GroupEventHook | None = None,
        list_tools: bool = True,
        dialect: str | None = None,
        **client_options: Any,
    ) -> ClientGroup:
        """A group of the servers of an ``mcp.json`` (a path or its parsed content); see :mod:`mcp_client.config.load`.

        ``dialect`` names the format of another host's file (``"claude_code"``, ``"vscode"``, ``"codex"``...; None:
        told from the file), as :func:`~mcp_client.config.load.load_config`.

        Raises:
            ConfigError: The configuration is not valid (every problem listed with its JSON path).
        """
        specs = load_config(config, dialect=dialect).specs()
        return cls(specs, on_event=on_event, list_tools=list_tools, **client_options)

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def __aenter__(self) -> ClientGroup:
        if self._entered:
            raise RuntimeError("a ClientGroup can be entered only once")
        self._entered = True
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            task_group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(self._signal_stop)  # unwinds before the task group: every server leaves its client
            for server in self._servers.values():
                task_group.start_soon(self._run, server, name=f"mcp server {server.name!r}")
            for server in self._servers.values():
                await server.started.wait()
        except BaseException:
            self._signal_stop()
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Shut every server down, concurrently; returns when all are down (each shutdown is bounded)."""
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    def _signal_stop(self) -> None:
        for server in self._servers.values():
            server.stop.set()

    async def _run(self, server: _Server) -> None:
        """The life of one server: start, report, wait for the group to close, shut down. Never raises."""
        options = self._client_options
        if server.max_in_flight is not None:  # the server's own limit over the group's
            options = {**options, "max_in_flight": server.max_in_flight}
        if server.tool_filter is not ALL_TOOLS:  # the client applies it: group["name"] keeps it too
            options = {**options, "tool_filter": server.tool_filter}
        client = Client(
            server.transport,
            timeout=server.policies.server_timeout,
            retry=server.policies.server_retry,
            on_event=lambda event: self._event(server, event),
            **options,
        )
        connect = server.policies.server_timeout.connect
        budget = connect + _CONNECT_GRACE if connect is not None else math.inf
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + budget) as start_scope:
                async with client:
                    start_scope.deadline = math.inf
                    server.client = client
                    if self._list_tools:
                        await self._refresh_tools(server)
                    server.started.set()
                    await server.stop.wait()
            if start_scope.cancelled_caught and server.client is None:
                raise ConnectError(f"could not start {server.transport.description!r} within {connect:g} s")
        except Exception as exc:
            if server.client is None:
                server.error = exc
                logger.warning("server %r failed to start: %s", server.name, exc)
            else:
                logger.warning("server %r did not shut down cleanly: %s", server.name, exc)
        finally:
            server.closed = server.client is not None
            server.started.set()

    def _event(self, server: _Server, event: Event) -> None:
        if isinstance(event, ServerNotification) and event.method == "notifications/tools/list_changed":
            server.tools = {}  # stale annotations are worse than none: re-learnt at the next list_tools()
        elif isinstance(event, TransportFailure) and event.request_id is None and not server.stop.is_set():
            logger.warning("server %r: connection lost: %s", server.name, event.error)
        if self._on_event is not None:
            try:
                self._on_event(server.name, event)
            except Exception:
                logger.exception("on_event hook failed on %r from server %r", event, server.name)

    async def _refresh_tools(self, server: _Server) -> list[mcp_types.Tool]:
        assert server.client is not None
        tools = await _list_or_log(server)
        if tools is not None:
            server.tools = {tool.name: tool for tool in tools}
        return list(server.tools.values())

    # -- the servers -----------------------------------------------------------------------------------------

    def __contains__(self, name: object) -> bool:
        return name in self._servers

    def __iter__(self) -> Iterator[str]:
        return iter(self._servers)

    def __len__(self) -> int:
        return len(self._servers)

    def __getitem__(self, name: str) -> Client:
        """The client of server ``name``. Raises ``KeyError`` for an unknown name, ``ConnectError`` (with the
        cause) for a server that failed to start."""
        server = self._server(name)
        if server.error is not None:
            raise ConnectError(f"server {name!r} failed to start: {server.error}") from server.error
        if server.client is None or server.closed:
            raise RuntimeError(f"server {name!r} is not running ({server.status.value}): use 'async with group'")
        return server.client

    @property
    def clients(self) -> dict[str, Client]:
        """The clients of the servers that started (a server that died since is still here; see :meth:`status`)."""
        return {
            name: server.client
            for name, server in self._servers.items()
            if server.client is not None and not server.closed
        }

    @property
    def failures(self) -> dict[str, Exception]:
        """The servers that failed to start, and why."""
        return {name: server.error for name, server in self._servers.items() if server.error is not None}

    def status(self, name: str) -> ServerStatus:
        """Where server ``name`` is: starting, ready, failed, dead or closed."""
        return self._server(name).status

    def policies(self, name: str) -> PolicyRegistry:
        """The rules server ``name``'s calls run under (over the group's client default)."""
        return self._server(name).policies

    def _server(self, name: str) -> _Server:
        try:
            return self._servers[name]
        except KeyError:
            raise KeyError(f"no server named {name!r} in this group (servers: {', '.join(self._servers)})") from None

    # -- tools -------------------------------------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, mcp_types.Tool]:
        """Every tool known from the last listing of each server, by qualified name ``server/tool``."""
        return {
            f"{name}/{tool_name}": tool
            for name, server in self._servers.items()
            for tool_name, tool in server.tools.items()
        }

    async def list_tools(self) -> dict[str, list[mcp_types.Tool]]:
        """List the tools of every running server, concurrently; refreshes the annotations the rules use.

        A server whose listing fails (or that is not running) is logged and left out of the result.
        """
        results: dict[str, list[mcp_types.Tool]] = {}

        async def one(server: _Server) -> None:
            if server.client is None or server.closed:
                return
            tools = await _list_or_log(server)
            if tools is not None:
                server.tools = {tool.name: tool for tool in tools}
                results[server.name] = tools

        async with anyio.create_task_group() as task_group:
            for server in self._servers.values():
                task_group.start_soon(one, server)
        return {name: results[name] for name in self._servers if name in results}

    def accept_tool_change(self, name: str) -> None:
        """Accept the changed definition of tool ``server/tool`` (see :meth:`Client.accept_tool_change
        <mcp_client.Client.accept_tool_change>`): with ``pin_tools=True``, its calls go through again."""
        server, tool = split_tool_name(name)
        self[server].accept_tool_change(tool)

    def resolve(
        self,
        qualified: str,
        *,
        timeout: TimeoutArg | PartialTimeout = USE_CLIENT_DEFAULT,
        retry: RetryArg = USE_CLIENT_DEFAULT,
    ) -> tuple[TimeoutPolicy, RetryPolicy | None]:
        """The timeout and retry policies a call of ``server/tool`` with these arguments would run under."""
        name, tool = split_tool_name(qualified)
        server = self._server(name)
        return server.policies.resolve(tool, server.annotations(tool), call_timeout=timeout, call_retry=retry)

    async def call_tool(
        self,
        qualified: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg | PartialTimeout = USE_CLIENT_DEFAULT,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
    ) -> mcp_types.CallToolResult:
        """Call tool ``server/tool`` under its rules; the arguments are those of :meth:`Client.call_tool`.

        Raises:
            KeyError: No such server.
            ValueError: The name is not ``server/tool``.
            ToolNotAllowed: The server's tool filter leaves the tool out.
            ConnectError: The server failed to start.
            TransportError: The server died (and whatever else :meth:`Client.call_tool` raises).
        """
        name, tool = split_tool_name(qualified)
        self._check_allowed(name, tool)
        client = self._live_client(name)
        policy, retry_policy = self.resolve(qualified, timeout=timeout, retry=retry)
        return await client.call_tool(
            tool,
            arguments,
            timeout=policy,
            retry=retry_policy,
            on_progress=on_progress,
            raise_on_error=raise_on_error,
        )

    def tool_call(
        self,
        qualified: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg | PartialTimeout = USE_CLIENT_DEFAULT,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
    ) -> Call[mcp_types.CallToolResult]:
        """A :class:`~mcp_client.Call` handle on ``server/tool`` under its rules (see :meth:`Client.tool_call`)."""
        name, tool = split_tool_name(qualified)
        self._check_allowed(name, tool)
        client = self._live_client(name)
        policy, retry_policy = self.resolve(qualified, timeout=timeout, retry=retry)
        return client.tool_call(
            tool,
            arguments,
            timeout=policy,
            retry=retry_policy,
            on_progress=on_progress,
            raise_on_error=raise_on_error,
        )

    def _check_allowed(self, name: str, tool: str) -> None:
        if not self._server(name).tool_filter.allows(tool):
            raise ToolNotAllowed(f"tool {tool!r} of server {name!r} is left out by its tool filter", name=tool)

    def _live_client(self, name: str) -> Client:
        client = self[name]
        closed = client.session.closed_error
        if closed is not None:
            raise TransportError(f"server {name!r} is gone: {closed.message}", written=False)
        return client


async def _list_or_log(server: _Server) -> list[mcp_types.Tool] | None:
    assert server.client is not None
    try:
        tools = await server.client.list_tools()
    except MCPClientError as exc:
        logger.warning("server %r: tools/list failed (annotation rules left out): %s", server.name, exc)
        return None
    return tools  # (a filtered tool is never offered: the server's client leaves it out)


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a server name must be a non-empty string, got {name!r}")
    if "/" in name:
        raise ValueError(f"a server name must not contain '/' (tools are addressed as 'server/tool'): {name!r}")
