"""What a failed start of a :class:`~mcp_client.Client` raises: one typed error, never a group around it.

Start-up can fail in the handshake itself or in a task of the connection (at 2025-11-25 the connection makes
requests of its own once ``initialize`` answered, and OAuth may refuse one of them). Either way the caller gets a
:class:`~mcp_client.ConnectError` with the cause chained, or the error as it was when it is no client error
(the caller's own cancellation, a bug). Imports only :mod:`mcp_client.errors` and the exit stack's closer.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import NoReturn

from mcp_client._exit_stack import close_exit_stack
from mcp_client.errors import ConnectError, MCPClientError

__all__ = ["close_and_raise"]


async def close_and_raise(stack: AsyncExitStack, error: BaseException, description: str) -> NoReturn:
    """Close what the failed start opened, then raise the start's error as a :class:`ConnectError`.

    Called from the ``except`` clause that caught ``error``.
    """
    failure = error
    if isinstance(error, BaseExceptionGroup):  # (raised inside a task group: a supervised link's transport's)
        failure = _sole_client_error(error) or error
    try:
        await close_exit_stack(stack)
    except BaseExceptionGroup as group:
        sole = _sole_client_error(group)
        if sole is None:
            raise
        failure = sole
    if isinstance(failure, MCPClientError) and not isinstance(failure, ConnectError):
        raise ConnectError(f"could not start a session with {description!r}: {failure}") from failure
    if failure is error:
        raise error
    raise failure from None


def _sole_client_error(group: BaseExceptionGroup[BaseException]) -> MCPClientError | None:
    """The one client error inside (nested) exception groups of one error each, if that is what they hold."""
    inner: BaseException = group
    while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
        inner = inner.exceptions[0]
    return inner if isinstance(inner, MCPClientError) else None
