"""The blocking methods of one connected client and of a call handle, as :mod:`mcp_client.sync.client` offers them.

:class:`ClientView` spells out every method of :class:`mcp_client.Client` again, each running its async twin
through a :class:`~mcp_client.sync.portal.PortalRunner` (see the design notes: the copies keep their signatures and
docstrings for type checkers and the API reference; a test keeps the two surfaces in step). :class:`SyncCall` does
the same for the call handle. Import them from :mod:`mcp_client.sync.client`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Generic, TypeVar

import mcp_types
from anyio.from_thread import BlockingPortal

from mcp_client._types import JSONObject
from mcp_client.cache.requests import CacheArg
from mcp_client.cache.result_cache import ResultCache
from mcp_client.calls.progress import ProgressCallback
from mcp_client.client.call import Call
from mcp_client.client.client import Client as AsyncClient
from mcp_client.client.task_reference import TaskReference
from mcp_client.client.tool_pins import ToolPins
from mcp_client.policy import Progress, TimeoutPolicy
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.policy.registry import RetryArg
from mcp_client.policy.retry import RetryPolicy
from mcp_client.protocol.completion import CompletionRef
from mcp_client.protocol.era import Era
from mcp_client.protocol.logs import LogLevel
from mcp_client.protocol.tasks import Task
from mcp_client.subscriptions import ListenPolicy
from mcp_client.sync.portal import PortalRunner
from mcp_client.sync.subscription import SyncSubscription
from mcp_client.transports.base import Transport

__all__ = ["ClientView", "SyncCall"]

ResultT = TypeVar("ResultT")


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

    def __init__(self, runner: PortalRunner, call: Call[ResultT]) -> None:
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
    def method(self) -> str:
        """The MCP method of the call (``tools/call``)."""
        return self._call.method

    @property
    def policy(self) -> TimeoutPolicy:
        """The timeout policy the call runs under."""
        return self._call.policy

    def detach(self) -> SyncCall[ResultT]:
        """Let the call outlive its ``with`` block: it runs on (its maximum still holds) until it ends or the client
        closes; call :meth:`result` later, from any thread. A task-backed call's task is left running when the call
        stops here; only :meth:`cancel` cancels it. Returns the call."""
        self._runner.call_sync(self._call.detach)
        return self

    @property
    def detached(self) -> bool:
        """True once :meth:`detach` was called."""
        return self._call.detached

    @property
    def done(self) -> bool:
        """True once the call ended, with a result or an error."""
        return self._call.done

    @property
    def request_ids(self) -> tuple[int | str, ...]:
        """The JSON-RPC ids this call has used so far."""
        return self._call.request_ids

    @property
    def task_id(self) -> str | None:
        """The server's task id when it runs this call as a task (None until it made one, or if it did not)."""
        return self._call.task_id

    def handoff(self) -> TaskReference | None:
        """Wait until the server answered the call: the reference of the task it made, or None (see
        :meth:`mcp_client.Call.handoff`)."""
        return self._runner.run(self._call.handoff)

    def cancel(self, reason: str = "cancelled by the client") -> None:
        """End the call; the server is told (a task gets ``tasks/cancel``). Safe from any thread, more than once,
        or after the end."""
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
    _runner_: PortalRunner | None

    def __init__(self, client: AsyncClient, runner: PortalRunner | None) -> None:
        self._async = client
        self._runner_ = runner

    @property
    def _runner(self) -> PortalRunner:
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

    @property
    def tool_pins(self) -> ToolPins:
        """Each tool's pinned definition (see :attr:`mcp_client.Client.tool_pins`)."""
        return self._async.tool_pins

    def accept_tool_change(self, name: str) -> None:
        """Pin tool ``name``'s definition as last listed (see :meth:`mcp_client.Client.accept_tool_change`)."""
        self._async.accept_tool_change(name)

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

    def list_tools(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True) -> list[mcp_types.Tool]:
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

    def list_prompts(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> list[mcp_types.Prompt]:
        """Every prompt of the server, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        return self._runner.run(self._async.list_prompts, timeout=timeout, cache=cache)

    def listen(
        self,
        *,
        tools: bool | None = None,
        prompts: bool | None = None,
        resources: bool | None = None,
        resource_uris: Iterable[str] = (),
        policy: ListenPolicy | None = None,
    ) -> SyncSubscription:
        """A blocking handle on a subscription to the server's changes (see :class:`SyncSubscription`); the
        arguments are those of :meth:`mcp_client.Client.listen` (naming a kind asks for exactly the kinds named)."""
        runner = self._runner
        subscription = runner.call_sync(
            lambda: self._async.listen(
                tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris, policy=policy
            )
        )
        return SyncSubscription(runner, subscription)

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT
    ) -> mcp_types.GetPromptResult:
        """Get a prompt, filled in with ``arguments``."""
        return self._runner.run(self._async.get_prompt, name, arguments, timeout=timeout)

    def list_resources(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> list[mcp_types.Resource]:
        """Every resource of the server, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        return self._runner.run(self._async.list_resources, timeout=timeout, cache=cache)

    def read_resource(
        self, uri: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> mcp_types.ReadResourceResult:
        """Read a resource (from the cache while it is fresh, unless ``cache=False``)."""
        return self._runner.run(self._async.read_resource, uri, timeout=timeout, cache=cache)

    def list_resource_templates(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> list[mcp_types.ResourceTemplate]:
        """Every resource template, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        return self._runner.run(self._async.list_resource_templates, timeout=timeout, cache=cache)

    # -- the rest of what a host calls ------------------------------------------------------------------------

    @property
    def cache(self) -> ResultCache | None:
        """The result cache (see :attr:`mcp_client.Client.cache`)."""
        return self._async.cache

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

    def discover(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True) -> mcp_types.DiscoverResult:
        """What the server says of itself (see :meth:`mcp_client.Client.discover`)."""
        return self._runner.run(self._async.discover, timeout=timeout, cache=cache)

    def ping(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Check that the server answers (see :meth:`mcp_client.Client.ping`)."""
        self._runner.run(self._async.ping, timeout=timeout)

    def set_log_level(self, level: LogLevel, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Ask for the server's log messages at ``level`` and above (see :meth:`mcp_client.Client.set_log_level`)."""
        self._runner.run(self._async.set_log_level, level, timeout=timeout)

    def task_result(
        self, task_id: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, raise_on_error: bool = False
    ) -> mcp_types.CallToolResult:
        """Pick up a task by its id and poll it to its end: its result, or its typed error."""
        return self._runner.run(self._async.task_result, task_id, timeout=timeout, raise_on_error=raise_on_error)

    @property
    def endpoint(self) -> str:
        """This client's server as a :class:`~mcp_client.TaskReference` names it."""
        return self._async.endpoint

    def check_reference(self, reference: TaskReference) -> None:
        """Raise ``ValueError`` unless ``reference`` is a task of this client's server, in this protocol era."""
        self._async.check_reference(reference)

    def resume(
        self,
        reference: TaskReference,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
        raise_on_error: bool = False,
        leave_running: Callable[[], bool] | None = None,
    ) -> mcp_types.CallToolResult:
        """Await the task ``reference`` names to its end (see :meth:`mcp_client.Client.resume`)."""
        return self._runner.run(
            self._async.resume, reference, timeout=timeout, raise_on_error=raise_on_error, leave_running=leave_running
        )

    def get_task(self, task_id: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> Task:
        """The task's current state (one ``tasks/get``)."""
        return self._runner.run(self._async.get_task, task_id, timeout=timeout)

    def cancel_task(self, task_id: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Ask the server to cancel a task (``tasks/cancel``)."""
        self._runner.run(self._async.cancel_task, task_id, timeout=timeout)
