"""One refresh per stored token, against an authorization server that rotates refresh tokens and, as RFC 9700
recommends, revokes the whole family when a spent one comes back.

Concurrent 401s and expiries in one ``OAuth``, two ``OAuth`` objects on one store, and two ``FileTokenStorage``
objects on one file (kept apart by the file lock alone, as two processes would be): each refresh token is sent
once, nobody is sent to sign in again, and a refused refresh forgets only the tokens that were refused.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import anyio
import anyio.lowlevel
import httpx
import pytest

from mcp_client.auth import (
    AuthorizationCode,
    FileTokenStorage,
    InMemoryTokenStorage,
    OAuth,
    StoredTokens,
    TokenStorage,
)
from tests.integration.http_lines import mock_client, mock_clients
from tests.integration.test_auth_flow import MCP, REDIRECT, Browser, World, post

pytestmark = pytest.mark.anyio


class RotatingWorld(World):
    """Refresh tokens are single use; a spent one revokes every token of its sign-in."""

    def __init__(self) -> None:
        super().__init__()
        self.spent: set[str] = set()
        self.family_revoked = False

    def __call__(self, request: httpx.Request) -> Any:
        if request.url.path != "/token":
            return super().__call__(request)

        async def after_a_moment() -> httpx.Response:
            await anyio.lowlevel.checkpoint()  # a real server takes a while: others run meanwhile
            return super(RotatingWorld, self).__call__(request)

        return after_a_moment()

    def token(self, request: httpx.Request) -> httpx.Response:
        form = dict(parse_qsl(request.content.decode()))
        if form.get("grant_type") == "refresh_token":
            presented = form["refresh_token"]
            if presented in self.spent:
                self.family_revoked = True
                self.access.clear()
                self.refresh.clear()
                self.token_forms.append(form)
                return httpx.Response(400, json={"error": "invalid_grant", "error_description": "reused"})
            self.spent.add(presented)
            answer = super().token(request)
            self.refresh.pop(presented, None)
            return answer
        return super().token(request)

    def refresh_tokens_sent(self) -> Counter[str]:
        return Counter(f["refresh_token"] for f in self.token_forms if f["grant_type"] == "refresh_token")


@pytest.fixture
def world() -> RotatingWorld:
    return RotatingWorld()


@pytest.fixture
def browser(world: RotatingWorld) -> Browser:
    return Browser(world)


@pytest.fixture
async def side(world: RotatingWorld, http_line: str) -> AsyncIterator[httpx.AsyncClient]:
    async with mock_client(http_line, world) as client:
        yield client


@pytest.fixture
async def mcp_http(world: RotatingWorld, http_line: str) -> AsyncIterator[Any]:
    """Clients of the MCP endpoint, ``mcp_http(auth=...)``, closed after the test."""
    async with mock_clients(http_line, world) as make:
        yield make


def oauth(browser: Browser, side: httpx.AsyncClient, storage: TokenStorage) -> OAuth:
    return OAuth(AuthorizationCode(REDIRECT, browser), http_client=side, storage=storage, server_url=MCP)


async def all_at_once(*clients: httpx.AsyncClient) -> list[int]:
    statuses: list[int] = []

    async def one(client: httpx.AsyncClient) -> None:
        statuses.append((await post(client, "tools/list")).status_code)

    async with anyio.create_task_group() as tg:
        for client in clients:
            tg.start_soon(one, client)
    return statuses


def assert_one_refresh_per_token(world: RotatingWorld) -> None:
    sent = world.refresh_tokens_sent()
    assert sent, "no refresh happened: the test did not test anything"
    assert max(sent.values()) == 1, f"a refresh token was sent more than once: {sent}"
    assert not world.family_revoked
    assert len(world.authorizations) == 1  # nobody was sent to sign in again


async def test_short_lived_tokens_refreshed_concurrently_in_one_oauth(
    world: RotatingWorld, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.expires_in = 0  # every stored token counts as expired as soon as it is issued
    client = mcp_http(oauth(browser, side, InMemoryTokenStorage()))
    assert (await post(client, "tools/list")).status_code == 200
    assert await all_at_once(client, client, client) == [200] * 3
    assert_one_refresh_per_token(world)


async def test_concurrent_401s_with_short_lived_tokens_refresh_the_stored_token(
    world: RotatingWorld, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.expires_in = 0
    auth = oauth(browser, side, InMemoryTokenStorage())
    client = mcp_http(auth)
    await post(client, "tools/list")
    world.access.clear()  # every access token is refused: each request meets a 401
    assert await all_at_once(client, client) == [200, 200]
    assert_one_refresh_per_token(world)


@pytest.mark.parametrize("store", ["memory", "file"])
async def test_two_oauth_objects_on_one_store_refresh_once(
    world: RotatingWorld, browser: Browser, side: httpx.AsyncClient, mcp_http: Any, tmp_path: Path, store: str
) -> None:
    storage: TokenStorage = InMemoryTokenStorage() if store == "memory" else FileTokenStorage(tmp_path / "t.json")
    first, second = mcp_http(oauth(browser, side, storage)), mcp_http(oauth(browser, side, storage))
    await post(first, "tools/list")
    world.access.clear()
    assert await all_at_once(first, second, first, second) == [200] * 4
    assert_one_refresh_per_token(world)


async def test_two_file_stores_on_one_file_are_kept_apart_by_the_file_lock(
    world: RotatingWorld, browser: Browser, side: httpx.AsyncClient, mcp_http: Any, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    first = mcp_http(oauth(browser, side, FileTokenStorage(path)))
    second = mcp_http(oauth(browser, side, FileTokenStorage(path)))  # another object: as another process would
    await post(first, "tools/list")
    world.access.clear()
    assert await all_at_once(first, second, first, second) == [200] * 4
    assert_one_refresh_per_token(world)
    assert (tmp_path / "tokens.json.lock").stat().st_mode & 0o777 == 0o600


async def test_a_refused_refresh_forgets_only_the_tokens_that_were_refused(
    world: RotatingWorld, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    storage = InMemoryTokenStorage()
    stored_at_sign_in: list[str | None] = []

    async def person(url: str) -> str:
        tokens = await storage.get_tokens(MCP)
        stored_at_sign_in.append(tokens.access_token if tokens is not None else None)
        return await browser(url)

    client = mcp_http(OAuth(AuthorizationCode(REDIRECT, person), http_client=side, storage=storage, server_url=MCP))
    await post(client, "tools/list")
    stale = await storage.get_tokens(MCP)
    assert stale is not None
    newer = StoredTokens.from_json({**stale.to_json(), "access_token": "newer", "refresh_token": "newer-r"})
    original = world.token

    def refuse_after_another_sign_in(request: httpx.Request) -> httpx.Response:
        form = dict(parse_qsl(request.content.decode()))
        if form["grant_type"] != "refresh_token":
            return original(request)
        storage._tokens[MCP] = newer  # meanwhile, another process signed in and stored its tokens
        return httpx.Response(400, json={"error": "invalid_grant"})

    world.token = refuse_after_another_sign_in  # type: ignore[method-assign]
    world.access.clear()
    await post(client, "tools/list")
    assert stored_at_sign_in == [None, "newer"], "the newer tokens were deleted along with the refused ones"


CHILD_HOLDS_THE_LOCK = """
import asyncio, sys
from mcp_client.auth import FileTokenStorage

async def main() -> None:
    async with FileTokenStorage(sys.argv[1]).renewal_lock():
        print("held", flush=True)
        sys.stdin.readline()

asyncio.run(main())
"""


@pytest.mark.real_clock
@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl: FileTokenStorage keeps only one process's tasks apart")
async def test_another_process_holding_the_renewal_lock_keeps_this_one_out(tmp_path: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    path = tmp_path / "tokens.json"
    lock_file = tmp_path / "tokens.json.lock"
    async with await anyio.open_process([sys.executable, "-c", CHILD_HOLDS_THE_LOCK, str(path)]) as child:
        assert child.stdout is not None
        assert child.stdin is not None
        assert (await child.stdout.receive()).strip() == b"held"
        with lock_file.open("rb") as handle, pytest.raises(BlockingIOError):  # a real lock, seen across processes
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        await child.stdin.send(b"done\n")
        async with FileTokenStorage(path).renewal_lock():  # taken once the child let go
            with lock_file.open("rb") as handle, pytest.raises(BlockingIOError):
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and now ours keeps others out
        assert await child.wait() == 0
