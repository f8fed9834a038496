"""The command line of ``mcp-client``: options, subcommands, the server command after ``--``, and the checks argparse
cannot make (a :class:`~mcp_client.cli.outcome.UsageError`, exit 2).
"""

from __future__ import annotations

import argparse
import json
import urllib.parse
from collections.abc import Sequence
from typing import Any, Final

from mcp_client.cli.outcome import UsageError
from mcp_client.policy.registry import UNSET

__all__ = ["PROTOCOL_CHOICES", "build_parser", "check_sources", "json_arguments", "parse_arguments"]

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
    if url is not None:
        check_url(url)
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


def check_url(url: str) -> None:
    """``--url`` must be an ``http://`` or ``https://`` URL with a host (``localhost:3000/mcp`` is a mistake)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        example = f"http://{url}" if "://" not in url else "http://127.0.0.1:3000/mcp"
        raise UsageError(f"--url needs an http:// or https:// URL with a host, like {example}, not {url!r}")


def json_arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"the tool arguments are not valid JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise UsageError(f'the tool arguments must be a JSON object, like \'{{"text": "hi"}}\', not {text!r}')
    return value
