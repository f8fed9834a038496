"""``main()``: parse the command line, run the chosen command under Ctrl-C handling, print its error, return its exit
status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from mcp_client import (
    DEFAULT_TIMEOUT,
    CancelSent,
    MCPClientError,
)
from mcp_client.cli.commands import CallOptions, ServerOptions, call_command, list_tools_command
from mcp_client.cli.display import print_error
from mcp_client.cli.interrupts import EventLog, Interrupts, run_interruptible
from mcp_client.cli.outcome import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageError, exit_code, single_error
from mcp_client.cli.parser import json_arguments, parse_arguments
from mcp_client.cli.safe_text import visible
from mcp_client.config.load import ConfigError
from mcp_client.policy.registry import UNSET, Unset

if TYPE_CHECKING:
    from rich.console import Console


__all__ = ["command_body", "main"]


def print_usage_error(err: Console, error: UsageError) -> None:
    from rich.markup import escape

    err.print(f"[bold red]usage error[/]: {escape(visible(str(error)))}", highlight=False)


def print_config_error(err: Console, error: ConfigError) -> None:
    """Each problem of a configuration on a line of its own, with its JSON path."""
    from rich.markup import escape

    where = f" {error.source}" if error.source else ""
    err.print(f"[bold red]ConfigError[/]: the configuration{escape(visible(where))} is not valid", highlight=False)
    for problem in error.problems:
        err.print(f"  {escape(visible(str(problem)))}", highlight=False)


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
    for console in (out, err):
        # Not a terminal (a pipe, a log file, a CI job): one line per message, nothing wrapped at 80 columns.
        console.soft_wrap = not console.is_terminal
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
        from mcp_client.cli.demo import run_demo

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
        from mcp_client.cli.group import GroupOptions, group_call_command, group_tools_command, read_config

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
        return lambda interrupts: list_tools_command(server, as_json, out, log, err)
    tool: str = options.tool
    return lambda interrupts: call_command(interrupts, server, tool, tool_arguments, call_options, out, err, log)
