"""Who the client is at an authorization server, in the spec's order of preference:

1. a pre-registered client for that issuer (or for any issuer, when the host bound a public client to none: a
   client with a secret or a private key must name its issuer);
2. a Client ID Metadata Document: the host's HTTPS URL is the ``client_id``, when the server advertises
   ``client_id_metadata_document_supported``;
3. a client registered earlier with that issuer (from the token store), if its redirect URI still fits;
4. dynamic client registration (RFC 7591) at the server's ``registration_endpoint``, declaring
   ``application_type`` (``native`` for loopback and custom-scheme redirects, else ``web``).

Registered clients are kept per issuer: a client of one authorization server is never shown to another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from mcp_client._httpx import http_errors
from mcp_client._log_guard import package_logger
from mcp_client.auth._http import fetch, shown
from mcp_client.auth.errors import RegistrationError
from mcp_client.auth.metadata import AuthorizationServerMetadata, RegistrationResponse
from mcp_client.auth.storage import ClientInformation, TokenStorage
from mcp_client.auth.token_endpoint import fields_at_fault
from mcp_client.auth.trust import is_loopback_host

if TYPE_CHECKING:
    from mcp_client._httpx import EitherAsyncClient


__all__ = ["ClientIdentity", "application_type", "resolve_client"]

logger = package_logger("mcp_client.auth")


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """How this host presents itself to authorization servers."""

    client_name: str = "mcp-client"
    """Shown to the user on the consent screen (dynamic registration)."""
    client_metadata_url: str | None = None
    """An HTTPS URL serving this client's metadata document (Client ID Metadata Documents), used as the
    ``client_id`` where the server supports it."""
    pre_registered: Sequence[ClientInformation] = ()
    """Clients registered out of band; each applies to its ``issuer`` (None: to any, for a public client only)."""
    extra_metadata: dict[str, Any] = field(default_factory=dict)
    """More RFC 7591 client metadata for dynamic registration (``client_uri``, ``logo_uri``, ``contacts``...)."""

    def __post_init__(self) -> None:
        for client in self.pre_registered:
            confidential = client.client_secret is not None or client.token_endpoint_auth_method == "private_key_jwt"
            if confidential and client.issuer is None:
                raise ValueError(
                    f"the pre-registered client {client.client_id!r} has a secret: give it the issuer it was "
                    "registered with (ClientInformation(..., issuer=...)), so it is never sent to another"
                )


def application_type(redirect_uri: str) -> str:
    """``native`` for a loopback or custom-scheme redirect URI (an app on the user's device), else ``web``."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https"):
        return "native"
    return "native" if is_loopback_host(parts.hostname or "") else "web"


def _registration_auth_method(metadata: AuthorizationServerMetadata) -> str | None:
    supported = metadata.token_endpoint_auth_methods_supported
    if supported is None:
        return None
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return None


async def resolve_client(
    http: EitherAsyncClient,
    metadata: AuthorizationServerMetadata,
    storage: TokenStorage,
    identity: ClientIdentity,
    *,
    redirect_uri: str,
    grant_types: Sequence[str],
) -> ClientInformation:
    """The client to use with the authorization server of ``metadata``, registering one if need be."""
    issuer = metadata.issuer
    for client in identity.pre_registered:
        if client.issuer == issuer:
            return client
    for client in identity.pre_registered:
        if client.issuer is None:
            return client
    if identity.client_metadata_url and metadata.client_id_metadata_document_supported:
        return ClientInformation(
            client_id=identity.client_metadata_url,
            token_endpoint_auth_method="none",
            redirect_uris=(redirect_uri,),
            issuer=issuer,
        )
    known = await storage.get_client(issuer)
    if known is not None and known.issuer == issuer and redirect_uri in known.redirect_uris:
        return known
    if not metadata.registration_endpoint:
        raise RegistrationError(
            f"the authorization server {issuer!r} offers no dynamic client registration and no client is "
            "pre-registered for it (nor a Client ID Metadata Document it accepts)"
        )
    client = await register(http, metadata, identity, redirect_uri=redirect_uri, grant_types=grant_types)
    await storage.set_client(issuer, client)
    return client


async def register(
    http: EitherAsyncClient,
    metadata: AuthorizationServerMetadata,
    identity: ClientIdentity,
    *,
    redirect_uri: str,
    grant_types: Sequence[str],
) -> ClientInformation:
    """Dynamic client registration (RFC 7591) at ``metadata.registration_endpoint``."""
    endpoint = metadata.registration_endpoint
    assert endpoint is not None
    body: dict[str, Any] = {
        **identity.extra_metadata,
        "client_name": identity.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": list(grant_types),
        "response_types": ["code"],
        "application_type": application_type(redirect_uri),
    }
    method = _registration_auth_method(metadata)
    if method is not None:
        body["token_endpoint_auth_method"] = method
    try:
        answer = await fetch(http, "POST", endpoint, json_body=body)
    except http_errors() as exc:
        raise RegistrationError(
            f"client registration at {shown(endpoint)} failed: {exc or type(exc).__name__}"
        ) from exc
    document = answer.json_object() or {}
    if not answer.ok:
        error = document.get("error") if isinstance(document.get("error"), str) else None
        raise RegistrationError(
            f"client registration at {shown(endpoint)} was refused ({error or f'HTTP {answer.status}'})",
            error=error,
            status_code=answer.status,
        )
    try:
        registered = RegistrationResponse.model_validate(document)
    except ValidationError as exc:  # not chained: pydantic's message quotes the input, the client secret too
        raise RegistrationError(
            f"client registration at {shown(endpoint)} sent an invalid answer ({fields_at_fault(exc)})"
        ) from None
    logger.debug("registered client %s with %s", registered.client_id, metadata.issuer)
    return ClientInformation(
        client_id=registered.client_id,
        client_secret=registered.client_secret,
        token_endpoint_auth_method=registered.token_endpoint_auth_method,
        redirect_uris=tuple(registered.redirect_uris or (redirect_uri,)),
        issuer=metadata.issuer,
    )
