"""An OAuth refusal during start-up is a ConnectError whichever request met it, at both protocol eras.

At 2025-11-25 the connection makes requests of its own during start-up (``notifications/initialized``, the GET
listener); a refusal there used to escape as an exception group around the bare auth error, while the same
refusal of the handshake itself was a ConnectError.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Literal

import httpx
import pytest

from mcp_client import Client, ConnectError, http
from mcp_client.auth.errors import Unauthorized
from mcp_client.testing.http_peer import HttpPeer
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]


class RefuseAfter(httpx.Auth):
    """Lets ``allowed`` requests through, then refuses every one, as an OAuth flow that gives up does."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.seen: list[str] = []

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        self.seen.append(request.method)
        if len(self.seen) > self.allowed:
            raise Unauthorized("the authorization server refused the token")
        yield request


@pytest.mark.parametrize(
    ("era", "allowed"),
    [("modern", 0), ("legacy", 0), ("legacy", 1), ("legacy", 2)],
    ids=["2026-first-request", "2025-initialize", "2025-second-request", "2025-third-request"],
)
async def test_a_refusal_during_start_up_is_a_connect_error(era: Literal["modern", "legacy"], allowed: int) -> None:
    auth = RefuseAfter(allowed)
    async with HttpPeer(ScriptedPeer(era=era)).serving() as url:
        with pytest.raises(ConnectError) as caught:
            async with Client(http(url, auth=auth)):
                pass

    assert isinstance(caught.value.__cause__, Unauthorized)
    assert "the authorization server refused the token" in str(caught.value)
    assert auth.seen[: allowed + 1] == ["POST"] * (allowed + 1)  # the refused one was a request of the start-up
