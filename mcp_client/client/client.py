"""The public client: connect to one MCP server and call its tools, prompts and resources under a policy.

``Client`` owns a task group (the transport's readers, background cancellations), a
:class:`~mcp_client.client.link.Link` (the one owner of its connection: the :class:`Session` on it, the wire, and
the :class:`~mcp_client.calls.CallRunner` over it, the life of each call), and the default :class:`TimeoutPolicy`.
Each method resolves the policy of the call (``timeout=`` omitted: the client's; ``None``: no limits; a number: that
many seconds of maximum), has the runner run it, and turns the result into the mcp-types model of the method.
"""

from __future__ import annotations

import enum
import weakref
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from functools import partial
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.abc
import mcp_types
from pydantic import BaseModel

from mcp_client._exit_stack import close_exit_stack
from mcp_client._log_guard import package_logger
from mcp_client._typed import typed_methods
from mcp_client._types import JSONObject
from mcp_client._version import __version__
from mcp_client.cache.partition import authorization_context, new_token, server_key
from mcp_client.cache.requests import CacheArg, CachedRequests
from mcp_client.cache.result_cache import ResultCache
from mcp_client.calls import CallOptions, CallRunner
from mcp_client.calls.in_flight_limit import InFlightLimit, check_max_in_flight, for_a_call
from mcp_client.calls.progress import ProgressCallback
from mcp_client.calls.runner import ConnectionOwner
from mcp_client.client.call import Call
from mcp_client.client.features import ServerFeatures
from mcp_client.client.link import Link
from mcp_client.client.listen import Listening
from mcp_client.client.output_schema import OutputValidator
from mcp_client.client.pins import PinnedTools
from mcp_client.client.server_view import ServerView
from mcp_client.client.start_failure import close_and_raise
from mcp_client.client.supervisor import SupervisedLink
from mcp_client.client.task_reference import Resuming
from mcp_client.client.tasks import TaskMethods, TaskPolicy
from mcp_client.client.tool_pins import ToolPins
from mcp_client.client.tools import ToolPath
from mcp_client.errors import ConnectError
from mcp_client.events import Event
from mcp_client.extensions import ExtensionsArg, with_extensions
from mcp_client.policy import DEFAULT_TIMEOUT, TimeoutPolicy
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg, UseClientDefault
from mcp_client.policy.registry import PolicyRegistry, RetryArg, with_retry_rules
from mcp_client.policy.retry import DEFAULT_RETRY, RetryBudget, RetryPolicy
from mcp_client.policy.timeout import as_timeout_policy
from mcp_client.policy.tool_filter import ToolFilter
from mcp_client.protocol import negotiate
from mcp_client.protocol.logs import LogLevel
from mcp_client.protocol.negotiate import ProtocolMode, ServerIdentity
from mcp_client.protocol.results import idempotent_hint
from mcp_client.protocol.tool_headers import HeaderParam, filter_tools, header_values
from mcp_client.session.handlers import ElicitationHandler, InputHandlers, RootsHandler, SamplingHandler
from mcp_client.session.server_requests import DEFAULT_MAX_SERVER_REQUESTS, check_max_server_requests
from mcp_client.session.session import Session
from mcp_client.transports.base import Transport

__all__ = ["USE_CLIENT_DEFAULT", "Client", "ClientState", "TimeoutArg", "UseClientDefault"]

logger = package_logger("mcp_client")

ModelT = TypeVar("ModelT", bound=BaseModel)


class ClientState(enum.Enum):
    """Where a :class:`Client` is in its life (as httpx's ``ClientState``): it is entered once and closed once."""

    UNOPENED = 1
    """Made, not entered yet (or its ``__aenter__`` failed: it may be entered again)."""
    OPENED = 2
    """Entered: connected until :meth:`Client.aclose`."""
    CLOSED = 3
    """Closed: it cannot be entered again."""


class Client(ServerView, ServerFeatures, Listening, TaskMethods, ToolPath, Resuming, PinnedTools):
    """A connection to one MCP server.

    ```python
    async with Client(stdio("python", ["server.py"]), timeout=TimeoutPolicy(idle=30, maximum=600)) as client:
        result = await client.call_tool("reindex", {"collection": "docs"}, on_progress=print)
    ```

    Args:
        transport: How to reach the server: :func:`~mcp_client.stdio`, :func:`~mcp_client.http`, or
            :func:`~mcp_client.memory` in tests.
        timeout: The default policy of every call (``None``: no limits; a number: that maximum over the
            defaults). Its ``connect`` field bounds start-up.
        protocol: ``"auto"`` (probe with ``server/discover`` at 2026-07-28, fall back to ``initialize``) or one
            protocol version to use without probing.
        client_info: ``name``/``version`` (and optional ``title``...) this client reports to servers.
        on_event: Called with every :mod:`~mcp_client.events` event as it happens; must be quick, must not block.
        progress_interval: Minimum seconds between two progress deliveries to a callback or iterator.
        probe_timeout: Seconds to wait for an answer to ``server/discover`` before taking the server for legacy.
        cancel_timeout: Seconds allowed for putting one cancellation on the wire (in the background).
        retry: The default :class:`~mcp_client.RetryPolicy` (``None``: no retries). Only safe cases are retried.
        policies: A :class:`~mcp_client.PolicyRegistry` of rules by tool name, glob and annotation, and the
            server's level, over ``timeout`` and ``retry``.
        retry_rules: Shorthand for tool rules that set only a retry policy: ``{"reindex*": RetryPolicy(...)}``.
        elicitation: Answers the server's questions to the user (``elicitation/create``); declares the capability.
        sampling: Runs the host's model for the server (``sampling/createMessage``); declares the capability.
        roots: Lists the roots the host exposes (``roots/list``); declares the capability.
        max_input_rounds: Most ``input_required`` rounds one call may take (2026-07-28).
        meta_hook: Called as ``meta_hook(method, params)`` before each call is sent, to add ``_meta`` entries
            (W3C trace context, for example).
        extensions: Client extensions to declare in the capabilities: ``{"io.modelcontextprotocol/skills": {}}``.
        validate_output: Check ``structuredContent`` against the tool's ``outputSchema`` (StructuredOutputError).
        cache: Keep cacheable results while fresh (ttlMs): ``True``, ``False``, or a shared ``ResultCache``.
        cache_partition: The host's name for this client's user: its ``private`` cache entries are shared with
            every client of the same partition, and with no other (default: the sign-in, see docs/caching.md).
        tasks: Task-backed tool calls, a :class:`~mcp_client.TaskPolicy` (on by default; ``False``: none at all).
        max_in_flight: Most calls in flight to the server at once (``None``: no limit); the others wait in line,
            inside their maximum, before anything is sent (:mod:`mcp_client.calls.in_flight_limit`).
        pin_tools: Refuse a call to a tool whose listed definition changed since it was pinned (``ToolChanged``)
            until :meth:`accept_tool_change`; off, a change is only reported (``ToolDefinitionChanged``).
        tool_pins: Pins to start from (``ToolPins.load(saved)``; ``strict=True`` also refuses the tools they do not
            name); by default each tool's first listing.
        tool_filter: The tools offered and callable (:class:`~mcp_client.config.ToolFilter`; a group gives each
            server's its own): the others are left out of listings and refused (``ToolNotAllowed``, nothing sent).
        max_server_requests: Most of the server's requests (2025-11-25: elicitation, sampling, roots) whose handlers
            run at once; the others wait their turn. At most eight times as many are answered at once in all
            (``ping`` too); beyond, a request is dropped unanswered and reported as a ``ProtocolViolation``.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: TimeoutPolicy | float | None = DEFAULT_TIMEOUT,
        protocol: ProtocolMode = "auto",
        client_info: Mapping[str, Any] | None = None,
        on_event: Callable[[Event], None] | None = None,
        progress_interval: float | None = None,
        probe_timeout: float = 5.0,
        cancel_timeout: float = 5.0,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        policies: PolicyRegistry | None = None,
        retry_rules: Mapping[str, RetryPolicy | None] | None = None,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsHandler | None = None,
        max_input_rounds: int = 10,
        meta_hook: Callable[[str, JSONObject], None] | None = None,
        extensions: ExtensionsArg | None = None,
        validate_output: bool = True,
        cache: ResultCache | bool = True,
        cache_partition: str | None = None,
        tasks: bool | TaskPolicy = True,
        max_in_flight: int | None = None,
        pin_tools: bool = False,
        tool_pins: ToolPins | None = None,
        tool_filter: ToolFilter | None = None,
        max_server_requests: int = DEFAULT_MAX_SERVER_REQUESTS,
    ) -> None:
        self.transport = transport
        self.timeout = as_timeout_policy(timeout)
        self.protocol = protocol
        default_info = {"name": "mcp-client", "version": __version__}
        self.client_info = dict(client_info) if client_info is not None else default_info
        self.retry = retry
        self.policies = with_retry_rules(policies, retry_rules).with_defaults(self.timeout, retry)
        """The rules that give each call its policies: call > tool > annotation > server > client default."""
        self.retry_budget = RetryBudget()
        """Shared by every call of this client: retries stop while most recent attempts fail."""
        self.max_input_rounds = max_input_rounds
        limit = check_max_in_flight(max_in_flight)
        check_max_server_requests(max_server_requests)
        self._max_server_requests = max_server_requests
        self._in_flight_limit = InFlightLimit(limit) if limit is not None else None
        self._init_pins(pin_tools, tool_pins, tool_filter)
        self.meta_hook = meta_hook
        """Called as ``meta_hook(method, params)`` before each call is sent, on the calling task; it may add keys
        to ``params["_meta"]`` (``Tracing.meta_hook`` puts the W3C ``traceparent`` there)."""
        self._on_event = on_event
        self._progress_interval = progress_interval
        self._probe_timeout = probe_timeout
        self._cancel_timeout = cancel_timeout
        self._handlers = InputHandlers(elicitation=elicitation, sampling=sampling, roots=roots)
        self._capabilities = self._init_tasks(tasks, with_extensions(self._handlers.capabilities(), extensions))
        self._annotations: dict[str, mcp_types.ToolAnnotations | None] = {}
        self._header_params: dict[str, tuple[HeaderParam, ...]] = {}
        self._output_schemas: dict[str, dict[str, Any] | None] = {}
        self._output = OutputValidator() if validate_output else None
        shared = cache if isinstance(cache, ResultCache) else (ResultCache() if cache else None)
        token = new_token()  # this client's identity as a cache owner: never reused, unlike id(self)
        context = authorization_context(transport, token, cache_partition)
        self._cached = CachedRequests(shared, server_key(transport, token), context, self._now)
        if shared is not None:
            shared.add_listener(self._on_cache_invalidated)
        self._log_level: LogLevel | None = None
        self._state = ClientState.UNOPENED
        self._stack: AsyncExitStack | None = None
        self._entering: anyio.Event | None = None
        """Set while ``__aenter__`` connects: an ``aclose()`` from another task meanwhile waits for it."""
        self._close_requested = False
        self._owner_task: int | None = None  # the task that entered the client: the one that can close it
        self._task_group: anyio.abc.TaskGroup | None = None
        restart = getattr(transport, "restart", None)  # stdio that heals: see client/supervisor.py
        self._link: Link = (
            SupervisedLink(
                transport,
                restart,
                new_runner=self._new_runner,
                start_session=self._start_session,
                cancel_timeout=cancel_timeout,
            )
            if restart is not None
            else Link(
                transport, new_runner=self._new_runner, start_session=self._start_session, cancel_timeout=cancel_timeout
            )
        )
        """The one owner of the connection: the session, the runner of calls, the server's identity, renewal."""
        self._calls: weakref.WeakSet[Call[Any]] = weakref.WeakSet()
        self._plain_calls = 0  # call_tool() calls running (handles are in _calls)
        self._options_by_tool: dict[str | None, CallOptions] = {}
        """The last options made for each tool (None: not a tool call), reused while a call resolves the same."""

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        if self._state is ClientState.OPENED:
            raise RuntimeError("a Client can be entered only once")
        if self._state is ClientState.CLOSED:
            raise RuntimeError("Cannot reopen a Client: a closed Client cannot be entered again (make a new one)")
        stack = AsyncExitStack()
        await stack.__aenter__()
        self._state = ClientState.OPENED
        self._close_requested = False
        entered = self._entering = anyio.Event()
        try:
            task_group = await stack.enter_async_context(anyio.create_task_group())
            self._task_group = task_group
            # Unwinds last-in first-out: after the connection is shut down, end what is left in the task group.
            stack.callback(task_group.cancel_scope.cancel)
            await self._link.open(task_group, stack)  # connected and negotiated (or raises)
            self._connect_tasks(self._calls_runner, task_group, self._handlers, self._cancel_timeout, stack)
            if self._close_requested:  # aclose() came as the connection was made: it is undone below
                raise ConnectError(f"{self.transport.description!r}: the client was closed while connecting")
        except BaseException as exc:
            self._task_group = None
            closed = self._close_requested
            # (as before: a client that failed to connect may be entered again; one closed meanwhile may not)
            self._state = ClientState.CLOSED if closed else ClientState.UNOPENED
            self._closed = closed
            if closed and isinstance(exc, anyio.get_cancelled_exc_class()):
                # Our own aclose() cancelled the task group's scope: its unwinding below takes that cancellation.
                exc = ConnectError(f"{self.transport.description!r}: the client was closed while connecting")
            # Close without handing the error to the task group, which would wrap it in an exception group.
            # (The transports shield their own clean-up; a scope here would break the task group's nesting.)
            try:
                await close_and_raise(stack, exc, self.transport.description)
            finally:
                self._entering = None
                entered.set()
        self._stack = stack
        self._owner_task = anyio.get_current_task().id
        self._entering = None
        entered.set()
        return self

    def _new_runner(self, owner: ConnectionOwner) -> CallRunner:
        """A session (not connected yet) and a runner of this client's calls over it, owned by ``owner`` (the
        client's link: it alone calls this)."""
        assert self._task_group is not None
        # (what a handler calls is done for a call: it takes no slot, see calls/in_flight_limit.py)
        input_handler = for_a_call(self._handlers.handle) if self._handlers.any else None
        session = Session(
            task_group=self._task_group,
            emit=self._on_event,
            cancel_timeout=self._cancel_timeout,
            input_handler=input_handler,
            on_notification=self._on_notification,
            max_server_requests=self._max_server_requests,
        )
        return CallRunner(
            session,
            budget=self.retry_budget,
            max_rounds=self.max_input_rounds,
            progress_interval=self._progress_interval,
            input_handler=input_handler,
            in_flight_limit=self._in_flight_limit,
            owner=owner,
        )

    async def _start_session(self, runner: CallRunner) -> ServerIdentity:
        connect = self.policies.server_timeout.connect
        with anyio.move_on_after(connect if connect is not None else float("inf")) as scope:
            return self._remember_discovery(
                await negotiate.start(
                    runner,
                    mode=self.protocol,
                    cache_key=self.transport.era_cache_key,
                    handshake_only=self.transport.handshake_only,
                    client_info=self.client_info,
                    capabilities=self._capabilities,
                    probe_timeout=self._probe_timeout,
                )
            )
        assert scope.cancelled_caught
        raise ConnectError(f"could not start a session with {self.transport.description!r} within {connect:g} s")

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel the calls still running in the background (on the wire too), then shut the connection down
        (for stdio: close stdin, then SIGTERM, then SIGKILL, all bounded)."""
        entering = self._entering
        if entering is not None:
            # __aenter__ is connecting in another task: its own task unwinds what it opened (a task group and
            # cancel scopes are left by the task that entered them); cancel it and wait until it did.
            self._close_requested = True
            if self._task_group is not None:
                self._task_group.cancel_scope.cancel()
            await entering.wait()
        if self._stack is not None and anyio.get_current_task().id != self._owner_task:
            # Its task group and cancel scopes can be left only by the task that entered them.
            raise RuntimeError(
                "a Client is closed by the task that entered it (its task group is that task's); from another task, "
                "end the work of that task instead (cancel its scope)"
            )
        stack, self._stack = self._stack, None
        if stack is None:
            return  # never entered, closed already, or its entry was ended above (and left it CLOSED)
        self._state = ClientState.CLOSED
        background = [call for call in self._calls if not call.done]
        for call in background:
            call.stop("the client is closing")  # (a detached call's task is left running on the server)
        try:
            with anyio.move_on_after(self._cancel_timeout):
                await self._close_tasks("the client is closing", self._cancel_timeout)  # calls awaited elsewhere too
                for call in background:
                    await call.wait()
            await close_exit_stack(stack)
        finally:
            self._closed = True  # from now on every use says the client is closed

    # -- policy ------------------------------------------------------------------------------------------------

    def resolve(
        self, tool: str | None = None, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, retry: RetryArg = USE_CLIENT_DEFAULT
    ) -> tuple[TimeoutPolicy, RetryPolicy | None]:
        """The timeout and retry policies a call runs under: the call's own arguments, else the rules of
        :attr:`policies` for the tool (by name, then by the annotations ``list_tools()`` reported), else the
        server's and the client's defaults."""
        return self.policies.resolve(
            tool, self._annotations.get(tool) if tool else None, call_timeout=timeout, call_retry=retry
        )

    def resolve_timeout(self, timeout: TimeoutArg) -> TimeoutPolicy:
        """The policy a request that is no tool call runs under with this ``timeout=`` argument."""
        return self.resolve(None, timeout=timeout)[0]

    def is_idempotent(self, tool: str) -> bool:
        """What ``tools/list`` said: True for a tool annotated ``idempotentHint`` or ``readOnlyHint``."""
        return idempotent_hint(self._annotations.get(tool))

    async def request(
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
        """Send any request and return its raw ``result`` object (for methods without a helper here).

        ``idempotent`` says whether the request may be sent twice if it may have run (then ``retry`` applies).
        ``log_level``: as for :meth:`call_tool`.
        """
        started_at = self.session.clock()  # the maximum counts from the caller's call, not from our bookkeeping
        own_params = dict(params) if params is not None else {}  # hooks may add to it; the caller's stays as given
        self._stamp_log_level(own_params, log_level)
        options = self._call_options(method, own_params, timeout, retry, idempotent)
        return await self._calls_runner.run(method, own_params, options, started_at=started_at, on_progress=on_progress)

    def _call_options(
        self, method: str, params: JSONObject, timeout: TimeoutArg, retry: RetryArg, idempotent: bool | None = None
    ) -> CallOptions:
        """The call's options, decided once, after the meta hook saw ``params`` (the client's own dict): its
        policies (:meth:`resolve`), its tool headers, and whether it may run twice (``None``: a tool call, for
        which ``tools/list`` says). The client's calls renew a session the server ended. A call that resolves to
        what the last call of the same tool did reuses its value (no allocation per call).

        Every send of a ``tools/call`` takes its options here (a first send, a send again after a header mismatch,
        ``request("tools/call")``), so this is where ``pin_tools`` refuses a tool whose definition changed: here,
        and again right before each write (``CallOptions.before_send``), whatever the call waited for meanwhile."""
        name = params.get("name") if method == "tools/call" else None
        tool = name if isinstance(name, str) else None
        if tool is not None:
            self._check_callable(tool)
        if self.meta_hook is not None:
            self.meta_hook(method, params)
        policy, retry_policy = self.resolve(tool, timeout=timeout, retry=retry)
        headers = self._tool_headers(tool, params.get("arguments")) if tool is not None else None
        if idempotent is None:  # (only retries ask)
            idempotent = retry_policy is not None and tool is not None and self.is_idempotent(tool)
        last = self._options_by_tool.get(tool)
        if (
            last is not None
            and headers is None
            and last.policy is policy
            and last.retry is retry_policy
            and last.idempotent is idempotent
        ):
            return last
        # The pin is checked again right before each write: a listing may show the tool changed while the call
        # waits (for a slot, a renewal, the listing it needs), and what the client knows then decides.
        before_send = partial(self._check_callable, tool) if tool is not None and self._enforce_pins else None
        options = CallOptions(policy, retry_policy, idempotent, headers, renews=True, before_send=before_send)
        if headers is None:  # (a call's own headers are its own)
            if len(self._options_by_tool) >= 256:
                self._options_by_tool.clear()
            self._options_by_tool[tool] = options
        return options

    def _on_notification(self, method: str, params: JSONObject) -> None:
        self._task_status_hint(method, params)
        if self._cached.cache is not None:  # (its listener forgets the tool hints)
            self._cached.cache.on_notification(method, params, server=self._cached.server)
        elif method == "notifications/tools/list_changed":
            self._forget_tool_hints()

    @property
    def _sends_tool_headers(self) -> bool:
        """``Mcp-Param-*`` headers: where the era stamps them (2026-07-28) and the transport carries them (HTTP)."""
        return self.transport.carries_headers and self.era.param_headers

    def _tool_headers(self, tool: str, arguments: object) -> dict[str, str] | None:
        params = self._header_params.get(tool)
        if not params or not self._sends_tool_headers:
            return None
        return header_values(params, arguments if isinstance(arguments, Mapping) else None)

    # -- tools --------------------------------------------------------------------------------------------------

    async def list_tools(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> list[mcp_types.Tool]:
        """Every tool, all pages (fresh ones from the cache unless ``cache`` says otherwise); the tool hints."""
        pages = self._paginate("tools/list", mcp_types.ListToolsResult, timeout, cache)
        tools = self._offered([tool for page in [p async for p in pages] for tool in page.tools])
        if self._sends_tool_headers:
            # The spec: a tool whose x-mcp-header annotations are invalid is left out of the listing, with a warning.
            tools, self._header_params = filter_tools(tools, lambda t: t.input_schema, lambda t: t.name, logger.warning)
        self._observe_tools(tools)
        self._annotations = {tool.name: tool.annotations for tool in tools}
        self._output_schemas = {tool.name: tool.output_schema for tool in tools}
        self._learn_task_support(tools)
        return tools


typed_methods(Client)  # every public coroutine method (its mixins' too): failures typed, never an exception group
typed_methods(Call)  # the handle's result, its async with
