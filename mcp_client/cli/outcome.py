"""How a command ends: exit statuses by error kind, the usage error, and the one error inside exception groups.

It imports the error classes and the package's typed boundary only; every other module of the CLI may use it.
"""

from __future__ import annotations

from typing import Final

from mcp_client import (
    ConnectError,
    IdleTimeout,
    MaxTimeout,
    MCPClientError,
    ProtocolError,
    RequestCancelled,
    ServerError,
    TransportError,
)
from mcp_client._typed import sole_error

__all__ = [
    "CTRL_C_REASON",
    "EXIT_CODES",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "UsageError",
    "exit_code",
    "single_error",
]

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
    """The error a command ended with, as a caller of the package sees it: the one error inside exception groups
    (the package's one mapping, :func:`mcp_client._typed.sole_error`); the group itself when it holds several."""
    return sole_error(error)
