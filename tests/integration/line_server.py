"""A tiny in-memory MCP server for tests that need answers the scripted peer does not give: a handler per method.

``LineServer(handler, capabilities=...)`` answers ``server/discover`` (2026-07-28) or ``initialize`` (2025-11-25)
itself and hands every other request to ``handler(method, params, notify)``, which returns the result (or raises
:class:`RpcError`). ``notify(method, params)`` writes a notification before the answer. Every request is recorded
in :attr:`LineServer.requests`. Run it with ``memory(server.serve)``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import anyio.abc

JSON = dict[str, Any]
Notify = Callable[[str, JSON], Awaitable[None]]
Handler = Callable[[str, JSON, Notify], Awaitable[JSON]]


class RpcError(Exception):
    """Raised by a handler: answer with this JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class LineServer:
    """One in-memory server; see the module documentation."""

    def __init__(
        self,
        handler: Handler,
        *,
        era: Literal["modern", "legacy"] = "modern",
        capabilities: JSON | None = None,
        discover_extra: JSON | None = None,
    ) -> None:
        self.handler = handler
        self.era = era
        self.capabilities = capabilities if capabilities is not None else {"tools": {}}
        self.discover_extra = discover_extra or {}
        self.requests: list[JSON] = []
        """Every request received (``server/discover`` and ``initialize`` included), in order."""
        self.notifications: list[JSON] = []
        """Every notification received."""

    def methods(self) -> list[str]:
        """The methods of the requests received, in order."""
        return [request["method"] for request in self.requests]

    async def serve(self, receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        lock = anyio.Lock()

        async def write(message: JSON) -> None:
            async with lock:
                await send.send(json.dumps(message).encode() + b"\n")

        buffer = b""
        async with anyio.create_task_group() as task_group:
            try:
                while True:
                    try:
                        chunk = await receive.receive()
                    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                        break
                    buffer += chunk
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        if line.strip():
                            task_group.start_soon(self._answer, json.loads(line), write)
            finally:
                task_group.cancel_scope.cancel()
                await send.aclose()

    async def _answer(self, message: JSON, write: Callable[[JSON], Awaitable[None]]) -> None:
        if "id" not in message:
            self.notifications.append(message)
            return
        self.requests.append(message)
        method, params = message["method"], message.get("params") or {}

        async def notify(name: str, body: JSON) -> None:
            await write({"jsonrpc": "2.0", "method": name, "params": body})

        try:
            result = await self._result(method, params, notify)
        except RpcError as exc:
            await write({"jsonrpc": "2.0", "id": message["id"], "error": {"code": exc.code, "message": exc.message}})
            return
        await write({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def _result(self, method: str, params: JSON, notify: Notify) -> JSON:
        if method == "server/discover":
            if self.era != "modern":
                raise RpcError(-32601, "method not found")
            return {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": self.capabilities,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "line-server", "version": "1"}},
                **self.discover_extra,
            }
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": self.capabilities,
                "serverInfo": {"name": "line-server", "version": "1"},
            }
        result = await self.handler(method, params, notify)
        if self.era == "modern":
            result = {"resultType": "complete", **result}
        return result
