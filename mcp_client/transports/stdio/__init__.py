"""The stdio transport: the server as a child process, newline-delimited JSON over its pipes.

:mod:`._transport` (:func:`stdio`, the process and its connection), :mod:`._child_io` (which pipes, read and
written how, per platform and backend), :mod:`._fd_pipes` and :mod:`._loop_pipes` (the two ways of driving them).
"""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:
    from mcp_client.transports.stdio._transport import (
        DEFAULT_INHERITED_ENV as DEFAULT_INHERITED_ENV,
        StdioTransport as StdioTransport,
        stdio as stdio,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
