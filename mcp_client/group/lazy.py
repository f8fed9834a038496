"""Lazy start: a server of a group started by the first call that needs it, under that call's deadline.

* The start runs in the server's own task (see :mod:`mcp_client.group.life`), bounded by its ``connect`` budget;
  the call waits for it at most until its own ``maximum`` (counted from the call's start, so the start spends the
  call's time). A call whose maximum passes first fails with :class:`~mcp_client.MaxTimeout` (nothing was sent:
  ``may_have_run`` is False); the start goes on, and a later call finds the server running.
* Concurrent first calls share one start: the first launches it, the others wait for the same one.
* A server that fails to start fails only its own calls, with :class:`~mcp_client.ConnectError` whose cause is the
  start's error. It is tried again by the first call after a wait of :func:`~mcp_client.group.server.start_retry_delay`
  seconds from the failure (1 s, doubling with each failed start in a row up to 60 s); calls inside the wait fail
  at once with that same cause. A start that succeeds clears the count.
* A server stopped idle (``idle_stop``) is started again the same way by its next call.
"""

from __future__ import annotations

import math

import anyio

from mcp_client.client.client import Client
from mcp_client.errors import ConnectError, MaxTimeout, TransportError
from mcp_client.group.life import ServerLives
from mcp_client.group.server import GroupServer, ServerStatus, start_retry_delay

__all__ = ["running_client", "started_client"]

_STARTABLE = (ServerStatus.NEVER_STARTED, ServerStatus.STOPPED_IDLE, ServerStatus.FAILED)


async def running_client(lives: ServerLives, server: GroupServer, maximum: float | None) -> Client:
    """The client of ``server``, started first if it is lazy (or stopped idle) and not running, within ``maximum``
    seconds.

    Raises:
        ConnectError: The server failed to start (now, or within the wait after a failed start).
        MaxTimeout: ``maximum`` passed while the server was starting.
        TransportError: The server died.
    """
    if server.phase is not ServerStatus.READY:
        with anyio.move_on_after(math.inf if maximum is None else maximum) as scope:
            await started_client(lives, server)
        if scope.cancelled_caught:
            error = MaxTimeout(
                f"the call's maximum of {maximum:g} s passed while server {server.name!r} was starting",
                timeout=maximum,
            )
            error.may_have_run = False
            raise error
    client = server.client
    if client is None or server.phase is not ServerStatus.READY:
        raise _not_running(server)
    closed = client.session.closed_error
    if closed is not None:
        raise TransportError(f"server {server.name!r} is gone: {closed.message}", written=False)
    return client


async def started_client(lives: ServerLives, server: GroupServer) -> Client:
    """Wait until ``server`` runs, launching its start when none is under way and the retry rule allows one."""
    while True:
        phase = server.phase
        if phase is ServerStatus.READY and server.client is not None:
            return server.client
        if lives.closed:  # (a call that raced the group's close, or waited on a start the close ended)
            raise ConnectError(f"server {server.name!r} is not running: the group was closed")
        if lives.task_group is None:
            raise RuntimeError(f"server {server.name!r} is not running: use 'async with group'")
        if phase is ServerStatus.STARTING:
            await server.started.wait()
            continue
        if phase not in _STARTABLE or (phase is ServerStatus.FAILED and not server.lazy):
            raise _not_running(server)
        if phase is ServerStatus.FAILED:
            wait = server.failed_at + start_retry_delay(server.start_failures) - anyio.current_time()
            if wait > 0:
                raise _start_failed(server, f"; tried again by a call in {wait:.3g} s")
        if server.ended is not None and not server.ended.is_set():
            await server.ended.wait()  # (the last life is still shutting down)
            continue
        lives.launch(server)


def _start_failed(server: GroupServer, note: str = "") -> ConnectError:
    error = ConnectError(f"server {server.name!r} failed to start: {server.error}{note}")
    error.__cause__ = server.error
    return error


def _not_running(server: GroupServer) -> Exception:
    if server.phase is ServerStatus.FAILED:
        return _start_failed(server)
    return RuntimeError(f"server {server.name!r} is not running ({server.status.value}): use 'async with group'")
