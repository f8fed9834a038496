"""The blocking API, for hosts without an event loop: the same clients, policies, errors and results.

```python
from mcp_client import TimeoutPolicy, stdio
from mcp_client.sync.client import Client

with Client(stdio("python", ["server.py"]), timeout=TimeoutPolicy(idle=30, maximum=600)) as client:
    tools = client.list_tools()
    result = client.call_tool("reindex", {"collection": "docs"}, on_progress=print)
```

Each sync client owns a :func:`anyio.from_thread.start_blocking_portal`: an event loop (asyncio unless
``backend="trio"``) on a thread of its own, in which the async :class:`mcp_client.Client` (or
:class:`mcp_client.ClientGroup`) is entered and every method runs. The calling thread blocks on the result.

* Every method takes the arguments of its async twin and raises the same typed errors.
* The caller's :mod:`contextvars` (an active OpenTelemetry span, say) are carried into the call.
* Ctrl-C while a call is in flight cancels the call **on the wire** (``notifications/cancelled`` over stdio), waits
  a bounded time for the cancellation to be written, then re-raises :class:`KeyboardInterrupt`; the client stays
  usable.
* Progress callbacks (sync or async) run on the client's event-loop thread: keep them quick, and do not call the
  sync client from inside one (anyio refuses: it would deadlock).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any

from mcp_client.client.client import Client as AsyncClient
from mcp_client.config.load import ServerSpec
from mcp_client.group import ClientGroup as AsyncClientGroup, GroupEventHook, StartMode
from mcp_client.sync.portal import Portal, PortalRunner
from mcp_client.sync.view import ClientView, GroupView, SyncCall, SyncSubscription
from mcp_client.transports.base import Transport

__all__ = ["DEFAULT_INTERRUPT_TIMEOUT", "Client", "ClientGroup", "ClientView", "SyncCall", "SyncSubscription"]

DEFAULT_INTERRUPT_TIMEOUT = 5.0
"""Seconds a Ctrl-C waits for the interrupted call to end and its cancellation to be written before re-raising."""


class Client(ClientView):
    """A blocking connection to one MCP server: :class:`mcp_client.Client` on an event loop of its own.

    ```python
    with Client(stdio("python", ["server.py"])) as client:
        print(client.call_tool("echo", {"text": "hi"}))
    ```

    Args:
        transport: How to reach the server.
        backend: The event loop to run it on: ``"asyncio"`` (default) or ``"trio"``.
        backend_options: Options of that backend (as for :func:`anyio.run`).
        interrupt_timeout: Seconds a Ctrl-C waits for the interrupted call to be cancelled on the wire.
        **options: Every option of :class:`mcp_client.Client` (``timeout``, ``retry``, ``on_event``, ...).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
        interrupt_timeout: float = DEFAULT_INTERRUPT_TIMEOUT,
        **options: Any,
    ) -> None:
        super().__init__(AsyncClient(transport, **options), None)
        self._portal = Portal(backend, backend_options, name=f"mcp-client {transport.description}")
        self._interrupt_timeout = interrupt_timeout

    def open(self) -> Client:
        """Start the event loop and connect (what ``with`` does). Raises what :class:`mcp_client.Client` raises."""
        portal, stopped = self._portal.enter(self._async, self)
        # The runner must not reference this object (a bound method would): collected, it closes the portal.
        self._runner_ = PortalRunner(portal, self._interrupt_timeout, functools.partial(_drain, self._async), stopped)
        return self

    def close(self) -> None:
        """Shut the connection down (for stdio: close stdin, then SIGTERM, then SIGKILL, bounded), then stop the
        event loop. Idempotent."""
        self._runner_ = None
        self._portal.close()

    def __enter__(self) -> Client:
        return self.open()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class ClientGroup(GroupView):
    """Several MCP servers, blocking: :class:`mcp_client.ClientGroup` on an event loop of its own.

    ```python
    with ClientGroup.from_config("mcp.json") as group:
        print(group.failures)
        result = group.call_tool("search/query", {"q": "anyio"})
    ```

    Args:
        servers: The servers by name (see :class:`mcp_client.ClientGroup`).
        backend, backend_options, interrupt_timeout: As for :class:`Client`.
        on_event, list_tools, start, idle_stop, snapshot, **client_options: As for :class:`mcp_client.ClientGroup`
            (``start="lazy"``: each server starts on its first call).
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
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
        interrupt_timeout: float = DEFAULT_INTERRUPT_TIMEOUT,
        **client_options: Any,
    ) -> None:
        self._init(
            AsyncClientGroup(
                servers,
                on_event=on_event,
                list_tools=list_tools,
                start=start,
                idle_stop=idle_stop,
                snapshot=snapshot,
                **client_options,
            ),
            backend,
            backend_options,
            interrupt_timeout,
        )

    def _init(
        self,
        group: AsyncClientGroup,
        backend: str,
        backend_options: Mapping[str, Any] | None,
        interrupt_timeout: float,
    ) -> None:
        self._async = group
        self._portal = Portal(backend, backend_options, name="mcp-client group")
        self._interrupt_timeout = interrupt_timeout
        self._runner_: PortalRunner | None = None

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
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
        interrupt_timeout: float = DEFAULT_INTERRUPT_TIMEOUT,
        **client_options: Any,
    ) -> ClientGroup:
        """A group of the servers of an ``mcp.json`` or another host's file (see
        :meth:`mcp_client.ClientGroup.from_config`).

        Raises:
            ConfigError: The configuration is not valid.
        """
        group = cls.__new__(cls)
        async_group = AsyncClientGroup.from_config(
            config,
            on_event=on_event,
            list_tools=list_tools,
            dialect=dialect,
            start=start,
            idle_stop=idle_stop,
            snapshot=snapshot,
            **client_options,
        )
        group._init(async_group, backend, backend_options, interrupt_timeout)
        return group

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def open(self) -> ClientGroup:
        """Start the event loop and every server, concurrently (what ``with`` does)."""
        portal, stopped = self._portal.enter(self._async, self)
        self._runner_ = PortalRunner(
            portal, self._interrupt_timeout, functools.partial(_drain_group, self._async), stopped
        )
        return self

    def close(self) -> None:
        """Shut every server down, concurrently, then stop the event loop. Idempotent."""
        self._runner_ = None
        self._portal.close()

    def __enter__(self) -> ClientGroup:
        return self.open()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    # -- the servers -----------------------------------------------------------------------------------------

    def __contains__(self, name: object) -> bool:
        return name in self._async

    def __iter__(self) -> Iterator[str]:
        return iter(self._async)

    def __len__(self) -> int:
        return len(self._async)

    def __getitem__(self, name: str) -> ClientView:
        """The blocking client of server ``name`` (raises as :meth:`mcp_client.ClientGroup.__getitem__`)."""
        return ClientView(self._async[name], self._runner)

    @property
    def clients(self) -> dict[str, ClientView]:
        """The blocking clients of the servers that started."""
        runner = self._runner
        return {name: ClientView(client, runner) for name, client in self._async.clients.items()}


async def _drain(client: AsyncClient, timeout: float) -> None:
    await client.session.drain_cancels(timeout)


async def _drain_group(group: AsyncClientGroup, timeout: float) -> None:
    for client in group.clients.values():
        await client.session.drain_cancels(timeout)
