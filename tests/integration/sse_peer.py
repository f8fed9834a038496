"""A scripted HTTP+SSE server (2024-11-05) in the test's own event loop, behind an ``httpx2.MockTransport``.

``GET /sse`` opens a session of a :class:`~mcp_client.testing.peer.ScriptedPeer`: the response is an event stream
whose first event is ``endpoint`` (``/messages?session_id=N``, or whatever ``endpoint`` says), and every line the
peer writes becomes one ``message`` event. ``POST /messages?session_id=N`` hands the body to that session and
answers 202 (404 for a session that is gone). A POST to ``/sse`` is refused with ``405``, as the official SDK's
server does, so ``http()``'s fallback can be tested on the same peer. :meth:`SsePeer.drop` ends a session's
stream, as a server restart or a proxy's idle cut would; :attr:`SsePeer.refuse_calls` refuses the POST of a call
before it is read. Everything runs on the test's clock (trio's
``MockClock`` included): no socket, no thread.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import httpx2
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_client.testing.peer import PeerSession, ScriptedPeer


class _EventWriter(anyio.abc.ByteSendStream):
    """What the peer writes (JSON lines), as SSE ``message`` events on one session's stream."""

    def __init__(self, events: MemoryObjectSendStream[bytes]) -> None:
        self._events = events
        self._partial = b""

    async def send(self, item: bytes) -> None:
        self._partial += item
        *lines, self._partial = self._partial.split(b"\n")
        for line in lines:
            if line.strip():
                await self._events.send(b"event: message\ndata: " + line + b"\n\n")

    async def aclose(self) -> None:
        await self._events.aclose()


@dataclass
class _Session:
    events: MemoryObjectSendStream[bytes]
    ended: anyio.Event = field(default_factory=anyio.Event)
    peer_session: PeerSession | None = None


class SsePeer:
    """See the module docstring. ``requests`` lists every request the client made, in order."""

    def __init__(
        self,
        peer: ScriptedPeer,
        *,
        endpoint: str = "/messages?session_id={id}",
        first_event: bytes | None = None,
        bearer: str | None = None,
        routes: Mapping[str, Callable[[httpx2.Request], httpx2.Response]] | None = None,
    ) -> None:
        self.peer = peer
        self.bearer = bearer
        """When set, the stream and the messages need ``Authorization: Bearer <bearer>`` (401 with a challenge
        naming ``/.well-known/oauth-protected-resource/sse`` otherwise)."""
        self.unauthorized: list[str] = []
        """The requests refused with 401, as ``"GET /sse"``."""
        self.routes = dict(routes or {})
        """More paths this host answers (an authorization server's, say)."""
        self.endpoint = endpoint
        self.first_event = first_event
        """Sent instead of the endpoint event when set (a stream that is not HTTP+SSE)."""
        self.requests: list[httpx2.Request] = []
        self.refuse_calls = 0
        """How many of the next POSTs of a ``tools/call`` fail as a refused connection (``httpx2.ConnectError``) before
        the server reads them: a call that never reached the server."""
        self.refused_calls = 0
        self._sessions: dict[str, _Session] = {}
        self._opened = 0
        self._task_group: anyio.abc.TaskGroup | None = None

    @property
    def sessions_opened(self) -> int:
        return self._opened

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[httpx2.AsyncClient]:
        """A client whose every request this peer answers (base URL ``http://sse.test``)."""
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            async with httpx2.AsyncClient(transport=httpx2.MockTransport(self._handle)) as client:
                yield client
            task_group.cancel_scope.cancel()

    def drop(self) -> None:
        """End every open session's stream (the peer's sessions end too)."""
        for session in self._sessions.values():
            session.ended.set()

    def forget(self) -> None:
        """Forget every session while its stream stays open (a server that lost its state): POSTs get 404."""
        for session in self._sessions.values():
            session.peer_session = None

    async def _handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        if path in self.routes:
            return self.routes[path](request)
        authorization = request.headers.get("authorization")
        if self.bearer is not None and path in ("/sse", "/messages") and authorization != f"Bearer {self.bearer}":
            self.unauthorized.append(f"{request.method} {path}")
            metadata = "http://sse.test/.well-known/oauth-protected-resource/sse"
            challenge = f'Bearer resource_metadata="{metadata}", scope="mcp"'
            return httpx2.Response(401, headers={"www-authenticate": challenge}, json={"error": "invalid_token"})
        if request.method == "GET" and path == "/sse":
            return await self._open()
        if request.method == "POST" and path == "/messages":
            if self.refuse_calls and _is_tool_call(request.content):
                self.refuse_calls -= 1
                self.refused_calls += 1
                raise httpx2.ConnectError("[Errno 111] Connection refused (scripted)", request=request)
            return await self._message(request)
        if path == "/sse":
            return httpx2.Response(405, headers={"allow": "GET"}, text="Method Not Allowed")
        return httpx2.Response(404, text="Not Found")

    async def _open(self) -> httpx2.Response:
        assert self._task_group is not None
        self._opened += 1
        session_id = str(self._opened)
        send, receive = anyio.create_memory_object_stream[bytes](math.inf)
        session = _Session(send)
        self._sessions[session_id] = session
        first = self.first_event or b"event: endpoint\ndata: " + self.endpoint.format(id=session_id).encode() + b"\n\n"
        send.send_nowait(first)
        await self._task_group.start(self._run_session, session_id, session)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=_stream(receive))

    async def _run_session(self, session_id: str, session: _Session, *, task_status: Any) -> None:
        try:
            async with self.peer.open_session(_EventWriter(session.events)) as peer_session:
                session.peer_session = peer_session
                task_status.started()
                await session.ended.wait()
        finally:
            self._sessions.pop(session_id, None)
            session.events.close()

    async def _message(self, request: httpx2.Request) -> httpx2.Response:
        session = self._sessions.get(request.url.params.get("session_id", ""))
        if session is None or session.peer_session is None:
            return httpx2.Response(404, text="Could not find session")
        assert self._task_group is not None
        # The POST is accepted at once; the peer handles it beside (its answer comes on the stream).
        self._task_group.start_soon(session.peer_session.handle_message, request.content)
        return httpx2.Response(202, text="Accepted")


def _is_tool_call(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "tools/call"


async def _stream(receive: MemoryObjectReceiveStream[bytes]) -> AsyncIterator[bytes]:
    async with receive:
        async for chunk in receive:
            yield chunk
