"""``mcp-client --config mcp.json tools|call``: the servers of an ``mcp.json``, through a :class:`ClientGroup`."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from mcp_client._log_guard import package_logger
from mcp_client.cli.commands import CallOptions, follow_call, note_shutdown_after_a_moment
from mcp_client.cli.display import dump_json, print_error, tools_table
from mcp_client.cli.interrupts import EventLog, Interrupts
from mcp_client.cli.outcome import EXIT_OK, UsageError, exit_code
from mcp_client.cli.safe_text import plain
from mcp_client.config.load import GroupConfig, load_config
from mcp_client.errors import ConnectError
from mcp_client.group import ClientGroup, split_tool_name
from mcp_client.policy.registry import UNSET, Unset
from mcp_client.policy.timeout import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["GroupOptions", "group_call_command", "group_tools_command", "read_config"]


@dataclass(frozen=True)
class GroupOptions:
    """The ``mcp.json`` and what the command line overrides over it."""

    config: GroupConfig
    protocol: str
    connect: float | Unset | None = UNSET
    """``--connect``, when given: the client default under every server's own policy."""


def read_config(path: str) -> GroupConfig:
    """The parsed ``mcp.json`` (raises :class:`~mcp_client.config.load.ConfigError` listing every problem)."""
    return load_config(path)


def _quiet_group_log() -> None:
    """The CLI reports failed servers itself; the group's own warnings would say it twice."""
    group_logger = package_logger("mcp_client.group")
    if not any(isinstance(handler, logging.NullHandler) for handler in group_logger.handlers):
        group_logger.addHandler(logging.NullHandler())


def _group(options: GroupOptions, log: EventLog, *, list_tools: bool) -> ClientGroup:
    _quiet_group_log()
    client_options: dict[str, Any] = {"protocol": options.protocol}
    if not isinstance(options.connect, Unset):
        client_options["timeout"] = DEFAULT_TIMEOUT.replace(connect=options.connect)
    return ClientGroup(
        options.config.specs(),
        on_event=lambda _name, event: log(event),
        list_tools=list_tools,
        **client_options,
    )


@contextlib.asynccontextmanager
async def closing_noted(group: ClientGroup, err: Console) -> AsyncIterator[ClientGroup]:
    """``async with group``, saying on ``err`` that we wait when shutting the servers down takes a moment."""
    async with anyio.create_task_group() as notices:  # entered first: the group is left inside it
        try:
            async with group:
                try:
                    yield group
                finally:
                    notices.start_soon(note_shutdown_after_a_moment, "the servers", err)
        finally:
            notices.cancel_scope.cancel()


def report_failures(group: ClientGroup, err: Console, only: str | None = None) -> None:
    """Each server that did not start (or just ``only``), on stderr."""
    for name, error in group.failures.items():
        if only is None or name == only:
            err.print(plain(f"server {name!r} failed to start", "bold red"), highlight=False)
            print_error(err, error)


async def group_tools_command(
    options: GroupOptions, server: str | None, as_json: bool, out: Console, err: Console, log: EventLog
) -> int:
    """List the tools of every configured server (or of ``server``) as ``server/tool``."""
    group = _group(options, log, list_tools=False)
    if server is not None and server not in group:
        raise UsageError(f"no server named {server!r} in the configuration (servers: {', '.join(group)})")
    async with closing_noted(group, err):
        report_failures(group, err, server)
        listed = await group.list_tools()
        failures = {name: error for name, error in group.failures.items() if server in (None, name)}
    rows = [(f"{name}/{tool.name}", tool) for name, tools in listed.items() if server in (None, name) for tool in tools]
    if as_json:
        dump_json(
            {
                "tools": [
                    {**tool.model_dump(by_alias=True, exclude_none=True, mode="json"), "name": qualified}
                    for qualified, tool in rows
                ],
                "failures": {name: f"{type(error).__name__}: {error}" for name, error in failures.items()},
            }
        )
    else:
        served = sorted({qualified.partition("/")[0] for qualified, _ in rows} | set(listed))
        title = f"{len(rows)} tools of {len(served)} server{'s' if len(served) != 1 else ''}"
        out.print(tools_table(title, rows))
    wanted = [server] if server is not None else list(group)
    if all(name in failures for name in wanted):  # nothing could be listed at all
        error = failures[wanted[0]]
        return exit_code(error if isinstance(error, ConnectError) else ConnectError(str(error)))
    return EXIT_OK


async def group_call_command(
    interrupts: Interrupts,
    options: GroupOptions,
    qualified: str,
    arguments: dict[str, Any],
    call_options: CallOptions,
    out: Console,
    err: Console,
    log: EventLog,
) -> int:
    """Call ``server/tool`` under its server's policy, with the command line's overrides on top."""
    try:
        name, _tool = split_tool_name(qualified)
    except ValueError as exc:
        raise UsageError(f"with --config, name the tool as server/tool: {exc}") from None
    group = _group(options, log, list_tools=True)
    if name not in group:
        raise UsageError(f"no server named {name!r} in the configuration (servers: {', '.join(group)})")
    async with closing_noted(group, err):
        report_failures(group, err)
        # the server's own policy supplies what the command line leaves out; ConnectError if the server failed
        call = group.tool_call(qualified, arguments, timeout=call_options.partial, retry=call_options.retry_arg)
        return await follow_call(interrupts, call, qualified, call_options.as_json, out, err, log)
