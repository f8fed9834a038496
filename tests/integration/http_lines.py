"""A caller's HTTP client of either line over one scripted endpoint, for the tests of the HTTP transport.

The scripted endpoints of these tests are written once, against httpx 0.28's classes (``httpx.Response``, its
``AsyncByteStream``, its exceptions). :func:`mock_client` wraps one in an ``httpx.AsyncClient`` as it is, or in an
``httpx2.AsyncClient`` through a bridge that turns each answer into an ``httpx2.Response`` streaming the same
chunks (its close is passed on) and each ``httpx`` exception into httpx2's of the same name. The endpoint sees the
client's own request objects, which have the same attributes on both lines.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2

__all__ = ["LINES", "Handler", "mock_client", "mock_clients"]

LINES = ("httpx2", "httpx")
"""The libraries a caller's client may come from."""
Handler = Callable[[httpx.Request], Any]
"""An endpoint: answers an ``httpx.Request`` with an ``httpx.Response``, or an awaitable of one."""


class _Bridged(httpx2.AsyncByteStream):
    """An httpx response body read through httpx2: the same chunks, and closing it closes the original."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


def _bridge(handler: Handler) -> Callable[[httpx2.Request], Coroutine[None, None, httpx2.Response]]:
    async def answer(request: httpx2.Request) -> httpx2.Response:
        try:
            response = handler(request)  # type: ignore[arg-type]  # what it reads, requests of both lines have
            if not isinstance(response, httpx.Response):
                response = await response
        except httpx.HTTPError as exc:
            raise getattr(httpx2, type(exc).__name__)(str(exc)) from exc
        headers = response.headers.multi_items()
        return httpx2.Response(response.status_code, headers=headers, stream=_Bridged(response.stream))

    return answer


def mock_client(line: str, handler: Handler, **options: Any) -> Any:
    """An ``AsyncClient`` of ``line`` (``"httpx"`` or ``"httpx2"``) whose every request ``handler`` answers."""
    if line == "httpx":
        return httpx.AsyncClient(transport=httpx.MockTransport(handler), **options)
    if line == "httpx2":
        return httpx2.AsyncClient(transport=httpx2.MockTransport(_bridge(handler)), **options)
    raise ValueError(f"no such line: {line!r}")


@asynccontextmanager
async def mock_clients(line: str, handler: Handler) -> AsyncIterator[Callable[..., Any]]:
    """A maker of :func:`mock_client` clients over ``handler``, each with its own ``auth`` (and other options);
    every client it made is closed on the way out."""
    clients: list[Any] = []

    def make(auth: Any = None, **options: Any) -> Any:
        clients.append(mock_client(line, handler, auth=auth, **options))
        return clients[-1]

    try:
        yield make
    finally:
        for client in clients:
            await client.aclose()
