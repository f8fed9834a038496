"""OAuth end to end: a tiny authorization server and a protected MCP endpoint behind one mock transport, the
browser hook answering at once; every test runs with clients of both lines (httpx2, and httpx 0.28 as a host may
hand us), for the MCP connection and the side exchanges alike. Covers the full authorization-code flow through
:class:`~mcp_client.Client`, and the policy of :class:`~mcp_client.auth.OAuth`: refresh, step-up and its bound,
RFC 9207 ``iss``, the resource check, tokens never leaving the MCP server's origin, concurrent 401s, DPoP, and the
person-waiting hook.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio
import httpx
import pytest

from mcp_client import Client, TimeoutPolicy
from mcp_client.auth import (
    AuthorizationCode,
    AuthorizationError,
    ClientCredentials,
    InsufficientScope,
    OAuth,
    ResourceMismatch,
    Unauthorized,
)
from mcp_client.auth.pkce import s256
from mcp_client.transports.http import http
from tests.integration.http_lines import mock_client, mock_clients

pytestmark = pytest.mark.anyio

MCP = "http://mcp.test/mcp"
PRM_URL = "http://mcp.test/.well-known/oauth-protected-resource/mcp"
ISSUER = "https://as.test"
REDIRECT = "http://127.0.0.1:8765/callback"
POLICY = TimeoutPolicy(idle=10, maximum=60, connect=30)
TOOLS = [
    {"name": "read", "inputSchema": {"type": "object"}},
    {"name": "write", "inputSchema": {"type": "object"}},
]


@dataclass
class Grant:
    scopes: tuple[str, ...]
    client_id: str
    resource: str | None


@dataclass
class World:
    """The authorization server at ``as.test`` and the MCP server at ``mcp.test``; records everything."""

    base_scopes: tuple[str, ...] = ("mcp:read",)
    tool_scopes: dict[str, tuple[str, ...]] = field(default_factory=lambda: {"write": ("mcp:write",)})
    iss: str | None = ISSUER
    prm_resource: str = MCP
    issue_refresh_tokens: bool = True
    expires_in: int = 3600
    grantable: tuple[str, ...] | None = None
    """When set, the authorization server grants only these of the scopes asked for."""
    requests: list[httpx.Request] = field(default_factory=list)
    access: dict[str, Grant] = field(default_factory=dict)
    refresh: dict[str, Grant] = field(default_factory=dict)
    codes: dict[str, tuple[Grant, str]] = field(default_factory=dict)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_forms: list[dict[str, str]] = field(default_factory=list)
    registrations: int = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        host, path = request.url.host, request.url.path
        if host == "mcp.test" and path == "/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(200, json={"resource": self.prm_resource, "authorization_servers": [ISSUER]})
        if host == "mcp.test" and path == "/mcp":
            return self.mcp(request)
        if host == "as.test" and path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=self.metadata())
        if host == "as.test" and path == "/register":
            self.registrations += 1
            body = json.loads(request.content)
            return httpx.Response(201, json={"client_id": f"client-{self.registrations}", **body})
        if host == "as.test" and path == "/authorize":
            return self.authorize(request)
        if host == "as.test" and path == "/token":
            return self.token(request)
        return httpx.Response(404)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": ISSUER,
            "authorization_endpoint": f"{ISSUER}/authorize",
            "token_endpoint": f"{ISSUER}/token",
            "registration_endpoint": f"{ISSUER}/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
            "scopes_supported": ["mcp:read", "mcp:write", "offline_access"],
            "authorization_response_iss_parameter_supported": self.iss is not None,
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        }

    def authorize(self, request: httpx.Request) -> httpx.Response:
        query = dict(request.url.params)
        self.authorizations.append(query)
        code = secrets.token_urlsafe(8)
        asked = tuple(query.get("scope", "").split())
        granted = asked if self.grantable is None else tuple(s for s in asked if s in self.grantable)
        grant = Grant(granted, query["client_id"], query.get("resource"))
        self.codes[code] = (grant, query["code_challenge"])
        answer = {"code": code, "state": query["state"]}
        if self.iss is not None:
            answer["iss"] = self.iss
        return httpx.Response(302, headers={"Location": f"{query['redirect_uri']}?{urlencode(answer)}"})

    def token(self, request: httpx.Request) -> httpx.Response:
        form = dict(parse_qsl(request.content.decode()))
        self.token_forms.append(form)
        kind = form["grant_type"]
        if kind == "authorization_code":
            grant, challenge = self.codes.pop(form["code"])
            if s256(form["code_verifier"]) != challenge:
                return httpx.Response(400, json={"error": "invalid_grant"})
        elif kind == "refresh_token":
            if form["refresh_token"] not in self.refresh:
                return httpx.Response(400, json={"error": "invalid_grant"})
            grant = self.refresh[form["refresh_token"]]
        elif kind == "client_credentials":
            grant = Grant(tuple(form.get("scope", "").split()), "m2m", form.get("resource"))
        else:
            return httpx.Response(400, json={"error": "unsupported_grant_type"})
        access = secrets.token_urlsafe(8)
        self.access[access] = grant
        body: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "expires_in": self.expires_in}
        if self.issue_refresh_tokens and kind != "client_credentials":
            refresh = secrets.token_urlsafe(8)
            self.refresh[refresh] = grant
            body["refresh_token"] = refresh
        return httpx.Response(200, json=body)

    def mcp(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        method = body.get("method")
        header = request.headers.get("authorization", "")
        grant = self.access.get(header.removeprefix("Bearer ")) if header.startswith("Bearer ") else None
        if grant is None:
            scope = " ".join(self.base_scopes)
            challenge = f'Bearer resource_metadata="{PRM_URL}", scope="{scope}"'
            return httpx.Response(401, headers={"WWW-Authenticate": challenge}, json={"error": "invalid_token"})
        needed = self.base_scopes
        if method == "tools/call":
            needed = needed + self.tool_scopes.get(body["params"]["name"], ())
        if not set(needed) <= set(grant.scopes):
            scope = " ".join(needed)
            challenge = f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{PRM_URL}"'
            return httpx.Response(403, headers={"WWW-Authenticate": challenge}, json={"error": "insufficient_scope"})
        if "id" not in body:
            return httpx.Response(202)
        results: dict[str, dict[str, Any]] = {
            "server/discover": {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}},
            "tools/list": {"tools": TOOLS, "ttlMs": 0},
            "tools/call": {"content": [{"type": "text", "text": "done"}], "isError": False},
        }
        result = {**results.get(method, {}), "resultType": "complete"}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})

    def hosts(self) -> set[str]:
        return {r.url.host for r in self.requests}


class Browser:
    """The person: follows the authorization URL's redirect and hands back where it landed."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.urls: list[str] = []
        self.tamper: dict[str, str | None] = {}

    async def __call__(self, url: str) -> str:
        self.urls.append(url)
        response = self.world(httpx.Request("GET", url))
        location = response.headers["location"]
        if not self.tamper:
            return location
        params = dict(parse_qsl(urlsplit(location).query))
        for key, value in self.tamper.items():
            if value is None:
                params.pop(key, None)
            else:
                params[key] = value
        return f"{REDIRECT}?{urlencode(params)}"


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def browser(world: World) -> Browser:
    return Browser(world)


@pytest.fixture
async def side(world: World, http_line: str) -> AsyncIterator[httpx.AsyncClient]:
    async with mock_client(http_line, world) as client:
        yield client


def oauth(browser: Browser, side: httpx.AsyncClient, **options: Any) -> OAuth:
    return OAuth(AuthorizationCode(REDIRECT, browser), http_client=side, **options)


@pytest.fixture
async def mcp_http(world: World, http_line: str) -> AsyncIterator[Any]:
    """Clients of the MCP endpoint, ``mcp_http(auth=...)``, closed after the test."""
    async with mock_clients(http_line, world) as make:
        yield make


async def post(client: httpx.AsyncClient, method: str, **params: Any) -> httpx.Response:
    return await client.post(MCP, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


async def test_full_authorization_code_flow_through_the_client(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    auth = oauth(browser, side)
    async with Client(http(MCP, client=mcp_http(auth)), protocol="2026-07-28", timeout=POLICY) as client:
        assert [tool.name for tool in await client.list_tools()] == ["read", "write"]
        result = await client.call_tool("read", {})
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    [authorization] = world.authorizations
    assert authorization["code_challenge_method"] == "S256"
    assert authorization["resource"] == MCP
    assert authorization["scope"] == "mcp:read offline_access"
    assert authorization["client_id"] == "client-1"
    token_form = world.token_forms[0]
    assert token_form["resource"] == MCP
    assert token_form["redirect_uri"] == REDIRECT
    tokens = await auth.tokens()
    assert tokens is not None
    assert tokens.issuer == ISSUER
    assert tokens.requested_scopes == ("mcp:read", "offline_access")


async def test_step_up_asks_for_the_union_then_succeeds(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    async with Client(http(MCP, client=mcp_http(oauth(browser, side))), protocol="2026-07-28", timeout=POLICY) as c:
        await c.call_tool("write", {})
    assert [a["scope"] for a in world.authorizations] == [
        "mcp:read offline_access",
        "mcp:read offline_access mcp:write",
    ]


async def test_step_up_is_bounded_and_never_repeats_a_refused_request(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.tool_scopes = {"write": ("mcp:admin",)}
    world.grantable = ("mcp:read", "offline_access")
    client = mcp_http(oauth(browser, side))
    await post(client, "tools/list")
    for _ in range(3):
        with pytest.raises(InsufficientScope) as caught:
            await post(client, "tools/call", name="write")
        assert caught.value.scopes == ("mcp:read", "mcp:admin")
    assert len(world.authorizations) == 2  # the first sign-in and one step-up, however often it is tried


async def test_step_up_limit_per_request(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.tool_scopes = {"write": ("s1",)}
    auth = oauth(browser, side, max_step_ups=0)
    client = mcp_http(auth)
    await post(client, "tools/list")
    with pytest.raises(InsufficientScope, match="after 0 re-authorizations"):
        await post(client, "tools/call", name="write")


async def test_refresh_instead_of_a_new_sign_in(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    client = mcp_http(oauth(browser, side))
    assert (await post(client, "tools/list")).status_code == 200
    world.access.clear()  # the server forgets every access token: the next request gets a 401
    assert (await post(client, "tools/list")).status_code == 200
    assert len(world.authorizations) == 1
    assert [f["grant_type"] for f in world.token_forms] == ["authorization_code", "refresh_token"]
    assert world.token_forms[1]["resource"] == MCP


async def test_expired_token_is_refreshed_before_sending(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.expires_in = 0
    client = mcp_http(oauth(browser, side))
    await post(client, "tools/list")
    sent_before = sum(1 for r in world.requests if r.url.path == "/mcp")
    await post(client, "tools/list")
    assert [f["grant_type"] for f in world.token_forms] == ["authorization_code", "refresh_token"]
    assert sum(1 for r in world.requests if r.url.path == "/mcp") == sent_before + 1  # no 401 round trip


async def test_a_token_that_lives_less_than_the_margin_is_used_until_near_its_end(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.expires_in = 20  # under the 30 s margin: it used to count as expired as soon as it was issued
    client = mcp_http(oauth(browser, side))
    for _ in range(3):
        assert (await post(client, "tools/list")).status_code == 200
    assert [f["grant_type"] for f in world.token_forms] == ["authorization_code"]


async def test_refused_refresh_token_falls_back_to_signing_in(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    client = mcp_http(oauth(browser, side))
    await post(client, "tools/list")
    world.access.clear()
    world.refresh.clear()
    assert (await post(client, "tools/list")).status_code == 200
    assert len(world.authorizations) == 2


async def test_a_fresh_token_refused_again_is_an_error(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.issue_refresh_tokens = False
    original = world.mcp

    def always_401(request: httpx.Request) -> httpx.Response:
        world.access.clear()
        return original(request)

    world.mcp = always_401  # type: ignore[method-assign]
    with pytest.raises(Unauthorized):
        await post(mcp_http(oauth(browser, side)), "tools/list")
    assert len(world.authorizations) == 1


@pytest.mark.parametrize(
    ("tamper", "advertised", "message"),
    [
        ({"iss": "http://evil.test"}, True, "RFC 9207"),
        ({"iss": f"{ISSUER}/"}, True, "RFC 9207"),  # no normalization
        ({"iss": None}, True, "advertises the iss parameter"),
        ({"iss": "http://evil.test"}, False, "RFC 9207"),  # checked even when not advertised
        ({"state": "forged"}, True, "state"),
        ({"error": "access_denied", "code": None}, True, "access_denied"),
    ],
)
async def test_bad_authorization_responses_never_reach_the_token_endpoint(
    world: World,
    browser: Browser,
    side: httpx.AsyncClient,
    mcp_http: Any,
    tamper: dict[str, str | None],
    advertised: bool,
    message: str,
) -> None:
    if not advertised:
        world.iss = None
    browser.tamper = tamper
    with pytest.raises(AuthorizationError, match=message):
        await post(mcp_http(oauth(browser, side)), "tools/list")
    assert world.token_forms == []


async def test_absent_iss_is_fine_when_not_advertised(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.iss = None
    assert (await post(mcp_http(oauth(browser, side)), "tools/list")).status_code == 200


async def test_resource_mismatch_is_refused_before_any_redirect(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.prm_resource = "http://evil.test/mcp"
    with pytest.raises(ResourceMismatch):
        await post(mcp_http(oauth(browser, side)), "tools/list")
    assert browser.urls == []
    assert "as.test" not in world.hosts()


async def test_tokens_never_go_to_another_origin(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    client = mcp_http(oauth(browser, side))
    await post(client, "tools/list")
    for url in ("http://other.test/mcp", "https://mcp.test/mcp", "http://mcp.test:8080/mcp"):
        await client.post(url, json={})
    for request in world.requests:
        if request.url.host != "mcp.test" or request.url.port is not None or request.url.scheme != "http":
            assert "authorization" not in request.headers or request.headers["authorization"].startswith("Basic")
    assert all("Bearer" not in r.headers.get("authorization", "") for r in world.requests if r.url.host == "as.test")


async def test_concurrent_401s_share_one_sign_in(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    client = mcp_http(oauth(browser, side))
    statuses: list[int] = []

    async def one() -> None:
        statuses.append((await post(client, "tools/list")).status_code)

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(one)
    assert statuses == [200] * 5
    assert len(world.authorizations) == 1


async def test_browser_runs_inside_waiting_on_a_person(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    events: list[str] = []

    @contextmanager
    def waiting() -> Iterator[None]:
        events.append("pause")
        yield
        events.append("resume")

    async def hook(url: str) -> str:
        events.append("browser")
        return await browser(url)

    auth = OAuth(AuthorizationCode(REDIRECT, hook), http_client=side)
    auth.waiting_on_a_person = waiting
    await post(mcp_http(auth), "tools/list")
    assert events == ["pause", "browser", "resume"]


async def test_client_credentials_for_machines(world: World, side: httpx.AsyncClient, mcp_http: Any) -> None:
    auth = OAuth(ClientCredentials("m2m", issuer=ISSUER, client_secret="s"), http_client=side, scopes=["mcp:read"])
    assert (await post(mcp_http(auth), "tools/list")).status_code == 200
    [form] = world.token_forms
    assert form["grant_type"] == "client_credentials"
    assert form["scope"] == "mcp:read"  # from the challenge
    assert form["resource"] == MCP
    token_request = next(r for r in world.requests if r.url.path == "/token")
    assert token_request.headers["authorization"].startswith("Basic ")


async def test_dpop_bound_tokens_when_the_server_challenges_with_dpop(
    world: World, browser: Browser, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    original_mcp, original_token = world.mcp, world.token

    def dpop_mcp(request: httpx.Request) -> httpx.Response:
        header = request.headers.get("authorization", "")
        if header.startswith("DPoP ") and "dpop" in request.headers:
            request.headers["authorization"] = "Bearer " + header.removeprefix("DPoP ")
        response = original_mcp(request)
        if response.status_code == 401:
            response.headers["WWW-Authenticate"] = f'DPoP resource_metadata="{PRM_URL}", scope="mcp:read"'
        return response

    def dpop_token(request: httpx.Request) -> httpx.Response:
        assert "dpop" in request.headers
        response = original_token(request)
        body = json.loads(response.content)
        return httpx.Response(200, json={**body, "token_type": "DPoP"})

    world.mcp, world.token = dpop_mcp, dpop_token  # type: ignore[method-assign]
    auth = oauth(browser, side)
    client = mcp_http(auth)
    assert (await post(client, "tools/list")).status_code == 200
    assert (await post(client, "tools/call", name="write")).status_code == 200  # the step-up stays DPoP-bound
    tokens = await auth.tokens()
    assert tokens is not None
    assert tokens.token_type == "DPoP"
    assert tokens.dpop_jkt is not None
