"""Which authorization servers and URLs OAuth talks to, against a hostile MCP server: the scripted world of
``test_auth_flow`` (the authorization server at ``as.test``) plus ``evil.example``, an authorization server the MCP
server names instead and that records everything it is sent.

Static credentials (a client secret, a private key, a JWT assertion) go to the issuer the host bound them to and
nowhere else; URLs learned from a server are https (http only on loopback or on an origin the host configured).
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from joserfc.jwk import ECKey

from mcp_client.auth import (
    AuthorizationCode,
    ClientCredentials,
    ClientIdentity,
    ClientInformation,
    EnterpriseManaged,
    JwtBearer,
    OAuth,
    OAuthError,
    PrivateKeyJwt,
    UnsafeURL,
    UntrustedIssuer,
)
from tests.integration.http_lines import mock_client, mock_clients
from tests.integration.test_auth_flow import ISSUER, REDIRECT, Browser, World, post

pytestmark = pytest.mark.anyio

EVIL = "https://evil.example"
SECRET = "s3cret-never-leaves"
ASSERTION = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ3b3JrbG9hZCJ9."


class HostileWorld(World):
    """``mcp.test`` names whatever authorization servers, challenge URL and endpoints the test sets."""

    def __init__(self) -> None:
        super().__init__()
        self.authorization_servers: list[str] = [ISSUER]
        self.resource_metadata_url: str | None = None
        self.endpoints: dict[str, str] = {}
        self.publish_prm = True

    def __call__(self, request: httpx.Request) -> httpx.Response:
        host, path = request.url.host, request.url.path
        if host == "mcp.test" and "oauth-protected-resource" in path and not self.publish_prm:
            self.requests.append(request)
            return httpx.Response(404)
        if host == "mcp.test" and path == "/.well-known/oauth-protected-resource/mcp":
            self.requests.append(request)
            return httpx.Response(
                200, json={"resource": self.prm_resource, "authorization_servers": self.authorization_servers}
            )
        unsigned = "authorization" not in request.headers
        if host == "mcp.test" and path == "/mcp" and self.resource_metadata_url is not None and unsigned:
            self.requests.append(request)
            challenge = f'Bearer resource_metadata="{self.resource_metadata_url}"'
            return httpx.Response(401, headers={"WWW-Authenticate": challenge})
        if host == "evil.example":
            self.requests.append(request)
            if path == "/.well-known/oauth-authorization-server":
                issuer = f"{request.url.scheme}://evil.example"
                return httpx.Response(200, json={**self.metadata(), "issuer": issuer, "token_endpoint": f"{issuer}/t"})
            return httpx.Response(200, json={"access_token": "stolen", "token_type": "Bearer"})
        return super().__call__(request)

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), **self.endpoints}

    def sent_to(self, host: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.host == host]


@pytest.fixture
def world() -> HostileWorld:
    return HostileWorld()


@pytest.fixture
async def side(world: HostileWorld, http_line: str) -> AsyncIterator[httpx.AsyncClient]:
    async with mock_client(http_line, world) as client:
        yield client


@pytest.fixture
async def mcp_http(world: HostileWorld, http_line: str) -> AsyncIterator[Any]:
    """Clients of the MCP endpoint, ``mcp_http(auth=...)``, closed after the test."""
    async with mock_clients(http_line, world) as make:
        yield make


def carries_a_credential(request: httpx.Request) -> bool:
    body = request.content.decode(errors="replace")
    return "authorization" in request.headers or SECRET in body or ASSERTION in body or "client_assertion" in body


def signer() -> PrivateKeyJwt:
    return PrivateKeyJwt.from_pem(ECKey.generate_key("P-256").as_pem(private=True), "ES256")


def bound_grants() -> list[Any]:
    return [
        ClientCredentials("svc", issuer=ISSUER, client_secret=SECRET),
        ClientCredentials("svc", issuer=ISSUER, private_key=signer()),
        JwtBearer(ASSERTION, issuer=ISSUER, client_id="workload"),
        EnterpriseManaged(
            id_token="id-token",
            idp_token_endpoint="https://idp.test/token",
            idp_client_id="idp-client",
            client_id="svc",
            client_secret=SECRET,
            issuer=ISSUER,
        ),
    ]


@pytest.mark.parametrize("evil", [EVIL, "http://evil.example"])
@pytest.mark.parametrize("index", range(4), ids=["secret", "private-key", "jwt-bearer", "enterprise"])
async def test_static_credentials_never_go_to_an_issuer_the_mcp_server_names(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, index: int, evil: str
) -> None:
    world.authorization_servers = [evil]
    auth = OAuth(bound_grants()[index], http_client=side)
    with pytest.raises(UntrustedIssuer, match=re.escape("credentials are for 'https://as.test'")):
        await post(mcp_http(auth), "tools/list")
    assert world.sent_to("evil.example") == []  # not even its metadata was asked for
    assert not any(carries_a_credential(r) for r in world.requests if r.url.host != "mcp.test")


async def test_a_bound_grant_picks_its_issuer_among_those_listed(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.authorization_servers = [EVIL, ISSUER]
    auth = OAuth(ClientCredentials("svc", issuer=ISSUER, client_secret=SECRET), http_client=side)
    assert (await post(mcp_http(auth), "tools/list")).status_code == 200
    assert world.sent_to("evil.example") == []
    assert [f["grant_type"] for f in world.token_forms] == ["client_credentials"]


async def test_a_legacy_server_is_its_own_issuer_which_a_bound_grant_refuses(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any
) -> None:
    world.publish_prm = False  # 2025-03-26: the MCP server's origin is the authorization server
    auth = OAuth(ClientCredentials("svc", issuer=ISSUER, client_secret=SECRET), http_client=side)
    with pytest.raises(UntrustedIssuer, match=re.escape("'http://mcp.test'")):
        await post(mcp_http(auth), "tools/list")
    assert not any(carries_a_credential(r) for r in world.requests if r.url.path != "/mcp")


def test_static_credentials_must_name_their_issuer() -> None:
    with pytest.raises(TypeError):
        ClientCredentials("svc", client_secret=SECRET)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        JwtBearer(ASSERTION)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="issuer"):
        ClientCredentials("svc", issuer="", client_secret=SECRET)
    with pytest.raises(ValueError, match="give issuer="):
        EnterpriseManaged(
            id_token="t",
            idp_token_endpoint="https://idp.test/token",
            idp_client_id="i",
            client_id="c",
            client_secret="s",
        )
    with pytest.raises(ValueError, match="give it the issuer"):
        ClientIdentity(pre_registered=(ClientInformation("c", SECRET),))
    ClientIdentity(pre_registered=(ClientInformation("public"),))  # a public client may apply to any issuer


async def test_a_pre_registered_secret_stays_with_its_issuer(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, browser: Browser
) -> None:
    world.authorization_servers = [ISSUER]
    pinned = ClientInformation("pinned", SECRET, issuer="https://other-as.test")
    identity = ClientIdentity(pre_registered=(pinned,))
    auth = OAuth(AuthorizationCode(REDIRECT, browser, identity=identity), http_client=side)
    assert (await post(mcp_http(auth), "tools/list")).status_code == 200
    assert world.registrations == 1  # as.test got a client of its own
    assert not any(SECRET in r.content.decode(errors="replace") for r in world.requests)
    assert all("authorization" not in r.headers for r in world.requests if r.url.path == "/token")


# -- URLs learned from a server ------------------------------------------------------------------------------


@pytest.fixture
def browser(world: HostileWorld) -> Browser:
    return Browser(world)


def person(browser: Browser, side: httpx.AsyncClient) -> OAuth:
    return OAuth(AuthorizationCode(REDIRECT, browser), http_client=side)


async def test_a_plain_http_authorization_server_is_refused(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, browser: Browser
) -> None:
    world.authorization_servers = ["http://evil.example"]
    with pytest.raises(UnsafeURL, match=re.escape("authorization server 'http://evil.example'")):
        await post(mcp_http(person(browser, side)), "tools/list")
    assert world.sent_to("evil.example") == []
    assert browser.urls == []


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("authorization_endpoint", "file:///etc/passwd"),
        ("authorization_endpoint", "javascript:alert(1)"),
        ("authorization_endpoint", "http://as.test/authorize"),
        ("token_endpoint", "http://as.test/token"),
        ("token_endpoint", "http://169.254.169.254/latest/meta-data/"),
        ("registration_endpoint", "ftp://as.test/register"),
    ],
)
async def test_unsafe_endpoints_in_the_metadata_are_refused_before_use(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, browser: Browser, endpoint: str, url: str
) -> None:
    world.endpoints = {endpoint: url}
    with pytest.raises(UnsafeURL, match=endpoint.split("_")[0]):
        await post(mcp_http(person(browser, side)), "tools/list")
    assert browser.urls == []  # on_authorize never saw it
    assert world.registrations == 0
    assert world.token_forms == []
    assert all(r.url.host in ("mcp.test", "as.test") for r in world.requests)


async def test_a_challenge_pointing_at_a_metadata_service_is_not_fetched(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, browser: Browser
) -> None:
    world.resource_metadata_url = "http://169.254.169.254/latest/meta-data/iam"
    with pytest.raises(UnsafeURL, match="resource_metadata"):
        await post(mcp_http(person(browser, side)), "tools/list")
    assert all(r.url.host == "mcp.test" for r in world.requests)


async def test_http_on_the_mcp_servers_own_origin_is_the_hosts_choice(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, browser: Browser
) -> None:
    world.resource_metadata_url = "http://mcp.test/.well-known/oauth-protected-resource/mcp"
    assert (await post(mcp_http(person(browser, side)), "tools/list")).status_code == 200
    assert any(str(r.url) == world.resource_metadata_url for r in world.requests)


# -- what held -------------------------------------------------------------------------------------------------


async def test_side_requests_never_follow_redirects(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, browser: Browser
) -> None:
    original = HostileWorld.__call__

    def redirecting(request: httpx.Request) -> httpx.Response:
        if request.url.host == "as.test" and request.url.path.startswith("/.well-known/"):
            world.requests.append(request)
            return httpx.Response(302, headers={"Location": f"{EVIL}/.well-known/oauth-authorization-server"})
        return original(world, request)

    async with mock_client("httpx", redirecting, follow_redirects=True) as eager_side:  # even a client that would
        auth = OAuth(AuthorizationCode(REDIRECT, browser), http_client=eager_side)
        async with mock_client("httpx", redirecting, auth=auth) as client:
            with pytest.raises(OAuthError):
                await post(client, "tools/list")
    assert world.sent_to("evil.example") == []
    assert browser.urls == []


async def test_a_client_credentials_and_dpop_flow_keeps_its_secrets_out_of_reprs_and_debug_logs(
    world: HostileWorld, side: httpx.AsyncClient, mcp_http: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    original_mcp, original_token = world.mcp, world.token
    issued: list[str] = []

    def dpop_mcp(request: httpx.Request) -> httpx.Response:
        header = request.headers.get("authorization", "")
        if header.startswith("DPoP ") and "dpop" in request.headers:
            request.headers["authorization"] = "Bearer " + header.removeprefix("DPoP ")
        return original_mcp(request)

    def dpop_token(request: httpx.Request) -> httpx.Response:
        body = json.loads(original_token(request).content)
        issued.append(body["access_token"])
        return httpx.Response(200, json={**body, "token_type": "DPoP"})

    world.mcp, world.token = dpop_mcp, dpop_token  # type: ignore[method-assign]
    grant = ClientCredentials("svc", issuer=ISSUER, client_secret=SECRET)
    auth = OAuth(grant, http_client=side, dpop=True)
    assert (await post(mcp_http(auth), "tools/list")).status_code == 200
    tokens = await auth.tokens()
    assert tokens is not None
    assert tokens.token_type == "DPoP"
    [access_token] = issued
    shown = " ".join([caplog.text, repr(auth), repr(grant), repr(tokens), repr(auth.storage), repr(auth.discovery)])
    for secret in (SECRET, access_token, base64.b64encode(f"svc:{SECRET}".encode()).decode()):
        assert secret not in shown
