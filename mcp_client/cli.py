"""``mcp-client``: try MCP servers from a terminal, and see the client's timeout policy at work.

The command line is a thin host on top of :class:`mcp_client.Client`; it needs the ``cli`` extra
(``pip install 'mcp-policy-client[cli]'``, which brings in rich).

```
mcp-client demo [--fast] [--http | --url URL [--header 'Name: value']...]
    Start the bundled demo server and show, with real protocol traffic, how progress resets an idle timeout,
    how a silent call is cut by it, how a hard maximum ends a chatty call, and how Ctrl-C cancels a call cleanly.

mcp-client tools [--json] -- <command> [args...]
    Start a stdio server and list its tools: name, hints (read-only, idempotent...), first line of description.

mcp-client call <tool> '<json arguments>' [--idle S] [--max S] [--retries N] [--connect S] [--json] -- <command>
    Call one tool with a progress bar and print its result. Ctrl-C cancels the call on the wire.

mcp-client [--config mcp.json] tools [server] | call server/tool '<json>' [options]
mcp-client tools|call ... --url URL [--header 'Name: value']...
    The servers of an mcp.json (through a ClientGroup), or one Streamable HTTP endpoint, instead of a command.
```

Everything after ``--`` is the server command. Without ``--``, the server command is whatever follows the
positional arguments, so this CLI's own options must then come before them.

Exit codes (``tools`` and ``call``; ``demo`` uses 0, 1 and 130):

===  ======================================================================
0    success
1    the tool reported an error (``isError``); for ``demo``: a scene failed
2    usage error: bad options, arguments that are not a JSON object, rich missing, a bad ``--config`` file
3    ConnectError: the server could not be started or the session not set up (``--config``: the called server)
4    IdleTimeout: no sign of life from the server for ``--idle`` seconds
5    MaxTimeout: the call took longer than ``--max`` seconds
6    TransportError: the server process died or its pipes broke
7    ServerError: the server answered with a JSON-RPC error
8    ProtocolError: the server broke the protocol
130  cancelled by Ctrl-C (the cancellation is sent to the server)
===  ======================================================================
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import mcp_types

from mcp_client import (
    DEFAULT_TIMEOUT,
    Call,
    CancelSent,
    Client,
    ConnectError,
    Event,
    IdleTimeout,
    MaxTimeout,
    MCPClientError,
    Progress,
    ProtocolError,
    RequestCancelled,
    ServerError,
    ServerStderr,
    TimeoutPolicy,
    Transport,
    TransportError,
    http,
    stdio,
)
from mcp_client.config import ConfigError
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, UseClientDefault
from mcp_client.policy.retry import RetryPolicy
from mcp_client.registry import UNSET, PartialTimeout, Unset

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID
    from rich.table import Table

__all__ = ["EXIT_CODES", "main"]

EXIT_OK: Final = 0
EXIT_TOOL_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130

EXIT_CODES: Final[tuple[tuple[type[MCPClientError], int], ...]] = (
    (ConnectError, 3),
    (IdleTimeout, 4),
    (MaxTimeout, 5),
    (TransportError, 6),
    (ServerError, 7),
    (ProtocolError, 8),
)
"""The exit status of each error kind, most specific first (anything else: 1)."""

CTRL_C_REASON: Final = "User pressed Ctrl-C"
PROTOCOL_CHOICES: Final = ("auto", "2026-07-28", "2025-11-25")

_EPILOG = """\
exit codes:
  0    success
  1    the tool reported an error (isError); demo: a scene failed
  2    usage error (bad options, arguments not a JSON object); a bad --config file
  3    ConnectError (server did not start, or no session; with --config: that server)
  4    IdleTimeout (no sign of life for --idle seconds)
  5    MaxTimeout (the call outlived --max seconds)
  6    TransportError (the server died, or its pipes broke)
  7    ServerError (a JSON-RPC error from the server)
  8    ProtocolError (the server broke the protocol)
  130  cancelled by Ctrl-C (the server is told)

Everything after -- is the server command. Without --, the server command is what follows the positional
arguments, so options of mcp-client must come before those. With --url URL (Streamable HTTP) or --config PATH
(the servers of an mcp.json, tools addressed as server/tool) there is no server command.
"""


class UsageError(Exception):
    """A mistake on the command line that argparse cannot see (exit 2)."""


def exit_code(error: BaseException) -> int:
    """The exit status for an error a command ended with."""
    for error_class, code in EXIT_CODES:
        if isinstance(error, error_class):
            return code
    if isinstance(error, RequestCancelled) and error.reason == CTRL_C_REASON:
        return EXIT_INTERRUPTED
    return EXIT_TOOL_ERROR


def single_error(error: BaseException) -> BaseException:
    """The one error inside (nested) exception groups of one error each; the group itself otherwise."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


# -- events and Ctrl-C ---------------------------------------------------------------------------------------


class EventLog:
    """The client's ``on_event`` hook: keeps events (when asked) and the server's last stderr lines."""

    def __init__(self, *, keep: Callable[[Event], bool] | None = None, stderr_lines: int = 20) -> None:
        self.events: list[Event] = []
        """The events kept: all of them, or those ``keep`` accepts."""
        self.stderr: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._keep = keep
        self._waiters: list[_Waiter] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, ServerStderr):
            self.stderr.append(event.line)
        if self._keep is None or self._keep(event):
            self.events.append(event)
        for waiter in self._waiters:
            if waiter.found is None and waiter.predicate(event):
                waiter.found = event
                waiter.flag.set()

    def mark(self) -> int:
        """A position in the log, for :meth:`since`."""
        return len(self.events)

    def since(self, mark: int) -> list[Event]:
        """The events logged after ``mark``."""
        return self.events[mark:]

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float) -> Event | None:
        """The first kept event matching ``predicate``, or the next one to come within ``timeout`` seconds."""
        kept = next((event for event in self.events if predicate(event)), None)
        if kept is not None:
            return kept
        waiter = _Waiter(predicate, anyio.Event())
        self._waiters.append(waiter)
        try:
            with anyio.move_on_after(timeout):
                await waiter.flag.wait()
        finally:
            self._waiters.remove(waiter)
        return waiter.found


@dataclass
class _Waiter:
    predicate: Callable[[Event], bool]
    flag: anyio.Event
    found: Event | None = None


class Interrupts:
    """Ctrl-C, handled in a task through anyio's signal receiver (so cancellation stays structured).

    While :attr:`target` is set, the first Ctrl-C calls it (a command sets it to cancel its running call);
    otherwise, or on a second Ctrl-C, the command's whole :attr:`scope` is cancelled.
    """

    def __init__(self) -> None:
        self.scope: anyio.CancelScope | None = None
        self.target: Callable[[], None] | None = None
        self.pressed = 0
        self.aborted = False
        """Set when Ctrl-C cancelled the whole command."""

    async def watch(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with contextlib.ExitStack() as stack:
            try:
                signals = stack.enter_context(anyio.open_signal_receiver(signal.SIGINT))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                task_status.started()
                await anyio.sleep_forever()
                return
            task_status.started()
            async for _ in signals:
                self.pressed += 1
                target, self.target = self.target, None
                if target is not None:
                    target()
                elif self.scope is not None:
                    self.aborted = True
                    self.scope.cancel()


async def run_interruptible(body: Callable[[Interrupts], Awaitable[int]], interrupts: Interrupts) -> int:
    """Run ``await body(interrupts)`` with Ctrl-C watched; its exit code, or 130 if Ctrl-C stopped it."""
    code = EXIT_INTERRUPTED
    async with anyio.create_task_group() as task_group:
        await task_group.start(interrupts.watch)
        interrupts.scope = anyio.CancelScope()
        try:
            with interrupts.scope:
                code = await body(interrupts)
        finally:
            task_group.cancel_scope.cancel()
    return code


# -- progress display ----------------------------------------------------------------------------------------


def new_progress(console: Console, *, transient: bool) -> RichProgress:
    """A rich progress display: spinner, description, bar, details (done/total, rate, ETA, message), time."""
    from rich.progress import BarColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress
    from rich.text import Text

    class Spinner(SpinnerColumn):
        """A spinner while the call runs; the task's ``mark`` field once it ended."""

        def render(self, task: Task) -> Text:
            if task.stop_time is not None:
                return Text.from_markup(str(task.fields.get("mark", "-")))
            rendered = super().render(task)
            return rendered if isinstance(rendered, Text) else Text(" ")

    return RichProgress(
        Spinner(),
        TextColumn("{task.description}"),
        BarColumn(bar_width=30),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        transient=transient,
    )


class ProgressView:
    """One call's line in a rich progress display, fed with the call's :class:`~mcp_client.Progress` updates."""

    def __init__(self, progress: RichProgress, description: str) -> None:
        self._progress = progress
        self._task: TaskID = progress.add_task(description, total=None, detail="waiting for progress")
        self._started = time.monotonic()
        self.updates = 0
        self.last: Progress | None = None

    def update(self, update: Progress) -> None:
        self.updates += 1
        self.last = update
        self._progress.update(
            self._task,
            completed=update.progress,
            total=update.total,
            detail=describe(update, time.monotonic() - self._started),
        )

    def finish(self, description: str, *, ok: bool) -> None:
        """Stop the spinner and show how the call ended."""
        total = self.last.total if self.last is not None else None
        completed = self.last.progress if self.last is not None else 0
        changes: dict[str, Any] = {"mark": "[green]✔[/]" if ok else "[red]✘[/]"}
        if self.last is None:
            changes["detail"] = "no progress received"
        self._progress.update(
            self._task, description=description, total=total or completed or 1, completed=completed, **changes
        )
        self._progress.stop_task(self._task)


def describe(update: Progress, elapsed: float) -> str:
    """``3/8 2.1/s ETA 2s indexed 3/8``, or just the message (or value) when the total is unknown."""
    message = update.message or ""
    if update.total is None or update.total <= 0:
        return message or f"{update.progress:g}"
    parts = [f"{update.progress:g}/{update.total:g}"]
    if elapsed > 0 and update.progress > 0:
        rate = update.progress / elapsed
        parts.append(f"{rate:.1f}/s")
        parts.append(f"ETA {max(0.0, update.total - update.progress) / rate:.0f}s")
    if message:
        parts.append(message)
    return "  ".join(parts)


@contextlib.contextmanager
def progress_line(console: Console, description: str, *, transient: bool) -> Iterator[ProgressView]:
    """A progress display with one line, shown while the block runs."""
    with new_progress(console, transient=transient) as progress:
        yield ProgressView(progress, description)


# -- printing ------------------------------------------------------------------------------------------------


def print_error(console: Console, error: BaseException, log: EventLog | None = None) -> None:
    """An error the way a person wants to read it: kind, message, then the call's context."""
    from rich.markup import escape

    console.print(f"[bold red]{type(error).__name__}[/]: {escape(str(error))}", highlight=False)
    if isinstance(error, MCPClientError):
        context = []
        if error.method:
            context.append(f"method {error.method}")
        if error.request_ids:
            context.append("request id " + ", ".join(str(request_id) for request_id in error.request_ids))
        if error.elapsed is not None:
            context.append(f"after {error.elapsed:.2f} s")
        if error.last_progress is not None:
            context.append(f"last progress {error.last_progress:g}")
        if context:
            console.print("  " + ", ".join(context), style="dim", highlight=False)
    if log is not None and log.stderr and isinstance(error, ConnectError | TransportError):
        console.print("  the server's last stderr lines:", style="dim")
        for line in log.stderr:
            console.print("  | " + escape(line), style="dim", highlight=False)


def print_result(console: Console, result: mcp_types.CallToolResult) -> None:
    """Text blocks as text; other blocks summarised; structured content as JSON."""
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            console.out(block.text, highlight=False)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            console.out(f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4} bytes]", highlight=False)
        elif isinstance(block, mcp_types.ResourceLink):
            mime = f" ({block.mime_type})" if block.mime_type else ""
            console.out(f"[resource link: {block.uri}{mime}]", highlight=False)
        else:
            resource = block.resource
            mime = f" ({resource.mime_type})" if resource.mime_type else ""
            console.out(f"[resource: {resource.uri}{mime}]", highlight=False)
            if isinstance(resource, mcp_types.TextResourceContents):
                console.out(resource.text, highlight=False)
    if result.structured_content is not None:
        console.out(json.dumps(result.structured_content, indent=2, ensure_ascii=False), highlight=False)


def dump_json(value: Any) -> None:
    """Plain JSON on stdout (no colour, no wrapping), for other programs."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


# -- the tools and call commands -----------------------------------------------------------------------------


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
async def connected(server: ServerOptions, log: EventLog) -> AsyncIterator[Client]:
    """A client with its session set up; any failure to get there is a :class:`~mcp_client.ConnectError`."""
    if server.url is not None:
        transport: Transport = http(server.url, headers=server.headers)
    else:
        command, *args = server.command
        transport = stdio(command, args, env=server.env or None, inherit_env=server.inherit_env)
    client = Client(transport, timeout=server.policy, protocol=server.protocol, on_event=log)
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
        await client.aclose()


async def list_tools_command(server: ServerOptions, as_json: bool, out: Console, log: EventLog) -> int:
    async with connected(server, log) as client:
        tools = await client.list_tools()
        server_info = client.server_info
        version = client.protocol_version
    if as_json:
        dump_json({"tools": [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]})
        return EXIT_OK
    name = f"{server_info.name} {server_info.version}" if server_info is not None else "the server"
    out.print(tools_table(f"{len(tools)} tools of {name} (protocol {version})", [(tool.name, tool) for tool in tools]))
    return EXIT_OK


def tools_table(title: str, tools: Sequence[tuple[str, mcp_types.Tool]]) -> Table:
    """A table of tools (each under the name to show): name, hints, first line of the description."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("hints")
    table.add_column("description")
    for name, tool in tools:
        description = (tool.description or "").strip().splitlines()
        table.add_row(name, ", ".join(tool_hints(tool)), description[0] if description else "")
    return table


def tool_hints(tool: mcp_types.Tool) -> list[str]:
    """The annotations of a tool that are set to true, as short words."""
    annotations = tool.annotations
    if annotations is None:
        return []
    flags = (
        (annotations.read_only_hint, "read-only"),
        (annotations.idempotent_hint, "idempotent"),
        (annotations.destructive_hint, "destructive"),
        (annotations.open_world_hint, "open-world"),
    )
    return [word for flag, word in flags if flag]


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
    async with connected(server, log) as client:
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
            except RequestCancelled as exc:
                interrupts.target = None
                sent = await log.wait_for(lambda event: isinstance(event, CancelSent), 1.0)
                print_error(err, exc)
                err.print("  the server was told to stop" if sent else "  could not tell the server", style="dim")
                return exit_code(exc)
            finally:
                interrupts.target = None
    if as_json:
        dump_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
    else:
        print_result(out, result)
    if result.is_error:
        err.print(f"[bold red]the tool {tool!r} reported an error[/] (isError)", highlight=False)
        return EXIT_TOOL_ERROR
    return EXIT_OK


# -- command line --------------------------------------------------------------------------------------------


def seconds(value: str) -> float | None:
    """An option value in seconds; ``none`` for no limit."""
    if value.strip().lower() in ("none", "off", "inf"):
        return None
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not number > 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds (or 'none'): {value!r}")
    return number


def env_pair(value: str) -> tuple[str, str]:
    name, equals, setting = value.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {value!r}")
    return name, setting


def header_pair(value: str) -> tuple[str, str]:
    name, colon, setting = value.partition(":")
    if not colon or not name.strip():
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {value!r}")
    return name.strip(), setting.strip()


def retries(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value!r}")
    return number


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    """``--url`` and ``--header``: talk Streamable HTTP to an endpoint."""
    parser.add_argument("--url", metavar="URL", help="talk Streamable HTTP to this MCP endpoint (no server command)")
    parser.add_argument(
        "-H",
        "--header",
        type=header_pair,
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header for --url (repeatable)",
    )


def build_parser(*, with_command: bool) -> argparse.ArgumentParser:
    """The parser; ``with_command=False`` when the server command was split off at ``--`` already, or when there
    is none (``--config``, ``--url``)."""
    from mcp_client import __version__

    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="mcp-client",
        description="Try MCP servers from a terminal, and watch the client's timeout policy at work.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    config_help = "the servers of this mcp.json; tools and call then address them as server/tool"
    parser.add_argument("--config", metavar="PATH", help=config_help)
    commands = parser.add_subparsers(dest="subcommand", required=True, metavar="{demo,tools,call}")

    demo = commands.add_parser(
        "demo",
        help="see idle timeouts, maximums and Ctrl-C cancellation against the bundled demo server",
        description="Start the bundled demo server over stdio (or HTTP) and run four scenes with real protocol "
        "traffic.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    demo.add_argument("--fast", action="store_true", help="shorter durations (for tests and CI)")
    demo.add_argument("--http", action="store_true", help="serve the bundled demo peer over HTTP, in-process")
    add_endpoint_options(demo)

    server = argparse.ArgumentParser(add_help=False)
    server.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help=config_help)
    add_endpoint_options(server)
    server.add_argument("--protocol", choices=PROTOCOL_CHOICES, default="auto", help="protocol version (default auto)")
    server.add_argument(
        "--connect", type=seconds, default=UNSET, metavar="S", help="seconds to start (default 30, or the config's)"
    )
    server.add_argument(
        "-e", "--env", type=env_pair, action="append", default=[], metavar="NAME=VALUE", help="set for the server"
    )
    server.add_argument("--inherit-env", action="store_true", help="pass this whole environment to the server")
    server.add_argument("--json", action="store_true", help="print JSON instead of text")

    tools = commands.add_parser(
        "tools",
        parents=[server],
        help="list the tools of a server (or of the servers of --config)",
        usage="%(prog)s [options] -- <command> [args...]\n       %(prog)s [options] --url URL\n"
        "       %(prog)s --config PATH [options] [server]",
        description="List the tools of a stdio server, an HTTP endpoint, or every server of an mcp.json.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    call = commands.add_parser(
        "call",
        parents=[server],
        help="call one tool, with a progress bar",
        usage="%(prog)s [options] <tool> ['<json arguments>'] -- <command> [args...]\n"
        "       %(prog)s [options] <tool> ['<json arguments>'] --url URL\n"
        "       %(prog)s --config PATH [options] <server/tool> ['<json arguments>']",
        description="Call one tool with a progress bar and print its result. Ctrl-C cancels the call on the wire.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    call.add_argument("tool", help="the tool's name (server/tool with --config)")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments, a JSON object (default {})")
    call.add_argument(
        "--idle", type=seconds, default=UNSET, metavar="S", help="idle timeout (default 60, or the config's)"
    )
    call.add_argument(
        "--max", type=seconds, default=UNSET, metavar="S", help="hard maximum (default 600, or the config's)"
    )
    call.add_argument(
        "--retries", type=retries, default=None, metavar="N", help="retry up to N times (0: none); default policy"
    )
    if with_command:
        for subparser in (tools, call):
            subparser.add_argument("command", nargs=argparse.REMAINDER, help="the server command (after --)")
    else:
        tools.add_argument("server", nargs="?", help="with --config: list only this server's tools")
        for subparser in (tools, call):
            subparser.set_defaults(command=[])
    return parser


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv``; everything after the first ``--`` is the server command."""
    if "--" in argv:
        split = list(argv).index("--")
        options = build_parser(with_command=False).parse_args(argv[:split])
        if options.subcommand == "demo":
            raise UsageError("demo takes no server command")
        options.command = list(argv[split + 1 :])
    else:
        # --config and --url replace the server command, so mcp-client's options may then come anywhere
        no_command = any(arg.partition("=")[0] in ("--config", "--url") for arg in argv)
        options = build_parser(with_command=not no_command).parse_args(argv)
        command = getattr(options, "command", [])
        if command and command[0].startswith("-"):
            raise UsageError(
                f"{command[0]!r} is taken for the server command; put mcp-client's options before the tool "
                "name, or put -- before the server command"
            )
    check_sources(options)
    return options


def check_sources(options: argparse.Namespace) -> None:
    """Exactly one way to reach the server(s): a command, ``--url``, or ``--config``."""
    url: str | None = options.url
    if options.subcommand == "demo":
        if url is not None and options.http:
            raise UsageError("demo takes --url or --http, not both")
        if options.header and url is None:
            raise UsageError("--header goes with --url")
        return
    given = [name for name, value in (("--config", options.config), ("--url", url)) if value is not None]
    if options.command:
        given.append("a server command")
    if len(given) > 1:
        raise UsageError(f"give one of --config, --url or a server command, not {' and '.join(given)}")
    if not given:
        raise UsageError("no server command: add -- <command> [args...] (or --url URL, or --config PATH)")
    if (options.env or options.inherit_env) and not options.command:
        raise UsageError("-e/--env and --inherit-env apply to a server command only")
    if options.header and url is None:
        raise UsageError("--header goes with --url")
    if options.subcommand == "tools" and getattr(options, "server", None) is not None and options.config is None:
        raise UsageError("a server name after tools needs --config")


def json_arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"the tool arguments are not valid JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise UsageError(f'the tool arguments must be a JSON object, like \'{{"text": "hi"}}\', not {text!r}')
    return value


def print_usage_error(err: Console, error: UsageError) -> None:
    from rich.markup import escape

    err.print(f"[bold red]usage error[/]: {escape(str(error))}", highlight=False)


def print_config_error(err: Console, error: ConfigError) -> None:
    """Each problem of a configuration on a line of its own, with its JSON path."""
    from rich.markup import escape

    where = f" {error.source}" if error.source else ""
    err.print(f"[bold red]ConfigError[/]: the configuration{escape(where)} is not valid", highlight=False)
    for problem in error.problems:
        err.print(f"  {escape(str(problem))}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    """Run the ``mcp-client`` command line; return its exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        from rich.console import Console
    except ImportError:
        print("the CLI needs rich: pip install 'mcp-policy-client[cli]'", file=sys.stderr)
        return EXIT_USAGE
    out = Console()
    err = Console(stderr=True)
    try:
        options = parse_arguments(arguments)
        tool_arguments = json_arguments(options.arguments) if options.subcommand == "call" else {}
    except SystemExit as exc:  # argparse printed help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_OK if exc.code is None else EXIT_USAGE
    except UsageError as exc:
        print_usage_error(err, exc)
        return EXIT_USAGE

    interrupts = Interrupts()
    log = EventLog(keep=lambda event: isinstance(event, CancelSent))
    try:
        body = command_body(options, tool_arguments, out, err, log)
    except ConfigError as exc:
        print_config_error(err, exc)
        return EXIT_USAGE
    try:
        code = anyio.run(run_interruptible, body, interrupts)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BaseException as raised:
        error = single_error(raised)
        if isinstance(error, KeyboardInterrupt):
            code = EXIT_INTERRUPTED
        elif isinstance(error, UsageError):
            print_usage_error(err, error)
            return EXIT_USAGE
        elif isinstance(error, MCPClientError):
            print_error(err, error, log)
            return exit_code(error)
        else:
            raise
    if code == EXIT_INTERRUPTED and (interrupts.aborted or not interrupts.pressed):
        err.print("interrupted", style="bold red")
    return code


def command_body(
    options: argparse.Namespace, tool_arguments: dict[str, Any], out: Console, err: Console, log: EventLog
) -> Callable[[Interrupts], Awaitable[int]]:
    """The async part of the chosen command, to run under :func:`run_interruptible`.

    Raises:
        ConfigError: The ``--config`` file is not valid (checked before anything starts).
    """
    if options.subcommand == "demo":
        from mcp_client._cli_demo import run_demo

        fast: bool = options.fast
        url: str | None = "" if options.http else options.url  # "": serve the bundled peer over HTTP here
        headers = dict(options.header)
        return lambda interrupts: run_demo(interrupts, out, fast=fast, url=url, headers=headers)
    as_json: bool = options.json
    call_options = CallOptions(
        idle=getattr(options, "idle", UNSET),
        maximum=getattr(options, "max", UNSET),
        retries=getattr(options, "retries", None),
        as_json=as_json,
    )
    if options.config is not None:
        from mcp_client._cli_group import GroupOptions, group_call_command, group_tools_command, read_config

        connect: float | Unset | None = options.connect
        group = GroupOptions(read_config(options.config), options.protocol, connect)
        if options.subcommand == "tools":
            only: str | None = options.server
            return lambda interrupts: group_tools_command(group, only, as_json, out, err, log)
        qualified: str = options.tool
        return lambda interrupts: group_call_command(
            interrupts, group, qualified, tool_arguments, call_options, out, err, log
        )
    policy = DEFAULT_TIMEOUT if options.connect is UNSET else DEFAULT_TIMEOUT.replace(connect=options.connect)
    server = ServerOptions(
        options.command,
        dict(options.env),
        options.inherit_env,
        options.protocol,
        policy,
        url=options.url,
        headers=dict(options.header),
    )
    if options.subcommand == "tools":
        return lambda interrupts: list_tools_command(server, as_json, out, log)
    tool: str = options.tool
    return lambda interrupts: call_command(interrupts, server, tool, tool_arguments, call_options, out, err, log)


if __name__ == "__main__":
    sys.exit(main())
