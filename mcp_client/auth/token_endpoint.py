"""Talking to the token endpoint: client authentication (``none``, ``client_secret_basic``,
``client_secret_post``, ``private_key_jwt``), DPoP proofs with the server's nonce (RFC 9449 §8), errors
(RFC 6749 §5.2), and turning the answer into :class:`StoredTokens`.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote

from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey, RSAKey
from pydantic import ValidationError

from mcp_client._httpx import http_errors
from mcp_client.auth._http import fetch, shown
from mcp_client.auth.dpop import DPoPKey
from mcp_client.auth.errors import TokenError
from mcp_client.auth.metadata import AuthorizationServerMetadata, TokenResponse
from mcp_client.auth.storage import ClientInformation, StoredTokens

if TYPE_CHECKING:
    from mcp_client._httpx import EitherAsyncClient


__all__ = ["PrivateKeyJwt", "auth_method", "fields_at_fault", "request_token", "stored_tokens"]

_JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True, slots=True)
class PrivateKeyJwt:
    """``private_key_jwt`` client authentication (RFC 7523 §2.2): a short-lived JWT signed with the client's key.

    ``iss`` and ``sub`` are the client id, ``aud`` the authorization server's issuer identifier.
    """

    key: RSAKey | ECKey | OKPKey = field(repr=False)
    algorithm: str = "ES256"
    lifetime: float = 300.0
    key_id: str | None = None

    @classmethod
    def from_pem(cls, pem: str | bytes, algorithm: str = "ES256", *, key_id: str | None = None) -> PrivateKeyJwt:
        """A signer from a PEM private key (PKCS#8 or traditional); the key type follows ``algorithm``."""
        key: RSAKey | ECKey | OKPKey
        if algorithm.startswith(("RS", "PS")):
            key = RSAKey.import_key(pem)
        elif algorithm.startswith("ES"):
            key = ECKey.import_key(pem)
        else:
            key = OKPKey.import_key(pem)
        return cls(key, algorithm, key_id=key_id)

    def assertion(self, client_id: str, audience: str) -> str:
        """A fresh client assertion."""
        now = int(time.time())
        header: dict[str, object] = {"alg": self.algorithm, "typ": "JWT"}
        if self.key_id:
            header["kid"] = self.key_id
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + int(self.lifetime),
            "jti": secrets.token_urlsafe(24),
        }
        return jwt.encode(header, claims, self.key, algorithms=[self.algorithm])


def auth_method(client: ClientInformation, metadata: AuthorizationServerMetadata) -> str:
    """The client authentication method to use: the registered one; else ``none`` without a secret; else the
    first of ``client_secret_basic``, ``client_secret_post``, ``none`` the server lists (basic if it lists none)."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    if client.client_secret is None:
        return "none"
    supported = metadata.token_endpoint_auth_methods_supported
    if supported is None:
        return "client_secret_basic"
    for method in ("client_secret_basic", "client_secret_post", "none"):
        if method in supported:
            return method
    return "client_secret_basic"


def _authenticate(
    client: ClientInformation | None,
    metadata: AuthorizationServerMetadata,
    signer: PrivateKeyJwt | None,
    form: dict[str, str],
    headers: dict[str, str],
) -> None:
    if client is None:
        return
    method = "private_key_jwt" if signer is not None else auth_method(client, metadata)
    if method == "private_key_jwt":
        if signer is None:
            raise TokenError("the client is registered for private_key_jwt but no signing key was given")
        form["client_id"] = client.client_id
        form["client_assertion_type"] = _JWT_BEARER_ASSERTION
        form["client_assertion"] = signer.assertion(client.client_id, metadata.issuer)
    elif method == "client_secret_basic":
        secret = client.client_secret or ""
        pair = f"{quote(client.client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    elif method == "client_secret_post":
        form["client_id"] = client.client_id
        form["client_secret"] = client.client_secret or ""
    else:  # none: a public client names itself
        form["client_id"] = client.client_id


async def request_token(
    http: EitherAsyncClient,
    metadata: AuthorizationServerMetadata,
    form: Mapping[str, str],
    *,
    client: ClientInformation | None,
    signer: PrivateKeyJwt | None = None,
    dpop: DPoPKey | None = None,
    access_token_type: bool = True,
) -> TokenResponse:
    """POST ``form`` to the token endpoint with client authentication (and a DPoP proof); the token response.

    A ``use_dpop_nonce`` error is answered once with a new proof carrying the server's nonce. Any other error
    raises :class:`TokenError`; the request is never repeated otherwise. ``access_token_type=False`` accepts any
    ``token_type`` (token exchange answers such as ``N_A``).
    """
    endpoint = metadata.token_endpoint
    for attempt in (1, 2):
        body = dict(form)
        headers: dict[str, str] = {}
        _authenticate(client, metadata, signer, body, headers)
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", endpoint)
        try:
            answer = await fetch(http, "POST", endpoint, data=body, headers=headers)
        except http_errors() as exc:
            raise TokenError(f"the token request to {shown(endpoint)} failed: {exc or type(exc).__name__}") from exc
        fresh_nonce = dpop is not None and dpop.remember_nonce(endpoint, answer.headers.get("dpop-nonce"))
        document = answer.json_object() or {}
        if answer.ok:
            try:
                token = TokenResponse.model_validate(document)
            except ValidationError as exc:  # not chained: pydantic's message quotes the input, secrets and all
                raise TokenError(
                    f"the token endpoint {shown(endpoint)} sent an invalid token response ({fields_at_fault(exc)})"
                ) from None
            if access_token_type:
                _check_type(token, dpop, endpoint)
            return token
        error = document.get("error") if isinstance(document.get("error"), str) else None
        if error == "use_dpop_nonce" and fresh_nonce and attempt == 1:
            continue
        description = document.get("error_description")
        description = description if isinstance(description, str) else None
        detail = f": {description}" if description else ""
        raise TokenError(
            f"the token endpoint {shown(endpoint)} refused ({error or f'HTTP {answer.status}'}){detail}",
            error=error,
            description=description,
            status_code=answer.status,
        )
    raise AssertionError("unreachable")  # pragma: no cover


def fields_at_fault(error: ValidationError) -> str:
    """What a validation error says is wrong, by field name and reason only (never the values: they are secrets)."""
    return "; ".join(f"{'.'.join(str(part) for part in e['loc']) or 'document'}: {e['msg']}" for e in error.errors())


def _check_type(token: TokenResponse, dpop: DPoPKey | None, endpoint: str) -> None:
    kind = token.token_type.lower()
    if kind == "dpop" and dpop is None:
        raise TokenError(f"the token endpoint {shown(endpoint)} issued a DPoP token without a DPoP proof")
    if kind not in ("bearer", "dpop"):
        raise TokenError(f"the token endpoint {shown(endpoint)} issued an unsupported token type {token.token_type!r}")


def stored_tokens(
    token: TokenResponse,
    *,
    issuer: str,
    resource: str,
    requested_scopes: tuple[str, ...] | None,
    dpop: DPoPKey | None,
    previous_refresh_token: str | None = None,
) -> StoredTokens:
    """What to keep from a token response (a refresh answer without a new refresh token keeps the old one)."""
    bound = dpop is not None and token.token_type.lower() == "dpop"
    granted = tuple(dict.fromkeys(token.scope.split())) if token.scope is not None else requested_scopes
    now = time.time()
    return StoredTokens(
        access_token=token.access_token,
        token_type="DPoP" if bound else "Bearer",
        issuer=issuer,
        resource=resource,
        refresh_token=token.refresh_token or previous_refresh_token,
        expires_at=now + token.expires_in if token.expires_in is not None else None,
        scopes=granted,
        requested_scopes=requested_scopes,
        dpop_jkt=dpop.thumbprint if bound and dpop is not None else None,
        issued_at=now,
    )
