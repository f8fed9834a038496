"""The mechanics: PKCE, DPoP proofs, client authentication at the token endpoint, registration, token storage."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import traceback
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from mcp_client.auth import (
    AuthorizationServerMetadata,
    ClientIdentity,
    ClientInformation,
    DPoPKey,
    FileTokenStorage,
    InMemoryTokenStorage,
    PrivateKeyJwt,
    RegistrationError,
    StoredTokens,
    TokenError,
)
from mcp_client.auth.pkce import Pkce, new_state, s256
from mcp_client.auth.registration import application_type, resolve_client
from mcp_client.auth.token_endpoint import auth_method, request_token

pytestmark = pytest.mark.anyio

METADATA = AuthorizationServerMetadata(
    issuer="https://as.test",
    token_endpoint="https://as.test/token",
    registration_endpoint="https://as.test/register",
    token_endpoint_auth_methods_supported=["client_secret_basic", "client_secret_post", "none"],
)


def test_pkce_s256_matches_rfc7636_appendix_b() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert s256(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert Pkce(verifier).challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_pkce_verifiers_are_fresh_long_and_hidden() -> None:
    first, second = Pkce(), Pkce()
    assert first.verifier != second.verifier
    assert 43 <= len(first.verifier) <= 128
    assert first.verifier not in repr(first)
    assert first.method == "S256"
    assert new_state() != new_state()
    with pytest.raises(ValueError, match="43 to 128"):
        Pkce("short")


def test_dpop_proof_claims_and_header() -> None:
    key = DPoPKey()
    proof = key.proof("post", "https://mcp.test/mcp?x=1#f", access_token="tok")
    header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
    assert header["typ"] == "dpop+jwt"
    assert header["alg"] == "ES256"
    assert "d" not in header["jwk"]
    public = ECKey.import_key(header["jwk"])
    claims = jwt.decode(proof, public).claims
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://mcp.test/mcp"
    expected_ath = base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert claims["ath"] == expected_ath
    assert "nonce" not in claims
    assert public.thumbprint() == key.thumbprint
    again = jwt.decode(key.proof("POST", "https://mcp.test/mcp"), public).claims
    assert again["jti"] != claims["jti"]


def test_dpop_nonces_are_per_origin() -> None:
    key = DPoPKey()
    assert key.remember_nonce("https://as.test/token", "n1")
    assert not key.remember_nonce("https://as.test/other", "n1")
    assert key.nonce_for("https://as.test/anything") == "n1"
    assert key.nonce_for("https://mcp.test/mcp") is None
    claims = jwt.decode(key.proof("POST", "https://as.test/token"), ECKey.import_key(key._public)).claims
    assert claims["nonce"] == "n1"


class TokenEndpoint:
    """A token endpoint that records requests and answers from a script."""

    def __init__(self, *answers: httpx.Response) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answers.pop(0)

    def form(self, index: int = -1) -> dict[str, str]:
        return dict(httpx.QueryParams(self.requests[index].content.decode()))


def ok(**extra: Any) -> httpx.Response:
    return httpx.Response(200, json={"access_token": "at", "token_type": "Bearer", **extra})


@pytest.mark.parametrize(
    ("client", "method"),
    [
        (ClientInformation("c"), "none"),
        (ClientInformation("c", "s"), "client_secret_basic"),
        (ClientInformation("c", "s", "client_secret_post"), "client_secret_post"),
    ],
)
async def test_client_authentication_methods(client: ClientInformation, method: str) -> None:
    endpoint = TokenEndpoint(ok())
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        await request_token(http, METADATA, {"grant_type": "client_credentials"}, client=client)
    form, headers = endpoint.form(), endpoint.requests[0].headers
    assert auth_method(client, METADATA) == method
    if method == "client_secret_basic":
        assert headers["authorization"] == "Basic " + base64.b64encode(b"c:s").decode()
        assert "client_secret" not in form
    elif method == "client_secret_post":
        assert (form["client_id"], form["client_secret"]) == ("c", "s")
        assert "authorization" not in headers
    else:
        assert form["client_id"] == "c"
        assert "client_secret" not in form
        assert "authorization" not in headers


def test_auth_method_follows_what_the_server_lists() -> None:
    post_only = METADATA.model_copy(update={"token_endpoint_auth_methods_supported": ["client_secret_post"]})
    assert auth_method(ClientInformation("c", "s"), post_only) == "client_secret_post"
    unlisted = METADATA.model_copy(update={"token_endpoint_auth_methods_supported": None})
    assert auth_method(ClientInformation("c", "s"), unlisted) == "client_secret_basic"


async def test_private_key_jwt_assertion() -> None:
    key = ECKey.generate_key("P-256")
    signer = PrivateKeyJwt.from_pem(key.as_pem(private=True), "ES256")
    endpoint = TokenEndpoint(ok())
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        await request_token(
            http, METADATA, {"grant_type": "client_credentials"}, client=ClientInformation("c"), signer=signer
        )
    form = endpoint.form()
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(form["client_assertion"], key).claims
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("c", "c", "https://as.test")
    assert claims["exp"] > claims["iat"]


async def test_token_errors_carry_the_oauth_code_and_no_secret() -> None:
    endpoint = TokenEndpoint(httpx.Response(400, json={"error": "invalid_grant", "error_description": "expired"}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        with pytest.raises(TokenError) as caught:
            await request_token(http, METADATA, {"code": "secret-code"}, client=ClientInformation("c", "hush"))
    assert caught.value.error == "invalid_grant"
    assert caught.value.status_code == 400
    assert "secret-code" not in str(caught.value)
    assert "hush" not in str(caught.value)


async def test_dpop_nonce_challenge_is_answered_once() -> None:
    challenge = httpx.Response(400, headers={"DPoP-Nonce": "n1"}, json={"error": "use_dpop_nonce"})
    endpoint = TokenEndpoint(challenge, httpx.Response(200, json={"access_token": "at", "token_type": "DPoP"}))
    key = DPoPKey()
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        token = await request_token(http, METADATA, {"grant_type": "x"}, client=None, dpop=key)
    assert token.token_type == "DPoP"
    first, second = (jwt.decode(r.headers["dpop"], ECKey.import_key(key._public)).claims for r in endpoint.requests)
    assert "nonce" not in first
    assert second["nonce"] == "n1"


async def test_dpop_token_without_a_proof_is_refused() -> None:
    endpoint = TokenEndpoint(httpx.Response(200, json={"access_token": "at", "token_type": "DPoP"}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        with pytest.raises(TokenError, match="DPoP"):
            await request_token(http, METADATA, {"grant_type": "x"}, client=None)


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("http://127.0.0.1:8765/cb", "native"),
        ("http://localhost/cb", "native"),
        ("http://[::1]:9/cb", "native"),
        ("com.example.app:/cb", "native"),
        ("https://host.example/cb", "web"),
    ],
)
def test_application_type(uri: str, kind: str) -> None:
    assert application_type(uri) == kind


async def test_registration_order_and_keying_by_issuer() -> None:
    registrations: list[dict[str, Any]] = []

    def register(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        registrations.append(body)
        return httpx.Response(
            201, json={"client_id": f"dcr-{len(registrations)}", "redirect_uris": body["redirect_uris"]}
        )

    storage = InMemoryTokenStorage()
    redirect = "http://127.0.0.1:1/cb"
    async with httpx.AsyncClient(transport=httpx.MockTransport(register)) as http:
        pinned = ClientInformation("pre", issuer="https://as.test")
        other = ClientInformation("elsewhere", issuer="https://other.test")
        found = await resolve_client(
            http,
            METADATA,
            storage,
            ClientIdentity(pre_registered=(other, pinned)),
            redirect_uri=redirect,
            grant_types=(),
        )
        assert found.client_id == "pre"
        cimd = METADATA.model_copy(update={"client_id_metadata_document_supported": True})
        identity = ClientIdentity(client_metadata_url="https://app.example/client.json")
        found = await resolve_client(http, cimd, storage, identity, redirect_uri=redirect, grant_types=())
        assert (found.client_id, found.token_endpoint_auth_method) == ("https://app.example/client.json", "none")
        found = await resolve_client(
            http,
            METADATA,
            storage,
            identity,
            redirect_uri=redirect,
            grant_types=("authorization_code", "refresh_token"),
        )
        assert found.client_id == "dcr-1"
        assert registrations[0]["application_type"] == "native"
        assert registrations[0]["grant_types"] == ["authorization_code", "refresh_token"]
        again = await resolve_client(http, METADATA, storage, identity, redirect_uri=redirect, grant_types=())
        assert again.client_id == "dcr-1"  # reused for the same issuer and redirect
        moved = METADATA.model_copy(update={"issuer": "https://as2.test"})
        elsewhere = await resolve_client(http, moved, storage, identity, redirect_uri=redirect, grant_types=())
        assert elsewhere.client_id == "dcr-2"  # never the first issuer's client
        no_dcr = METADATA.model_copy(update={"registration_endpoint": None, "issuer": "https://as3.test"})
        with pytest.raises(RegistrationError):
            await resolve_client(http, no_dcr, storage, ClientIdentity(), redirect_uri=redirect, grant_types=())


def tokens(access: str = "at") -> StoredTokens:
    return StoredTokens(access, "Bearer", "https://as.test", "https://mcp.test/mcp", refresh_token="rt", scopes=("a",))


async def test_memory_storage_round_trip() -> None:
    storage = InMemoryTokenStorage()
    await storage.set_tokens("r", tokens())
    assert await storage.get_tokens("r") == tokens()
    await storage.set_tokens("r", None)
    assert await storage.get_tokens("r") is None
    secret = StoredTokens("access-secret", "Bearer", "i", "r", refresh_token="refresh-secret")
    assert "access-secret" not in repr(secret)
    assert "refresh-secret" not in repr(secret)


async def test_file_storage_is_private_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "tokens.json"
    storage = FileTokenStorage(path)
    assert await storage.get_tokens("r") is None
    await storage.set_tokens("r", tokens())
    await storage.set_client("https://as.test", ClientInformation("c", "s", issuer="https://as.test"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    reopened = FileTokenStorage(path)
    assert await reopened.get_tokens("r") == tokens()
    assert await reopened.get_client("https://as.test") == ClientInformation("c", "s", issuer="https://as.test")
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # no temporary files left


async def test_file_storage_narrows_wide_permissions_and_survives_damage(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    path.chmod(0o644)
    storage = FileTokenStorage(path)
    assert await storage.get_tokens("r") is None
    await storage.set_tokens("r", tokens())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    await storage.set_tokens("r", None)
    assert await storage.get_tokens("r") is None


async def test_file_storage_expands_the_home_folder_and_keeps_every_new_folder_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "cwd"
    home.mkdir(mode=0o755)
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    storage = FileTokenStorage("~/.config/my-host/tokens.json")  # the docs' own example
    await storage.set_tokens("r", tokens())
    path = home / ".config" / "my-host" / "tokens.json"
    assert storage.path == path
    assert not (elsewhere / "~").exists()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    for folder in (home / ".config", home / ".config" / "my-host"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o755  # a folder that was there is left as it was


@pytest.mark.parametrize(
    "answer",
    [
        {"token_type": "Bearer", "refresh_token": "rt-very-secret-0123456789"},  # no access_token
        {"access_token": "", "refresh_token": "rt-very-secret-0123456789"},
        {"access_token": ["at-very-secret"], "refresh_token": "rt-very-secret-0123456789"},
    ],
)
async def test_an_invalid_token_response_shows_no_token_anywhere_in_its_traceback(answer: dict[str, Any]) -> None:
    endpoint = TokenEndpoint(httpx.Response(200, json=answer))
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        with pytest.raises(TokenError, match="invalid token response") as caught:
            await request_token(http, METADATA, {"grant_type": "client_credentials"}, client=ClientInformation("c"))
    shown = "".join(traceback.format_exception(caught.value))
    assert "access_token" in str(caught.value)  # which field is wrong
    assert "very-secret" not in shown


async def test_an_invalid_registration_answer_shows_no_secret_in_its_traceback() -> None:
    answer = {"client_secret": "cs-very-secret-0123456789"}  # no client_id
    endpoint = TokenEndpoint(httpx.Response(201, json=answer))
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        with pytest.raises(RegistrationError, match="invalid answer") as caught:
            await resolve_client(
                http,
                METADATA,
                InMemoryTokenStorage(),
                ClientIdentity(),
                redirect_uri="http://127.0.0.1/cb",
                grant_types=(),
            )
    assert "very-secret" not in "".join(traceback.format_exception(caught.value))
