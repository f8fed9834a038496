"""Many servers at once: start them concurrently (or each on first use), address their tools as ``server/tool``.

```python
async with ClientGroup.from_config("mcp.json") as group:
    print(group.failures)                      # servers that did not start, and why
    result = await group.call_tool("search/query", {"q": "anyio"})
```

Each server runs in a task of its own that enters its :class:`~mcp_client.Client`, reports "started" (or
"failed"), waits for the group to close, and leaves its client (see :mod:`mcp_client.group.life`). So:

* eager servers (the default) start concurrently when the group is entered, each within the ``connect`` budget of
  its policy; lazy ones (``start="lazy"``) start on the first call that needs them (:mod:`mcp_client.group.lazy`);
* a server that fails to start is recorded in :attr:`ClientGroup.failures` and logged; the others are not touched;
* a server that dies later fails its own calls (:class:`~mcp_client.TransportError`) and nothing else;
* closing the group shuts every server down concurrently: for stdio, close stdin, SIGTERM, SIGKILL (bounded); for
  HTTP at 2025-11-25, the session is deleted.

Each server's calls run under its :class:`~mcp_client.policy.registry.PolicyRegistry` (the ``policy`` block of its
``mcp.json`` entry) over the group's client options: precedence call > tool rule > annotation rule > server >
client default. The annotations come from a ``tools/list`` the group makes when a server starts (and again on
every :meth:`ClientGroup.list_tools`; for a lazy server not started yet, from its snapshot); a failure of that
listing is logged and only leaves the annotation rules out.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Literal

import anyio
import anyio.abc
import mcp_types

from mcp_client._exit_stack import close_exit_stack
from mcp_client._log_guard import package_logger
from mcp_client._typed import typed_methods
from mcp_client.calls.in_flight_limit import check_max_in_flight
from mcp_client.calls.progress import ProgressCallback
from mcp_client.client.call import Call
from mcp_client.client.client import Client
from mcp_client.config.load import ServerSpec, load_config
from mcp_client.errors import ConnectError, TransportError
from mcp_client.events import Event, ServerNotification, TransportFailure
from mcp_client.group.arguments import check_idle_stop, check_name, check_start, pins_by_server
from mcp_client.group.lazy import running_client, started_client
from mcp_client.group.life import ServerLives
from mcp_client.group.server import GroupServer, ServerStatus
from mcp_client.group.snapshot import SnapshotStore, config_key
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.policy.registry import PartialTimeout, PolicyRegistry, RetryArg
from mcp_client.policy.retry import DEFAULT_RETRY, RetryPolicy
from mcp_client.policy.timeout import DEFAULT_TIMEOUT, TimeoutPolicy, as_timeout_policy
from mcp_client.policy.tool_filter import ToolNotAllowed
from mcp_client.transports.base import Transport

__all__ = ["ClientGroup", "GroupEventHook", "ServerStatus", "split_tool_name"]

logger = package_logger("mcp_client.group")

GroupEventHook = Callable[[str, Event], None]
"""``on_event`` of a group: called with the server's name and each event of its client."""

StartMode = Literal["eager", "lazy"]
"""When a server starts: ``"eager"`` when the group is entered, ``"lazy"`` on the first call that needs it."""


def split_tool_name(qualified: str) -> tuple[str, str]:
    """``"server/tool"`` → ``("server", "tool")``. Server names hold no ``/``; tool names may."""
    server, slash, tool = qualified.partition("/")
    if not slash or not server or not tool:
        raise ValueError(f"a tool of a group is addressed as 'server/tool', got {qualified!r}")
    return server, tool


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
        start: ``"eager"`` (default): every server starts when the group is entered. ``"lazy"``: none does; each
            starts on the first call that needs it, under that call's deadline (see :mod:`mcp_client.group.lazy`),
            and :meth:`list_tools` answers from its snapshot. A server's own ``ServerSpec.start`` (``"start"`` in
            ``mcp.json``) replaces this for that server.
        idle_stop: Seconds without a call after which a started server is stopped (None, the default: never); its
            next call starts it again.
        snapshot: The folder of the lazy servers' tool snapshots (default: ``$XDG_CACHE_HOME/mcp_client``, else
            ``~/.cache/mcp_client``); see :mod:`mcp_client.group.snapshot`.
        **client_options: Passed to every :class:`~mcp_client.Client`. ``timeout`` and ``retry`` are the client
            default under every server's rules; ``retry_rules`` is not accepted (use the ``policy`` block).
            ``max_in_flight`` limits each server on its own; a server's ``ServerSpec.max_in_flight`` (its
            ``policy.max_in_flight`` in ``mcp.json``) replaces it for that server. ``tool_pins`` is per server,
            ``{server name: ToolPins}`` (pins are keyed by tool name, and two servers may each have a tool of the
            same name); one ``ToolPins`` is taken only by a group of one server.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerSpec | Transport],
        *,
        on_event: GroupEventHook | None = None,
        list_tools: bool = True,
        start: StartMode = "eager",
        idle_stop: float | None = None,
        snapshot: str | os.PathLike[str] | None = None,
        **client_options: Any,
    ) -> None:
        if "retry_rules" in client_options:
            raise TypeError("ClientGroup does not take retry_rules: give the servers tool rules instead")
        if "on_event" in client_options or "transport" in client_options:
            raise TypeError("on_event is the group's own (server name, event); transport comes from servers")
        default_timeout = as_timeout_policy(client_options.pop("timeout", DEFAULT_TIMEOUT))
        default_retry: RetryPolicy | None = client_options.pop("retry", DEFAULT_RETRY)
        pins = pins_by_server(client_options.pop("tool_pins", None), list(servers))
        check_start(start, "start")
        check_idle_stop(idle_stop)
        self._servers: dict[str, GroupServer] = {}
        for name, spec in servers.items():
            check_name(name)
            if isinstance(spec, Transport):
                spec = ServerSpec(spec)
            policies = spec.policies.with_defaults(default_timeout, default_retry)
            limit = check_max_in_flight(spec.max_in_flight, where=f"the max_in_flight of server {name!r}")
            mode = spec.start or start
            check_start(mode, f"the start of server {name!r}")
            lazy = mode == "lazy"
            key = config_key(spec.transport) if lazy else None
            self._servers[name] = GroupServer(
                name,
                spec.transport,
                policies,
                limit,
                lazy,
                snapshot_key=key,
                tool_filter=spec.tool_filter,
                tool_pins=pins.get(name),
            )
        self._on_event = on_event
        self._lives = ServerLives(
            client_options,
            list_tools=list_tools,
            idle_stop=idle_stop,
            snapshots=SnapshotStore(snapshot),
            on_event=self._event,
        )
        self._stack: AsyncExitStack | None = None
        self._entered = False
        self._entering: anyio.Event | None = None  # set while __aenter__ starts: an aclose() meanwhile waits for it
        self._close_requested = False
        self._owner_task: int | None = None  # the task that entered the group: the one that can close it

    @classmethod
    def from_config(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any],
        *,
        on_event: GroupEventHook | None = None,
        list_tools: bool = True,
        dialect: str | None = None,
        start: StartMode = "eager",
        idle_stop: float | None = None,
        snapshot: str | os.PathLike[str] | None = None,
        **client_options: Any,
    ) -> ClientGroup:
        """A group of the servers of an ``mcp.json`` (a path or its parsed content); see :mod:`mcp_client.config.load`.

        ``dialect`` names the format of another host's file (``"claude_code"``, ``"vscode"``, ``"codex"``...; None:
        told from the file), as :func:`~mcp_client.config.load.load_config`.

        Raises:
            ConfigError: The configuration is not valid (every problem listed with its JSON path).
        """
        specs = load_config(config, dialect=dialect).specs()
        options = {"start": start, "idle_stop": idle_stop, "snapshot": snapshot, **client_options}
        return cls(specs, on_event=on_event, list_tools=list_tools, **options)

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def __aenter__(self) -> ClientGroup:
        if self._entered:
            raise RuntimeError("a ClientGroup can be entered only once")
        self._entered = True
        entering = self._entering = anyio.Event()
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            stack.callback(self._closed)
            self._lives.task_group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(self._signal_stop)  # unwinds before the task group: every server leaves its client
            eager = [server for server in self._servers.values() if not server.lazy]
            for server in self._servers.values():
                if server.lazy:  # the snapshot only: no process, no connection
                    seen = self._lives.snapshots.load(server.snapshot_key) if server.snapshot_key else None
                    # (a snapshot kept before a tool was filtered out holds it: the filter holds here too)
                    server.seen = None if seen is None else [t for t in seen if server.tool_filter.allows(t.name)]
                    server.tools = {tool.name: tool for tool in server.seen or ()}
            for server in eager:
                self._lives.launch(server)
            for server in eager:
                await server.started.wait()
            if self._close_requested:  # aclose() came from another task as the servers started: undone below
                raise ConnectError("the group was closed while its servers started")
        except BaseException:
            self._signal_stop()
            try:
                await close_exit_stack(stack)
            finally:
                self._entering = None
                entering.set()
            raise
        self._stack, self._owner_task = stack, anyio.get_current_task().id
        self._entering = None
        entering.set()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Shut every server down, concurrently; returns when all are down (each shutdown is bounded).

        From a task other than the one that entered the group: while the group starts, the start is given up (the
        entering task gets a :class:`~mcp_client.ConnectError`) and undone before this returns; once it runs, a
        ``RuntimeError`` (its task group is the entering task's: end that task's work instead)."""
        entering = self._entering
        if entering is not None:  # __aenter__ runs in another task: it unwinds what it opened; end its starts
            self._close_requested = True
            self._signal_stop()
            await entering.wait()
        if self._stack is not None and anyio.get_current_task().id != self._owner_task:
            raise RuntimeError(
                "a ClientGroup is closed by the task that entered it (its task group is that task's); from another "
                "task, end the work of that task instead (cancel its scope)"
            )
        stack, self._stack = self._stack, None
        if stack is not None:
            await close_exit_stack(stack)

    def _signal_stop(self) -> None:
        self._lives.task_group, self._lives.closed = None, True  # no new life from here on
        for server in self._servers.values():
            server.stop.set()
            server.wake.set()
            if server.start_scope is not None and server.phase is ServerStatus.STARTING:
                server.start_scope.cancel()  # a start under way ends now, not at its connect budget

    def _closed(self) -> None:
        for server in self._servers.values():
            if server.phase in (ServerStatus.NEVER_STARTED, ServerStatus.STOPPED_IDLE):
                server.phase = ServerStatus.CLOSED

    def _event(self, server: GroupServer, event: Event) -> None:
        if isinstance(event, ServerNotification) and event.method == "notifications/tools/list_changed":
            server.tools = {}  # stale annotations are worse than none: re-learnt at the next list_tools()
        elif isinstance(event, TransportFailure) and event.request_id is None and not server.stop.is_set():
            logger.warning("server %r: connection lost: %s", server.name, event.error)
        if self._on_event is not None:
            try:
                self._on_event(server.name, event)
            except Exception:
                logger.exception("on_event hook failed on %r from server %r", event, server.name)

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
        if server.phase is ServerStatus.FAILED:
            raise ConnectError(f"server {name!r} failed to start: {server.error}") from server.error
        if server.client is None or server.phase is not ServerStatus.READY:
            hint = "start it with a call first" if server.lazy else "use 'async with group'"
            raise RuntimeError(f"server {name!r} is not running ({server.status.value}): {hint}")
        return server.client

    @property
    def clients(self) -> dict[str, Client]:
        """The clients of the servers that started (a server that died since is still here; see :meth:`status`)."""
        return {
            name: server.client
            for name, server in self._servers.items()
            if server.client is not None and server.phase is ServerStatus.READY
        }

    @property
    def failures(self) -> dict[str, Exception]:
        """The servers whose last start failed, and why."""
        return {
            name: server.error
            for name, server in self._servers.items()
            if server.error is not None and server.phase is ServerStatus.FAILED
        }

    def status(self, name: str) -> ServerStatus:
        """Where server ``name`` is: never started (lazy), starting, ready, stopped idle, failed, dead or closed."""
        return self._server(name).status

    def policies(self, name: str) -> PolicyRegistry:
        """The rules server ``name``'s calls run under (over the group's client default)."""
        return self._server(name).policies

    def _server(self, name: str) -> GroupServer:
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
        """List the tools of every server, concurrently; refreshes the annotations the rules use.

        A running server is asked. A lazy server that is not running answers from its snapshot (its listing as last
        kept on disk) without being started; one with no snapshot yet is started to list it (and stays running).
        A server whose listing fails, or that cannot start, is logged and left out of the result.
        """
        results: dict[str, list[mcp_types.Tool]] = {}

        async def one(server: GroupServer) -> None:
            if server.phase is not ServerStatus.READY:
                if server.seen is not None or (server.phase is ServerStatus.STOPPED_IDLE and server.tools):
                    listed = server.seen or server.tools.values()
                    results[server.name] = [tool for tool in listed if server.tool_filter.allows(tool.name)]
                    return
                if not server.lazy or self._lives.task_group is None:
                    return
                try:
                    await started_client(self._lives, server)
                except ConnectError as exc:
                    logger.warning("server %r: not listed: %s", server.name, exc)
                    return
            tools = await self._lives.refresh_tools(server)
            if tools is not None:
                results[server.name] = tools

        async with anyio.create_task_group() as task_group:
            for server in self._servers.values():
                task_group.start_soon(one, server)
        return {name: results[name] for name in self._servers if name in results}

    def accept_tool_change(self, name: str) -> None:
        """Accept the changed definition of tool ``server/tool`` (see :meth:`Client.accept_tool_change
        <mcp_client.Client.accept_tool_change>`): with ``pin_tools=True``, its calls go through again."""
        server_name, tool = split_tool_name(name)
        self[server_name].accept_tool_change(tool)
        self._lives.save_snapshot(self._server(server_name))

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
            ConnectError: The server failed to start.
            TransportError: The server died (and whatever else :meth:`Client.call_tool` raises).
        """
        name, tool = split_tool_name(qualified)
        self._check_allowed(name, tool)
        server = self._server(name)
        began = anyio.current_time()
        policy, _ = self.resolve(qualified, timeout=timeout, retry=retry)
        client = await running_client(self._lives, server, policy.maximum)  # a lazy server starts here
        policy, retry_policy = self.resolve(qualified, timeout=timeout, retry=retry)  # (now with its annotations)
        spent = anyio.current_time() - began
        if spent > 0 and policy.maximum is not None:  # the start spent the call's own time
            policy = dataclasses.replace(policy, maximum=max(policy.maximum - spent, _LEAST))
        server.use()
        try:
            return await client.call_tool(
                tool,
                arguments,
                timeout=policy,
                retry=retry_policy,
                on_progress=on_progress,
                raise_on_error=raise_on_error,
            )
        finally:
            server.release()

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
        """A :class:`~mcp_client.Call` handle on ``server/tool`` under its rules (see :meth:`Client.tool_call`).

        The server must be running: a lazy one that is not raises :class:`~mcp_client.ConnectError` (nothing was
        sent); :meth:`call_tool` starts it, and so does :meth:`start`.
        """
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

    async def start(self, name: str) -> None:
        """Start server ``name`` now if it is not running (a lazy one, or one stopped idle), within its ``connect``
        budget; concurrent calls share the start.

        Raises:
            ConnectError: It failed to start (or failed within the wait before it may be tried again).
        """
        await started_client(self._lives, self._server(name))

    def _live_client(self, name: str) -> Client:
        server = self._server(name)
        if server.phase in (ServerStatus.NEVER_STARTED, ServerStatus.STARTING, ServerStatus.STOPPED_IDLE):
            raise ConnectError(f"server {name!r} is not running ({server.status.value}): start it first")
        client = self[name]
        closed = client.session.closed_error
        if closed is not None:
            raise TransportError(f"server {name!r} is gone: {closed.message}", written=False)
        return client


typed_methods(ClientGroup)  # every public coroutine method: failures typed, never an exception group


_LEAST = 1e-6
"""The least maximum a call keeps after its server's start (a positive number: the policy takes no zero)."""
