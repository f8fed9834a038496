"""``mcp-client tools`` and ``mcp-client call`` against one server: a command, or a Streamable HTTP endpoint."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types

from mcp_client import (
    Call,
    CancelSent,
    Client,
    ConnectError,
    MCPClientError,
    RequestCancelled,
    RequestTimeout,
    TimeoutPolicy,
    Transport,
    http,
    stdio,
)
from mcp_client.cli.display import dump_json, print_error, print_result, progress_line, tools_table
from mcp_client.cli.interrupts import EventLog, Interrupts
from mcp_client.cli.outcome import CTRL_C_REASON, EXIT_OK, EXIT_TOOL_ERROR, exit_code, single_error
from mcp_client.cli.safe_text import markup, plain
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, UseClientDefault
from mcp_client.policy.registry import UNSET, PartialTimeout, Unset
from mcp_client.policy.retry import RetryPolicy

if TYPE_CHECKING:
    from rich.console import Console


SHUTDOWN_NOTICE_AFTER: Final = 0.5
"""Seconds of closing after which the CLI says it is waiting for the server to shut down."""

__all__ = [
    "CallOptions",
    "ServerOptions",
    "call_command",
    "connected",
    "follow_call",
    "list_tools_command",
    "note_shutdown_after_a_moment",
]


@dataclass(frozen=True)
class ServerOptions:
    """How to start and talk to the server of ``tools`` and ``call``."""

    command: list[str]
    env: dict[str, str]
    inherit_env: bool
    protocol: str
    policy: TimeoutPolicy
    url: str | None = None
    """Talk Streamable HTTP to this endpoint instead of starting ``command``."""
    headers: dict[str, str] = field(default_factory=dict)


@contextlib.asynccontextmanager
async def connected(server: ServerOptions, log: EventLog, notice: Console | None = None) -> AsyncIterator[Client]:
    """A client with its session set up; any failure to get there is a :class:`~mcp_client.ConnectError`.

    Leaving it closes the client; ``notice`` is told when that takes more than a moment."""
    if server.url is not None:
        transport: Transport = http(server.url, headers=server.headers)
    else:
        command, *args = server.command
        transport = stdio(command, args, env=server.env or None, inherit_env=server.inherit_env)
    client = Client(transport, timeout=server.policy, protocol=server.protocol, on_event=log)
    # The notice's task group is entered before the client, so that the client is left inside it (anyio scopes
    # nest: the client's own task group must be exited before any scope opened after it).
    async with anyio.create_task_group() as notices:
        try:
            await client.__aenter__()
        except BaseException as raised:  # Client.__aenter__ may wrap its error in exception groups
            error = single_error(raised)
            if isinstance(error, ConnectError):
                raise error from None
            if isinstance(error, MCPClientError):
                message = f"could not set up a session ({type(error).__name__}: {error})"
                raise ConnectError(message, method=error.method, request_ids=error.request_ids) from error
            raise
        try:
            yield client
        finally:
            if notice is not None:
                notices.start_soon(note_shutdown_after_a_moment, "the server", notice, client.transport.description)
            await client.aclose()
            notices.cancel_scope.cancel()


async def note_shutdown_after_a_moment(what: str, notice: Console, which: str | None = None) -> None:
    """Say that we are waiting for ``what`` to shut down, once closing has taken a moment (a server slow to exit).

    Start it when the closing starts, in a task group entered before what is closed; cancel it when that is done.
    """
    await anyio.sleep(SHUTDOWN_NOTICE_AFTER)
    shown = f" ({markup(which)})" if which else ""
    notice.print(f"waiting for {markup(what)} to shut down{shown}", style="dim", highlight=False)


async def stop_note(error: RequestCancelled | RequestTimeout, log: EventLog) -> str:
    """Whether the server was told to stop the call that ``error`` ended (its cancellation goes out in the
    background: wait a moment for it)."""
    if not error.request_ids:
        return "the request had not been sent: there was nothing to stop"
    ids = set(error.request_ids)
    sent = await log.wait_for(lambda event: isinstance(event, CancelSent) and event.request_id in ids, 1.0)
    return "the server was told to stop" if sent is not None else "could not tell the server to stop"


async def list_tools_command(
    server: ServerOptions, as_json: bool, out: Console, log: EventLog, err: Console | None = None
) -> int:
    async with connected(server, log, err) as client:
        tools = await client.list_tools()
        server_info = client.server_info
        version = client.protocol_version
    if as_json:
        dump_json({"tools": [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]})
        return EXIT_OK
    name = f"{server_info.name} {server_info.version}" if server_info is not None else "the server"
    out.print(tools_table(f"{len(tools)} tools of {name} (protocol {version})", [(tool.name, tool) for tool in tools]))
    return EXIT_OK


async def call_command(
    interrupts: Interrupts,
    server: ServerOptions,
    tool: str,
    arguments: dict[str, Any],
    options: CallOptions,
    out: Console,
    err: Console,
    log: EventLog,
) -> int:
    async with connected(server, log, err) as client:
        call = client.tool_call(tool, arguments, timeout=options.policy(server.policy), retry=options.retry_arg)
        return await follow_call(interrupts, call, tool, options.as_json, out, err, log)


@dataclass(frozen=True)
class CallOptions:
    """What ``call`` overrides for its one call: ``--idle``, ``--max``, ``--retries``; and ``--json``."""

    idle: float | Unset | None = UNSET
    maximum: float | Unset | None = UNSET
    retries: int | None = None
    as_json: bool = False

    @property
    def partial(self) -> PartialTimeout:
        """Only the fields given on the command line; the rest comes from the resolved policy."""
        return PartialTimeout(idle=self.idle, maximum=self.maximum)

    def policy(self, under: TimeoutPolicy) -> TimeoutPolicy:
        """The call's policy: ``under`` with the fields given on the command line."""
        return under.replace(**self.partial.set_fields)

    @property
    def retry(self) -> RetryPolicy | None:
        """``--retries N``: N retries after the first attempt; ``None`` when not given."""
        return None if self.retries is None else RetryPolicy(attempts=self.retries + 1)

    @property
    def retry_arg(self) -> RetryPolicy | UseClientDefault | None:
        return USE_CLIENT_DEFAULT if self.retries is None else self.retry


async def follow_call(
    interrupts: Interrupts,
    call_handle: Call[mcp_types.CallToolResult],
    tool: str,
    as_json: bool,
    out: Console,
    err: Console,
    log: EventLog,
) -> int:
    """Run a tool call with a progress bar on stderr (when a terminal), Ctrl-C cancelling it; print its result."""
    display = progress_line(err, tool, transient=True) if err.is_terminal else contextlib.nullcontext(None)
    with display as view:
        async with call_handle as call:
            interrupts.target = lambda: call.cancel(CTRL_C_REASON)
            async for update in call.progress():
                if view is not None:
                    view.update(update)
            try:
                result = await call.result()
            except (RequestCancelled, RequestTimeout) as exc:
                interrupts.target = None
                print_error(err, exc)
                err.print("  " + await stop_note(exc, log), style="dim", highlight=False)
                return exit_code(exc)
            finally:
                interrupts.target = None
    if as_json:
        dump_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
    else:
        print_result(out, result)
    if result.is_error:
        err.print(plain(f"the tool {tool!r} reported an error", "bold red"), "(isError)", highlight=False)
        return EXIT_TOOL_ERROR
    return EXIT_OK
