"""The worker's connections: one :class:`~mcp_client.Client` per server name per worker process (or, with
``per_workflow``, per server name per workflow).

A client is started on first use, shared by every activity of the worker, started again after it failed (a
connection error, or a transport failure that may have left it broken), and closed when the worker shuts down. A
shared client shares its cache context, tool pins, retry budget and slots across every workflow the worker runs;
with ``per_workflow`` each workflow id gets a client of its own from the factory, closed once none of that
workflow's activities uses it.
Each client is entered and closed by a keeper task of its own in the worker's task group (an anyio cancel scope
belongs to the task that entered it, so an activity's task could not own it). The tools a server lists are learnt
once per connection: their annotations say which are safe to repeat.

Touches the public client only; runs on the worker's event loop (asyncio), never in a workflow.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import mcp_types

from mcp_client._log_guard import package_logger
from mcp_client.client.client import Client
from mcp_client.policy import TimeoutPolicy

logger = package_logger("mcp_client.integrations.temporal")

__all__ = ["Connection", "Connections"]

_CLOSE_TIMEOUT = 10.0
"""Seconds the worker's shutdown waits for its clients to close (each client bounds its own shutdown too)."""


@dataclass
class Connection:
    """One started client and what was learnt on it."""

    server: str
    client: Client
    owner: str | None = None
    """The workflow id it serves alone (``per_workflow``), or None: every workflow of the worker."""
    closed: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)
    users: int = 0
    """Activities using it now."""
    _tools: dict[str, mcp_types.Tool] | None = None

    async def tool(self, name: str, timeout: TimeoutPolicy | None = None) -> mcp_types.Tool | None:
        """The tool as the server lists it (listed once per connection, again for a name not seen yet), under
        ``timeout`` (the limits of the call that needs it; None: the client's)."""
        if self._tools is None or name not in self._tools:
            listing = self.client.list_tools() if timeout is None else self.client.list_tools(timeout=timeout)
            self._tools = {tool.name: tool for tool in await listing}
        return self._tools.get(name)


class Connections:
    """The worker's clients by server name, built by the plugin's factories."""

    def __init__(self, factories: Mapping[str, Callable[[], Client]], *, per_workflow: bool = False) -> None:
        self.factories = dict(factories)
        self.per_workflow = per_workflow
        self._live: dict[tuple[str, str | None], Connection] = {}
        self._locks = {name: anyio.Lock() for name in self.factories}
        self._task_group: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Around the worker's run: clients may be started inside; all of them are closed at the end."""
        if self._task_group is not None:  # a second worker of the same plugin shares the first one's clients
            yield
            return
        failure: BaseException | None = None
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            try:
                yield
            except BaseException as exc:  # the worker's own error: raised as it is, not in an exception group
                failure = exc
            finally:
                self._task_group = None
                live = list(self._live.values())
                for connection in live:
                    connection.stop.set()
                with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True):
                    for connection in live:
                        await connection.closed.wait()
                task_group.cancel_scope.cancel()
        if failure is not None:
            raise failure

    async def get(self, server: str, workflow_id: str | None = None) -> Connection:
        """The live connection to ``server`` (for ``workflow_id`` alone with ``per_workflow``), started now if there
        is none. Pair it with :meth:`release` when the activity ends."""
        if server not in self.factories:
            raise KeyError(f"no MCP server named {server!r} on this worker (known: {', '.join(self.factories)})")
        key = (server, workflow_id if self.per_workflow else None)
        async with self._locks[server]:
            connection = self._live.get(key)
            if connection is None or connection.stop.is_set():
                if self._task_group is None:
                    raise RuntimeError("the MCP plugin's worker is not running: its connections start with it")
                connection = await self._task_group.start(self._keep, key)
            connection.users += 1
            return connection

    def live(self) -> list[Connection]:
        """The connections started and not stopped."""
        return [connection for connection in self._live.values() if not connection.stop.is_set()]

    def release(self, connection: Connection) -> None:
        """An activity is done with ``connection``; a workflow's own client closes when none uses it."""
        connection.users -= 1
        if connection.owner is not None and connection.users <= 0:
            self.discard(connection)

    def discard(self, connection: Connection) -> None:
        """Close ``connection`` in the background; the next :meth:`get` starts a new one."""
        connection.stop.set()
        key = (connection.server, connection.owner)
        if self._live.get(key) is connection:
            del self._live[key]

    async def _keep(self, key: tuple[str, str | None], *, task_status: anyio.abc.TaskStatus[Connection]) -> None:
        server, owner = key
        client = self.factories[server]()
        if not isinstance(client, Client):
            raise TypeError(f"the factory of {server!r} must return an mcp_client.Client, got {type(client).__name__}")
        connection = Connection(server, client, owner)
        started = False
        try:
            async with client:
                self._live[key] = connection
                task_status.started(connection)
                started = True
                await connection.stop.wait()
        except Exception:
            if not started:
                raise  # to the activity that asked for the connection
            # A client that failed while in use ends here, not in the worker's task group; the next use starts anew.
            logger.warning("the connection to MCP server %r failed; it starts again on next use", server, exc_info=True)
        finally:
            if self._live.get(key) is connection:
                del self._live[key]
            connection.closed.set()
