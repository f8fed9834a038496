"""A TCP proxy on 127.0.0.1 that can cut a connection in the middle of a request, for HTTP interop tests.

``drop(marker, times)`` makes the next ``times`` connections whose client bytes contain ``marker`` (a JSON-RPC
method, say) be cut right after those bytes went to the server: the server got the request and works on it, the
client loses the connection before any answer (from the moment the marked bytes are seen, nothing more goes
from the server to the client on that connection, so a fast server's answer can never slip through before the
cut). ``cut_open()`` cuts every connection open at that moment (a
network blip, a proxy's idle cut: a long-lived stream ends). Everything else is piped through untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc


class CuttingProxy:
    """Forwards ``127.0.0.1:<port>`` to ``127.0.0.1:<upstream>``; see the module docstring."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port: int | None = None
        self.cuts = 0
        """How many connections were cut."""
        self._marker = b""
        self._times = 0
        self._open: set[anyio.CancelScope] = set()

    def cut_open(self) -> int:
        """Cut every connection open now; how many there were."""
        scopes = list(self._open)
        for scope in scopes:
            scope.cancel()
        self.cuts += len(scopes)
        return len(scopes)

    def drop(self, marker: bytes, times: int = 1) -> None:
        """Cut the next ``times`` connections that carry ``marker``."""
        self._marker, self._times = marker, times

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[CuttingProxy]:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with listener, anyio.create_task_group() as task_group:
            task_group.start_soon(listener.serve, self._handle)
            try:
                yield self
            finally:
                task_group.cancel_scope.cancel()

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        server = await anyio.connect_tcp("127.0.0.1", self.upstream_port)
        cutting = anyio.Event()
        async with client, server, anyio.create_task_group() as task_group:
            self._open.add(task_group.cancel_scope)
            try:
                task_group.start_soon(self._pipe, server, client, task_group.cancel_scope, cutting, False)
                await self._pipe(client, server, task_group.cancel_scope, cutting, True)
            finally:
                self._open.discard(task_group.cancel_scope)

    async def _pipe(
        self,
        source: anyio.abc.SocketStream,
        target: anyio.abc.SocketStream,
        scope: anyio.CancelScope,
        cutting: anyio.Event,
        from_client: bool,
    ) -> None:
        try:
            async for chunk in source:
                if cutting.is_set():
                    break
                marked = from_client and self._times > 0 and bool(self._marker) and self._marker in chunk
                if marked:
                    # Set before the bytes reach the server, so no answer to them can be forwarded.
                    cutting.set()
                    self._times -= 1
                    self.cuts += 1
                await target.send(chunk)
                if marked:
                    break
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        scope.cancel()
