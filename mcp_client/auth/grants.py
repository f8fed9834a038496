"""How a token is obtained once discovery is done: the :class:`Grant` protocol and the grants for
machine-to-machine hosts (the person-facing one is :class:`~mcp_client.auth.AuthorizationCode`).

* :class:`ClientCredentials` (RFC 6749 §4.4; MCP extension ``oauth-client-credentials``, SEP-1046) with
  ``client_secret_basic``/``client_secret_post`` or ``private_key_jwt`` (RFC 7523 §2.2).
* :class:`JwtBearer` (RFC 7523 §2.1): a JWT the workload already holds (workload identity federation, SEP-1933).
  A refused assertion is reported, never retried with another grant.
* :class:`EnterpriseManaged` (SEP-990): the person's ID token is exchanged at the enterprise IdP for an ID-JAG
  (RFC 8693 token exchange), which the MCP server's authorization server takes as a JWT bearer grant.

Every token request carries the RFC 8707 ``resource`` and, when one was selected, ``scope``.

Static credentials (a client secret, a private key, an assertion) are bound to the ``issuer`` they were made for:
discovery then picks that authorization server, and any other is :class:`~mcp_client.auth.UntrustedIssuer` before a
request carries them. Only a credential obtained from an issuer (dynamic registration) goes to an issuer the host
did not name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mcp_client.auth.discovery import Discovery
from mcp_client.auth.dpop import DPoPKey
from mcp_client.auth.metadata import AuthorizationServerMetadata, TokenResponse
from mcp_client.auth.storage import ClientInformation, TokenStorage
from mcp_client.auth.token_endpoint import PrivateKeyJwt, request_token
from mcp_client.auth.trust import check_bound_issuer

if TYPE_CHECKING:
    from mcp_client._httpx import EitherAsyncClient


__all__ = ["ClientCredentials", "EnterpriseManaged", "Grant", "GrantContext", "JwtBearer", "TokenSource"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

TokenSource = str | Callable[[], Awaitable[str]]
"""A credential given as is, or fetched fresh for every use (a workload token file that rotates)."""


async def _value(source: TokenSource) -> str:
    return source if isinstance(source, str) else await source()


@dataclass(frozen=True, slots=True)
class GrantContext:
    """What a grant gets to work with."""

    http: EitherAsyncClient
    """For the side exchanges (token endpoint, registration, an IdP)."""
    discovery: Discovery
    storage: TokenStorage
    scopes: tuple[str, ...] | None
    """The scopes to request (None: omit ``scope``)."""
    dpop: DPoPKey | None
    """Set when the token is to be DPoP-bound."""
    pause: Callable[[], AbstractContextManager[Any]]
    """Enter around anything that waits on a person (the browser sign-in)."""

    def scope_form(self) -> dict[str, str]:
        """``{"scope": ...}`` when scopes were selected, else nothing."""
        return {"scope": " ".join(self.scopes)} if self.scopes else {}


class Grant(Protocol):
    """A way to obtain tokens for the discovered authorization server."""

    interactive: bool
    """True when obtaining a token involves a person (the flow then runs inside ``waiting_on_a_person``)."""
    grant_types: tuple[str, ...]
    """The grant types this client uses (declared in dynamic registration)."""
    issuer: str | None
    """The only authorization server this grant may be used with (its credentials were made for it); None: the
    one the MCP server names (the credential is then obtained from it, by dynamic registration)."""

    async def client(self, context: GrantContext) -> ClientInformation | None:
        """The client identity used at the token endpoint (also for refreshing); None for none at all."""
        ...

    async def obtain(self, context: GrantContext) -> TokenResponse:
        """Obtain a new token (raising an :class:`~mcp_client.auth.OAuthError` on failure)."""
        ...


def _required_issuer(issuer: str) -> str:
    if not isinstance(issuer, str) or not issuer:
        raise ValueError("issuer must be the authorization server's issuer identifier (a URL)")
    return issuer


class _StaticClient:
    """A grant whose client is fixed by the host (machine-to-machine grants)."""

    interactive = False
    issuer: str | None = None
    _client: ClientInformation | None
    signer: PrivateKeyJwt | None = None

    def __repr__(self) -> str:
        client_id = self._client.client_id if self._client is not None else None
        return f"{type(self).__name__}(client_id={client_id!r}, issuer={self.issuer!r})"

    def _check_issuer(self, context: GrantContext) -> None:
        check_bound_issuer(context.discovery.issuer, self.issuer, server_url=context.discovery.server_url)

    async def client(self, context: GrantContext) -> ClientInformation | None:
        self._check_issuer(context)
        return self._client


class ClientCredentials(_StaticClient):
    """The client credentials grant: the host is the client, no person involved.

    Args:
        client_id: The client id registered with the authorization server.
        issuer: That authorization server's issuer identifier, exactly as its metadata spells it: the secret or
            key is used with it only (another one named by the MCP server is :class:`UntrustedIssuer`).
        client_secret: For ``client_secret_basic`` (default) or ``client_secret_post`` (``auth_method``).
        private_key: For ``private_key_jwt`` instead of a secret.
        auth_method: Force the client authentication method (default: from the server's metadata).
    """

    grant_types: tuple[str, ...] = ("client_credentials",)

    def __init__(
        self,
        client_id: str,
        *,
        issuer: str,
        client_secret: str | None = None,
        private_key: PrivateKeyJwt | None = None,
        auth_method: str | None = None,
    ) -> None:
        if (client_secret is None) == (private_key is None):
            raise ValueError("give exactly one of client_secret and private_key")
        self.issuer = _required_issuer(issuer)
        method = "private_key_jwt" if private_key is not None else auth_method
        self._client = ClientInformation(client_id, client_secret, method)
        self.signer = private_key

    async def obtain(self, context: GrantContext) -> TokenResponse:
        self._check_issuer(context)
        form = {"grant_type": "client_credentials", "resource": context.discovery.resource, **context.scope_form()}
        return await request_token(
            context.http, context.discovery.metadata, form, client=self._client, signer=self.signer, dpop=context.dpop
        )


class JwtBearer(_StaticClient):
    """The JWT bearer grant (RFC 7523 §2.1) with an assertion the workload holds (e.g. a Kubernetes service
    account token whose audience is the authorization server).

    Args:
        assertion: The JWT, or an async function returning a fresh one for each token request.
        issuer: The authorization server the assertion is for (its audience): the only one it is sent to.
        client_id: Sent as the public client's id, when the server wants one.
        client_secret: Authenticate the client too (``client_secret_basic``).
    """

    grant_types: tuple[str, ...] = (JWT_BEARER,)

    def __init__(
        self,
        assertion: TokenSource,
        *,
        issuer: str,
        client_id: str | None = None,
        client_secret: str | None = None,
    ) -> None:
        self.issuer = _required_issuer(issuer)
        self._assertion = assertion
        self._client = ClientInformation(client_id, client_secret) if client_id is not None else None

    async def obtain(self, context: GrantContext) -> TokenResponse:
        self._check_issuer(context)
        form = {
            "grant_type": JWT_BEARER,
            "assertion": await _value(self._assertion),
            "resource": context.discovery.resource,
            **context.scope_form(),
        }
        return await request_token(
            context.http, context.discovery.metadata, form, client=self._client, dpop=context.dpop
        )


class EnterpriseManaged(_StaticClient):
    """Enterprise-managed authorization (SEP-990): ID token → ID-JAG at the IdP → access token at the MCP
    server's authorization server.

    Args:
        id_token: The person's ID token from the enterprise IdP (or an async function returning a fresh one).
        idp_token_endpoint: The IdP's token endpoint (RFC 8693 token exchange).
        idp_client_id: This client's id at the IdP; ``idp_client_secret`` authenticates it there, if needed.
        client_id: This client's id at the MCP server's authorization server; ``client_secret`` authenticates it.
        issuer: That authorization server's issuer identifier (required with ``client_secret``): the ID-JAG is
            asked for, and the secret sent to, that one only.
        idp_issuer: The IdP's issuer (only used as the audience of a ``private_key_jwt``; default: its origin).
    """

    grant_types: tuple[str, ...] = (JWT_BEARER,)

    def __init__(
        self,
        *,
        id_token: TokenSource,
        idp_token_endpoint: str,
        idp_client_id: str,
        client_id: str,
        client_secret: str | None = None,
        idp_client_secret: str | None = None,
        idp_issuer: str | None = None,
        issuer: str | None = None,
    ) -> None:
        if client_secret is not None and issuer is None:
            raise ValueError("a client_secret is bound to the authorization server it was issued by: give issuer=")
        self.issuer = _required_issuer(issuer) if issuer is not None else None
        self._id_token = id_token
        self._idp = AuthorizationServerMetadata(
            issuer=idp_issuer or idp_token_endpoint, token_endpoint=idp_token_endpoint
        )
        self._idp_client = ClientInformation(idp_client_id, idp_client_secret)
        self._client = ClientInformation(client_id, client_secret)

    async def obtain(self, context: GrantContext) -> TokenResponse:
        self._check_issuer(context)
        discovery = context.discovery
        exchange = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": discovery.issuer,
            "resource": discovery.resource,
            "subject_token": await _value(self._id_token),
            "subject_token_type": ID_TOKEN,
            **context.scope_form(),
        }
        jag = await request_token(context.http, self._idp, exchange, client=self._idp_client, access_token_type=False)
        form = {
            "grant_type": JWT_BEARER,
            "assertion": jag.access_token,
            "resource": discovery.resource,
            **context.scope_form(),
        }
        return await request_token(context.http, discovery.metadata, form, client=self._client, dpop=context.dpop)
