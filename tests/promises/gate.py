"""A loopback TCP gate in front of a server's port: it forwards every connection until it is shut, and from then on
the port refuses every connection (nothing listens on it) and the connections it carried are closed.

The matrix's ``drop_before_write`` cells over Streamable HTTP stage a server whose port stops taking connections
before a call is written: a request never leaves a client whose connection cannot be opened (the one failure of an
HTTP engine that proves nothing was written).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
from anyio.abc import SocketAttribute


class Gate:
    """Forwards ``127.0.0.1:<port>`` to ``upstream_port`` until :meth:`shut`."""

    def __init__(
        self, listener: anyio.abc.Listener[anyio.abc.SocketStream], upstream_port: int, scope: anyio.CancelScope
    ) -> None:
        self._listener = listener
        self._upstream_port = upstream_port
        self._scope = scope
        self.port: int = listener.extra(SocketAttribute.local_port)
        self.connections = 0
        self.shut_down = False
        self.stopped = anyio.Event()
        """Set once nothing is forwarded any more (every connection of the gate's closed)."""

    async def shut(self) -> None:
        """Close every connection the gate forwards, then its port: a connection to it is refused from now on."""
        self.shut_down = True
        self._scope.cancel()
        await self.stopped.wait()
        await self._listener.aclose()

    async def _forward(self, client: anyio.abc.SocketStream) -> None:
        self.connections += 1
        server = await anyio.connect_tcp("127.0.0.1", self._upstream_port)
        async with client, server, anyio.create_task_group() as pumps:
            pumps.start_soon(_pump, client, server, pumps.cancel_scope)
            pumps.start_soon(_pump, server, client, pumps.cancel_scope)


async def _pump(source: anyio.abc.SocketStream, sink: anyio.abc.SocketStream, both: anyio.CancelScope) -> None:
    try:
        async for chunk in source:
            await sink.send(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    both.cancel()  # one side ended: the connection ends (a half-close is no part of what the gate stages)


@asynccontextmanager
async def gate(upstream_port: int) -> AsyncIterator[Gate]:
    """A gate on a free port of ``127.0.0.1`` to ``upstream_port``; leaving shuts it."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with anyio.create_task_group() as task_group:
        scope = anyio.CancelScope()
        the_gate = Gate(listener, upstream_port, scope)

        async def serve() -> None:
            try:
                with scope:  # (the forwarding tasks run in the listener's own task group, inside it)
                    await listener.serve(the_gate._forward)
            finally:
                the_gate.stopped.set()

        task_group.start_soon(serve)
        try:
            yield the_gate
        finally:
            if not the_gate.shut_down:
                await the_gate.shut()
