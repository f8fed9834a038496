"""The blocking API, for hosts without an event loop: the same clients, policies, errors and results.

```python
from mcp_client import TimeoutPolicy, stdio
from mcp_client.sync import Client

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

import concurrent.futures
import contextvars
import os
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack
from types import TracebackType
from typing import Any, Generic, ParamSpec, TypeVar

import anyio
import mcp_types
from anyio.from_thread import BlockingPortal, start_blocking_portal

from mcp_client.cache import ResultCache
from mcp_client.call import Call
from mcp_client.client import Client as AsyncClient
from mcp_client.completion import CompletionRef
from mcp_client.config import ServerSpec
from mcp_client.group import ClientGroup as AsyncClientGroup
from mcp_client.group import GroupEventHook, ServerStatus
from mcp_client.logs import LogLevel
from mcp_client.policy import Progress, TimeoutPolicy
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.policy.retry import RetryPolicy
from mcp_client.progress import ProgressCallback
from mcp_client.protocol.era import Era
from mcp_client.registry import PartialTimeout, PolicyRegistry, RetryArg
from mcp_client.transports.base import JSONObject, Transport

__all__ = ["DEFAULT_INTERRUPT_TIMEOUT", "Client", "ClientGroup", "ClientView", "SyncCall"]

T = TypeVar("T")
P = ParamSpec("P")
ResultT = TypeVar("ResultT")

DEFAULT_INTERRUPT_TIMEOUT = 5.0
"""Seconds a Ctrl-C waits for the interrupted call to end and its cancellation to be written before re-raising."""

_POLL = 0.2
"""Seconds between two checks of a waiting thread: lets signal handlers run even where a blocking wait is not
interruptible (Windows)."""


class _Runner:
    """Runs coroutines in a portal for a blocking caller, and turns Ctrl-C into a cancellation on the wire."""

    def __init__(self, portal: BlockingPortal, interrupt_timeout: float, drain: Callable[[float], Awaitable[None]]):
        self.portal = portal
        self.interrupt_timeout = interrupt_timeout
        self._drain = drain

    def run(self, func: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``func(*args, **kwargs)`` in the portal, in a copy of the caller's context; block for its result.

        On :class:`KeyboardInterrupt` (or any exception raised in this thread while it waits, even before the task
        started) the task is cancelled, which cancels its request on the wire; the wait for that is bounded, then
        the interrupt is re-raised.
        """
        context = contextvars.copy_context()
        handle = _Interruptible()

        async def task() -> T:
            try:
                _adopt(context)
                with anyio.CancelScope() as scope:
                    handle.scope = scope
                    if handle.cancelled:
                        scope.cancel()
                    return await func(*args, **kwargs)
                raise _Interrupted("the call was interrupted")
            finally:
                handle.finished.set()

        try:
            future = self.portal.start_task_soon(task)
            _wait(future)
        except BaseException:
            self._interrupt(handle)
            raise
        return future.result()

    def call_sync(self, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a plain function on the event-loop thread (for state the loop owns)."""
        return self.portal.call(lambda: func(*args, **kwargs))

    def _interrupt(self, handle: _Interruptible) -> None:
        try:
            self.portal.call(handle.cancel)
            if not handle.finished.wait(self.interrupt_timeout):
                return
            drained = self.portal.start_task_soon(self._drain, self.interrupt_timeout)
            concurrent.futures.wait([drained], timeout=self.interrupt_timeout)
        except RuntimeError:  # the portal is already shutting down
            pass


class _Interrupted(Exception):
    """Ends a task cancelled by an interrupt of its caller (who no longer waits for its result)."""


class _Interruptible:
    """Lets the waiting thread cancel its task, whether the task has started yet or not."""

    def __init__(self) -> None:
        self.scope: anyio.CancelScope | None = None
        self.cancelled = False
        self.finished = threading.Event()

    def cancel(self) -> None:
        """On the event-loop thread: cancel the task now, or as soon as it starts."""
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()


def _wait(future: concurrent.futures.Future[Any]) -> None:
    while not future.done():
        concurrent.futures.wait([future], timeout=_POLL)


def _adopt(context: contextvars.Context) -> None:
    """Give the running task the values of the caller's context variables (its own copy is changed, no more)."""
    for var, value in context.items():
        var.set(value)


class _Portal:
    """A blocking portal started on demand and stopped on close."""

    def __init__(self, backend: str, backend_options: Mapping[str, Any] | None, name: str) -> None:
        self._backend = backend
        self._backend_options = dict(backend_options) if backend_options is not None else None
        self._name = name
        self._stack: ExitStack | None = None

    def enter(self, target: Any) -> tuple[BlockingPortal, Any]:
        """Start the portal and enter the async context manager ``target`` in it; returns both."""
        if self._stack is not None:
            raise RuntimeError("already open")
        stack = ExitStack()
        try:
            portal = stack.enter_context(start_blocking_portal(self._backend, self._backend_options, name=self._name))
            entered = stack.enter_context(portal.wrap_async_context_manager(target))
        except BaseException as exc:
            # Hand the exception over: the portal then cancels what is still running (a connect under way).
            stack.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._stack = stack
        return portal, entered

    def close(self) -> None:
        """Leave the async context manager, then stop the event loop. Idempotent."""
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()


class SyncCall(Generic[ResultT]):
    """A blocking handle on a call in flight: iterate its progress, cancel it, wait for its result.

    ```python
    with client.tool_call("reindex", {"collection": "docs"}) as call:
        for p in call.progress():
            print(p.progress, p.total, p.message)
        result = call.result()
    ```
    Leaving the ``with`` block before the call ended cancels it (on the wire too).
    """

    def __init__(self, runner: _Runner, call: Call[ResultT]) -> None:
        self._runner = runner
        self._call = call
        self._cm: AbstractContextManager[Call[ResultT]] | None = None

    def __enter__(self) -> SyncCall[ResultT]:
        if self._cm is not None:
            raise RuntimeError("a SyncCall can be entered only once")
        self._cm = self._runner.portal.wrap_async_context_manager(self._call)
        self._cm.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        assert self._cm is not None
        self._cm.__exit__(exc_type, exc, traceback)

    @property
    def done(self) -> bool:
        """True once the call ended, with a result or an error."""
        return self._call.done

    @property
    def request_ids(self) -> tuple[int | str, ...]:
        """The JSON-RPC ids this call has used so far."""
        return self._call.request_ids

    def cancel(self, reason: str = "cancelled by the client") -> None:
        """End the call; the server is told. Safe from any thread, more than once, or after the end."""
        self._runner.call_sync(self._call.cancel, reason)

    def progress(self) -> Iterator[Progress]:
        """The call's accepted progress updates, in order, ending when the call ends. One consumer only."""
        updates = self._call.progress()
        while True:
            try:
                yield self._runner.run(anext, updates)
            except StopAsyncIteration:
                return

    def result(self) -> ResultT:
        """Wait for the call to end; return its result or raise its typed error. Ctrl-C cancels the call."""
        return self._runner.run(self._call.result)


class ClientView:
    """The blocking methods of one connected :class:`mcp_client.Client`, run through a portal.

    :class:`Client` is one; :class:`ClientGroup` hands these out for its servers (``group["name"]``).
    """

    _async: AsyncClient
    _runner_: _Runner | None

    def __init__(self, client: AsyncClient, runner: _Runner | None) -> None:
        self._async = client
        self._runner_ = runner

    @property
    def _runner(self) -> _Runner:
        if self._runner_ is None:
            raise RuntimeError("the client is not connected: use 'with Client(...)' or call open()")
        return self._runner_

    @property
    def async_client(self) -> AsyncClient:
        """The async client underneath (its methods must run on the portal's event loop)."""
        return self._async

    @property
    def portal(self) -> BlockingPortal:
        """The portal running the client's event loop, to run coroutines of your own on it."""
        return self._runner.portal

    # -- what the server said about itself ----------------------------------------------------------------------

    @property
    def transport(self) -> Transport:
        """How the server is reached."""
        return self._async.transport

    @property
    def era(self) -> Era:
        """The protocol era in use."""
        return self._async.era

    @property
    def protocol_version(self) -> str:
        """The protocol version in use, e.g. ``"2026-07-28"``."""
        return self._async.protocol_version

    @property
    def server_info(self) -> mcp_types.Implementation | None:
        """The server's name and version, when it said."""
        return self._async.server_info

    @property
    def server_capabilities(self) -> mcp_types.ServerCapabilities | None:
        """The capabilities the server declared."""
        return self._async.server_capabilities

    @property
    def server_process_id(self) -> int | None:
        """The server's process id over stdio (None for other transports)."""
        return self._async.server_process_id

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if any."""
        return self._async.instructions

    # -- policy ------------------------------------------------------------------------------------------------

    def resolve(
        self, tool: str | None = None, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, retry: RetryArg = USE_CLIENT_DEFAULT
    ) -> tuple[TimeoutPolicy, RetryPolicy | None]:
        """The timeout and retry policies a call runs under (see :meth:`mcp_client.Client.resolve`)."""
        return self._async.resolve(tool, timeout=timeout, retry=retry)

    def resolve_timeout(self, timeout: TimeoutArg) -> TimeoutPolicy:
        """The policy a request that is no tool call runs under with this ``timeout=`` argument."""
        return self._async.resolve_timeout(timeout)

    def is_idempotent(self, tool: str) -> bool:
        """What ``tools/list`` said: True for a tool annotated ``idempotentHint`` or ``readOnlyHint``."""
        return self._async.is_idempotent(tool)

    # -- calls -------------------------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        idempotent: bool = False,
        log_level: LogLevel | None = None,
    ) -> JSONObject:
        """Send any request and return its raw ``result`` object (see :meth:`mcp_client.Client.request`)."""
        return self._runner.run(
            self._async.request,
            method,
            params,
            timeout=timeout,
            on_progress=on_progress,
            retry=retry,
            idempotent=idempotent,
            log_level=log_level,
        )

    def set_log_level(self, level: LogLevel, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Ask for the server's log messages at ``level`` and above (see :meth:`mcp_client.Client.set_log_level`)."""
        self._runner.run(self._async.set_log_level, level, timeout=timeout)

    def ping(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Check that the server answers (see :meth:`mcp_client.Client.ping`)."""
        self._runner.run(self._async.ping, timeout=timeout)

    @property
    def cache(self) -> ResultCache | None:
        """The result cache (see :attr:`mcp_client.Client.cache`)."""
        return self._async.cache

    def discover(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: bool = True) -> mcp_types.DiscoverResult:
        """What the server says of itself (see :meth:`mcp_client.Client.discover`)."""
        return self._runner.run(self._async.discover, timeout=timeout, cache=cache)

    def list_tools(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: bool = True) -> list[mcp_types.Tool]:
        """Every tool of the server, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        return self._runner.run(self._async.list_tools, timeout=timeout, cache=cache)

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        log_level: LogLevel | None = None,
    ) -> mcp_types.CallToolResult:
        """Call a tool and return its result (see :meth:`mcp_client.Client.call_tool`).

        ``on_progress`` may be a plain function; it runs on the client's event-loop thread.

        Raises:
            IdleTimeout, MaxTimeout, TransportError, ServerError, ProtocolError, ToolError. KeyboardInterrupt
            (Ctrl-C) after cancelling the call on the wire.
        """
        return self._runner.run(
            self._async.call_tool,
            name,
            arguments,
            timeout=timeout,
            on_progress=on_progress,
            raise_on_error=raise_on_error,
            retry=retry,
            log_level=log_level,
        )

    def tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        log_level: LogLevel | None = None,
    ) -> SyncCall[mcp_types.CallToolResult]:
        """A blocking handle on a tool call (see :class:`SyncCall`); use it with ``with``."""
        runner = self._runner
        call = runner.call_sync(
            lambda: self._async.tool_call(
                name,
                arguments,
                timeout=timeout,
                on_progress=on_progress,
                raise_on_error=raise_on_error,
                retry=retry,
                log_level=log_level,
            )
        )
        return SyncCall(runner, call)

    def list_prompts(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: bool = True) -> list[mcp_types.Prompt]:
        """Every prompt of the server, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        return self._runner.run(self._async.list_prompts, timeout=timeout, cache=cache)

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT
    ) -> mcp_types.GetPromptResult:
        """Get a prompt, filled in with ``arguments``."""
        return self._runner.run(self._async.get_prompt, name, arguments, timeout=timeout)

    def list_resources(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: bool = True
    ) -> list[mcp_types.Resource]:
        """Every resource of the server, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        return self._runner.run(self._async.list_resources, timeout=timeout, cache=cache)

    def read_resource(
        self, uri: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: bool = True
    ) -> mcp_types.ReadResourceResult:
        """Read a resource (from the cache while it is fresh, unless ``cache=False``)."""
        return self._runner.run(self._async.read_resource, uri, timeout=timeout, cache=cache)

    def list_resource_templates(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: bool = True
    ) -> list[mcp_types.ResourceTemplate]:
        """Every resource template of the server, all pages fetched (fresh pages from the cache unless
        ``cache=False``)."""
        return self._runner.run(self._async.list_resource_templates, timeout=timeout, cache=cache)

    def complete(
        self,
        ref: CompletionRef,
        argument_name: str,
        value: str,
        context: Mapping[str, str] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
    ) -> mcp_types.Completion:
        """The values the server suggests for one argument (see :meth:`mcp_client.Client.complete`)."""
        return self._runner.run(self._async.complete, ref, argument_name, value, context, timeout=timeout)


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
        self._portal = _Portal(backend, backend_options, name=f"mcp-client {transport.description}")
        self._interrupt_timeout = interrupt_timeout

    def open(self) -> Client:
        """Start the event loop and connect (what ``with`` does). Raises what :class:`mcp_client.Client` raises."""
        portal, _ = self._portal.enter(self._async)
        self._runner_ = _Runner(portal, self._interrupt_timeout, self._drain)
        return self

    async def _drain(self, timeout: float) -> None:
        await self._async.session.drain_cancels(timeout)

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


class ClientGroup:
    """Several MCP servers, blocking: :class:`mcp_client.ClientGroup` on an event loop of its own.

    ```python
    with ClientGroup.from_config("mcp.json") as group:
        print(group.failures)
        result = group.call_tool("search/query", {"q": "anyio"})
    ```

    Args:
        servers: The servers by name (see :class:`mcp_client.ClientGroup`).
        backend, backend_options, interrupt_timeout: As for :class:`Client`.
        on_event, list_tools, **client_options: As for :class:`mcp_client.ClientGroup`.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerSpec | Transport],
        *,
        on_event: GroupEventHook | None = None,
        list_tools: bool = True,
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
        interrupt_timeout: float = DEFAULT_INTERRUPT_TIMEOUT,
        **client_options: Any,
    ) -> None:
        self._init(
            AsyncClientGroup(servers, on_event=on_event, list_tools=list_tools, **client_options),
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
        self._portal = _Portal(backend, backend_options, name="mcp-client group")
        self._interrupt_timeout = interrupt_timeout
        self._runner_: _Runner | None = None

    @classmethod
    def from_config(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any],
        *,
        on_event: GroupEventHook | None = None,
        list_tools: bool = True,
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
        interrupt_timeout: float = DEFAULT_INTERRUPT_TIMEOUT,
        **client_options: Any,
    ) -> ClientGroup:
        """A group of the servers of an ``mcp.json`` (see :meth:`mcp_client.ClientGroup.from_config`).

        Raises:
            ConfigError: The configuration is not valid.
        """
        group = cls.__new__(cls)
        async_group = AsyncClientGroup.from_config(config, on_event=on_event, list_tools=list_tools, **client_options)
        group._init(async_group, backend, backend_options, interrupt_timeout)
        return group

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def open(self) -> ClientGroup:
        """Start the event loop and every server, concurrently (what ``with`` does)."""
        portal, _ = self._portal.enter(self._async)
        self._runner_ = _Runner(portal, self._interrupt_timeout, self._drain)
        return self

    async def _drain(self, timeout: float) -> None:
        for client in self._async.clients.values():
            await client.session.drain_cancels(timeout)

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

    @property
    def _runner(self) -> _Runner:
        if self._runner_ is None:
            raise RuntimeError("the group is not open: use 'with ClientGroup(...)' or call open()")
        return self._runner_

    @property
    def async_group(self) -> AsyncClientGroup:
        """The async group underneath (its methods must run on the portal's event loop)."""
        return self._async

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

    @property
    def failures(self) -> dict[str, Exception]:
        """The servers that failed to start, and why."""
        return self._async.failures

    def status(self, name: str) -> ServerStatus:
        """Where server ``name`` is: starting, ready, failed, dead or closed."""
        return self._async.status(name)

    def policies(self, name: str) -> PolicyRegistry:
        """The rules server ``name``'s calls run under."""
        return self._async.policies(name)

    # -- tools -------------------------------------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, mcp_types.Tool]:
        """Every tool known from the last listing of each server, by qualified name ``server/tool``."""
        return self._async.tools

    def list_tools(self) -> dict[str, list[mcp_types.Tool]]:
        """List the tools of every running server, concurrently (see :meth:`mcp_client.ClientGroup.list_tools`)."""
        return self._runner.run(self._async.list_tools)

    def resolve(
        self,
        qualified: str,
        *,
        timeout: TimeoutArg | PartialTimeout = USE_CLIENT_DEFAULT,
        retry: RetryArg = USE_CLIENT_DEFAULT,
    ) -> tuple[TimeoutPolicy, RetryPolicy | None]:
        """The timeout and retry policies a call of ``server/tool`` would run under."""
        return self._async.resolve(qualified, timeout=timeout, retry=retry)

    def call_tool(
        self,
        qualified: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: TimeoutArg | PartialTimeout = USE_CLIENT_DEFAULT,
        retry: RetryArg = USE_CLIENT_DEFAULT,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
    ) -> mcp_types.CallToolResult:
        """Call tool ``server/tool`` under its rules (see :meth:`mcp_client.ClientGroup.call_tool`)."""
        return self._runner.run(
            self._async.call_tool,
            qualified,
            arguments,
            timeout=timeout,
            retry=retry,
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
    ) -> SyncCall[mcp_types.CallToolResult]:
        """A blocking handle on ``server/tool`` (see :class:`SyncCall`); use it with ``with``."""
        runner = self._runner
        call = runner.call_sync(
            lambda: self._async.tool_call(
                qualified,
                arguments,
                timeout=timeout,
                retry=retry,
                on_progress=on_progress,
                raise_on_error=raise_on_error,
            )
        )
        return SyncCall(runner, call)
