"""``mcp-client``: try MCP servers from a terminal, and see the client's timeout policy at work.

The command line is a thin host on top of :class:`mcp_client.Client`; it needs the ``cli`` extra
(``pip install 'mcp-client[cli]'``, which brings in rich).

```
mcp-client demo [--fast]
    Start the bundled demo server and show, with real protocol traffic, how progress resets an idle timeout,
    how a silent call is cut by it, how a hard maximum ends a chatty call, and how Ctrl-C cancels a call cleanly.

mcp-client tools [--json] -- <command> [args...]
    Start a stdio server and list its tools: name, hints (read-only, idempotent...), first line of description.

mcp-client call <tool> '<json arguments>' [--idle S] [--max S] [--connect S] [--json] -- <command> [args...]
    Call one tool with a progress bar and print its result. Ctrl-C cancels the call on the wire.
```

Everything after ``--`` is the server command. Without ``--``, the server command is whatever follows the
positional arguments, so this CLI's own options must then come before them.

Exit codes (``tools`` and ``call``; ``demo`` uses 0, 1 and 130):

===  ======================================================================
0    success
1    the tool reported an error (``isError``); for ``demo``: a scene failed
2    usage error: bad options, arguments that are not a JSON object, rich missing
3    ConnectError: the server could not be started or the session not set up
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import mcp_types

from mcp_client import (
    DEFAULT_TIMEOUT,
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
    TransportError,
    stdio,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

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
  2    usage error (bad options, arguments not a JSON object)
  3    ConnectError (server did not start, or no session)
  4    IdleTimeout (no sign of life for --idle seconds)
  5    MaxTimeout (the call outlived --max seconds)
  6    TransportError (the server died, or its pipes broke)
  7    ServerError (a JSON-RPC error from the server)
  8    ProtocolError (the server broke the protocol)
  130  cancelled by Ctrl-C (the server is told)

Everything after -- is the server command. Without --, the server command is what follows the positional
arguments, so options of mcp-client must come before those.
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


@contextlib.asynccontextmanager
async def connected(server: ServerOptions, log: EventLog) -> AsyncIterator[Client]:
    """A client with its session set up; any failure to get there is a :class:`~mcp_client.ConnectError`."""
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
    from rich.table import Table

    name = f"{server_info.name} {server_info.version}" if server_info is not None else "the server"
    table = Table(title=f"{len(tools)} tools of {name} (protocol {version})", title_justify="left")
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("hints")
    table.add_column("description")
    for tool in tools:
        description = (tool.description or "").strip().splitlines()
        table.add_row(tool.name, ", ".join(tool_hints(tool)), description[0] if description else "")
    out.print(table)
    return EXIT_OK


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
    as_json: bool,
    out: Console,
    err: Console,
    log: EventLog,
) -> int:
    async with connected(server, log) as client:
        display = progress_line(err, tool, transient=True) if err.is_terminal else contextlib.nullcontext(None)
        with display as view:
            async with client.tool_call(tool, arguments) as call:
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


def build_parser(*, with_command: bool) -> argparse.ArgumentParser:
    """The parser; ``with_command=False`` when the server command was split off at ``--`` already."""
    from mcp_client import __version__

    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="mcp-client",
        description="Try MCP servers from a terminal, and watch the client's timeout policy at work.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="subcommand", required=True, metavar="{demo,tools,call}")

    demo = commands.add_parser(
        "demo",
        help="see idle timeouts, maximums and Ctrl-C cancellation against the bundled demo server",
        description="Start the bundled demo server over stdio and run four scenes with real protocol traffic.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    demo.add_argument("--fast", action="store_true", help="shorter durations (for tests and CI)")

    server = argparse.ArgumentParser(add_help=False)
    server.add_argument("--protocol", choices=PROTOCOL_CHOICES, default="auto", help="protocol version (default auto)")
    server.add_argument(
        "--connect", type=seconds, default=DEFAULT_TIMEOUT.connect, metavar="S", help="seconds to start (default 30)"
    )
    server.add_argument(
        "-e", "--env", type=env_pair, action="append", default=[], metavar="NAME=VALUE", help="set for the server"
    )
    server.add_argument("--inherit-env", action="store_true", help="pass this whole environment to the server")
    server.add_argument("--json", action="store_true", help="print JSON instead of text")

    tools = commands.add_parser(
        "tools",
        parents=[server],
        help="list the tools of a stdio server",
        usage="%(prog)s [options] -- <command> [args...]",
        description="Start a stdio server and list its tools.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    call = commands.add_parser(
        "call",
        parents=[server],
        help="call one tool of a stdio server, with a progress bar",
        usage="%(prog)s [options] <tool> ['<json arguments>'] -- <command> [args...]",
        description="Call one tool with a progress bar and print its result. Ctrl-C cancels the call on the wire.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    call.add_argument("tool", help="the tool's name")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments, a JSON object (default {})")
    call.add_argument(
        "--idle", type=seconds, default=DEFAULT_TIMEOUT.idle, metavar="S", help="idle timeout (default 60)"
    )
    call.add_argument(
        "--max", type=seconds, default=DEFAULT_TIMEOUT.maximum, metavar="S", help="hard maximum (default 600)"
    )
    for subparser in (tools, call):
        if with_command:
            subparser.add_argument("command", nargs=argparse.REMAINDER, help="the server command (after --)")
        else:
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
        options = build_parser(with_command=True).parse_args(argv)
        command = getattr(options, "command", [])
        if command and command[0].startswith("-"):
            raise UsageError(
                f"{command[0]!r} is taken for the server command; put mcp-client's options before the tool "
                "name, or put -- before the server command"
            )
    if options.subcommand != "demo" and not options.command:
        raise UsageError("no server command: add -- <command> [args...]")
    return options


def json_arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"the tool arguments are not valid JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise UsageError(f'the tool arguments must be a JSON object, like \'{{"text": "hi"}}\', not {text!r}')
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the ``mcp-client`` command line; return its exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        from rich.console import Console
    except ImportError:
        print("the CLI needs rich: pip install 'mcp-client[cli]'", file=sys.stderr)
        return EXIT_USAGE
    out = Console()
    err = Console(stderr=True)
    try:
        options = parse_arguments(arguments)
        tool_arguments = json_arguments(options.arguments) if options.subcommand == "call" else {}
    except SystemExit as exc:  # argparse printed help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_OK if exc.code is None else EXIT_USAGE
    except UsageError as exc:
        from rich.markup import escape

        err.print(f"[bold red]usage error[/]: {escape(str(exc))}", highlight=False)
        return EXIT_USAGE

    interrupts = Interrupts()
    log = EventLog(keep=lambda event: isinstance(event, CancelSent))
    try:
        code = anyio.run(run_interruptible, command_body(options, tool_arguments, out, err, log), interrupts)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BaseException as raised:
        error = single_error(raised)
        if isinstance(error, KeyboardInterrupt):
            code = EXIT_INTERRUPTED
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
    """The async part of the chosen command, to run under :func:`run_interruptible`."""
    if options.subcommand == "demo":
        from mcp_client._cli_demo import run_demo

        fast: bool = options.fast
        return lambda interrupts: run_demo(interrupts, out, fast=fast)
    policy = TimeoutPolicy(
        idle=getattr(options, "idle", DEFAULT_TIMEOUT.idle),
        maximum=getattr(options, "max", DEFAULT_TIMEOUT.maximum),
        connect=options.connect,
    )
    server = ServerOptions(options.command, dict(options.env), options.inherit_env, options.protocol, policy)
    as_json: bool = options.json
    if options.subcommand == "tools":
        return lambda interrupts: list_tools_command(server, as_json, out, log)
    tool: str = options.tool
    return lambda interrupts: call_command(interrupts, server, tool, tool_arguments, as_json, out, err, log)


if __name__ == "__main__":
    sys.exit(main())
