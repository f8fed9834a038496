"""The public boundary's one mapping of failures to the package's typed errors.

Work done for a call often runs inside task groups (a heartbeat beside the call, the connection's reader, a
transport's writer), and a task group raises an :class:`ExceptionGroup` around whatever failed in it. A caller of the
package must see the one typed error, never the group: :func:`sole_error` finds it, and :func:`typed` is the
boundary every public entry point (and every wrapper: the facade, the adapters, the durable activities) passes its
failures through. Imports only :mod:`mcp_client.errors`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp_client.errors import MCPClientError

__all__ = ["sole_error", "typed"]


def sole_error(error: BaseException) -> BaseException:
    """The error a caller should see for ``error``.

    Inside (nested) exception groups: the one :class:`MCPClientError` when the groups hold exactly one (besides
    cancellations the failure itself caused); the one error when a group holds exactly one; otherwise the group.
    """
    if not isinstance(error, BaseExceptionGroup):
        return error
    leaves = list(_leaves(error))
    client_errors = [leaf for leaf in leaves if isinstance(leaf, MCPClientError)]
    if len(client_errors) == 1:
        return client_errors[0]
    if len(leaves) == 1:
        return leaves[0]
    return error


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for inner in group.exceptions:
        if isinstance(inner, BaseExceptionGroup):
            yield from _leaves(inner)
        else:
            yield inner


@contextmanager
def typed() -> Iterator[None]:
    """Re-raise a group that holds one error as that error (its group kept as the context)."""
    try:
        yield
    except BaseExceptionGroup as group:
        sole = sole_error(group)
        if sole is group:
            raise
        raise sole from group
