"""Finding the authorization server of an MCP server.

1. Protected resource metadata (RFC 9728), first found of: the ``resource_metadata`` URL of the 401's
   ``WWW-Authenticate``; ``/.well-known/oauth-protected-resource<path>``; ``/.well-known/oauth-protected-resource``.
   Its ``resource`` must be the MCP server (same origin, same path or a parent of it), or nothing more happens:
   :class:`ResourceMismatch` is raised before any redirect or token request.
2. Authorization server metadata for the first of its ``authorization_servers`` (for a grant bound to an issuer:
   that issuer, if listed, else :class:`UntrustedIssuer`), in the spec's order: for an issuer
   with a path, ``/.well-known/oauth-authorization-server<path>``, ``/.well-known/openid-configuration<path>``,
   ``<path>/.well-known/openid-configuration``; without one, ``/.well-known/oauth-authorization-server`` then
   ``/.well-known/openid-configuration``. The document's ``issuer`` must equal the issuer exactly (RFC 8414 §3.3),
   else :class:`IssuerMismatch`.
3. 2025-03-26 servers publish no protected resource metadata: the authorization server is then the MCP server's
   origin, its metadata is at ``/.well-known/oauth-authorization-server``, and without metadata the default
   endpoints ``/authorize``, ``/token`` and ``/register`` are used.

Every URL learned on the way (the challenge's ``resource_metadata``, the authorization server, the endpoints of
its metadata) must pass :func:`~mcp_client.auth.trust.check_learned_url`, else :class:`UnsafeURL` before it is
fetched or handed on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from mcp_client._httpx import http_errors
from mcp_client._log_guard import package_logger
from mcp_client.auth._http import canonical, fetch, origin, resource_covers, shown
from mcp_client.auth.errors import DiscoveryError, IssuerMismatch, ResourceMismatch
from mcp_client.auth.metadata import AuthorizationServerMetadata, ProtectedResourceMetadata
from mcp_client.auth.trust import check_bound_issuer, check_learned_url, pick_issuer

if TYPE_CHECKING:
    from mcp_client._httpx import EitherAsyncClient


__all__ = [
    "Discovery",
    "authorization_server_metadata_urls",
    "discover",
    "fetch_authorization_server_metadata",
    "fetch_protected_resource_metadata",
    "protected_resource_metadata_urls",
]

logger = package_logger("mcp_client.auth")

_PRM = "/.well-known/oauth-protected-resource"
_OAUTH = "/.well-known/oauth-authorization-server"
_OIDC = "/.well-known/openid-configuration"


@dataclass(frozen=True, slots=True)
class Discovery:
    """What discovery found for one MCP server."""

    server_url: str
    resource: str
    """The RFC 8707 ``resource`` value: the metadata's ``resource`` exactly as published, or (2025-03-26) the
    canonical server URL."""
    protected_resource: ProtectedResourceMetadata | None
    """None for a 2025-03-26 server."""
    metadata: AuthorizationServerMetadata
    """The authorization server's metadata (synthesized from the default endpoints for a 2025-03-26 server
    without any)."""

    @property
    def issuer(self) -> str:
        """The authorization server's issuer identifier."""
        return self.metadata.issuer

    @property
    def legacy(self) -> bool:
        """True when the server published no protected resource metadata (2025-03-26 behaviour)."""
        return self.protected_resource is None


def _with_path(base: str, path: str) -> str:
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def protected_resource_metadata_urls(server_url: str, header_url: str | None) -> list[str]:
    """Where to look for the protected resource metadata, in order."""
    path = urlsplit(server_url).path.rstrip("/")
    urls = [header_url] if header_url else []
    if path:
        urls.append(_with_path(server_url, _PRM + path))
    urls.append(_with_path(server_url, _PRM))
    return list(dict.fromkeys(urls))


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for the metadata of the authorization server ``issuer``, in the spec's order."""
    path = urlsplit(issuer).path.rstrip("/")
    if not path:
        return [_with_path(issuer, _OAUTH), _with_path(issuer, _OIDC)]
    return [_with_path(issuer, _OAUTH + path), _with_path(issuer, _OIDC + path), _with_path(issuer, path + _OIDC)]


async def fetch_protected_resource_metadata(
    http: EitherAsyncClient, server_url: str, header_url: str | None
) -> ProtectedResourceMetadata | None:
    """The first valid protected resource metadata document, checked against ``server_url``; None if none."""
    if header_url:
        check_learned_url(header_url, "resource_metadata URL of the challenge", trusted=(server_url,))
    for url in protected_resource_metadata_urls(server_url, header_url):
        try:
            answer = await fetch(http, "GET", url)
        except http_errors() as exc:
            logger.debug("protected resource metadata at %s: %s", shown(url), exc)
            continue
        document = answer.json_object()
        if not answer.ok or document is None:
            logger.debug("no protected resource metadata at %s (HTTP %s)", shown(url), answer.status)
            continue
        try:
            metadata = ProtectedResourceMetadata.model_validate(document)
        except ValidationError:
            logger.debug("invalid protected resource metadata at %s", shown(url))
            continue
        if not resource_covers(metadata.resource, server_url):
            raise ResourceMismatch(
                f"the protected resource metadata at {shown(url)} is for {metadata.resource!r}, not for the MCP "
                f"server {shown(server_url)!r}: refusing to authorize"
            )
        return metadata
    return None


async def fetch_authorization_server_metadata(
    http: EitherAsyncClient, issuer: str, *, urls: list[str] | None = None
) -> AuthorizationServerMetadata | None:
    """The metadata of ``issuer`` from the first URL that has a valid document; None if none does.

    Raises :class:`IssuerMismatch` for a document whose ``issuer`` is not exactly ``issuer``.
    """
    for url in urls if urls is not None else authorization_server_metadata_urls(issuer):
        try:
            answer = await fetch(http, "GET", url)
        except http_errors() as exc:
            logger.debug("authorization server metadata at %s: %s", shown(url), exc)
            continue
        document = answer.json_object()
        if not answer.ok or document is None:
            logger.debug("no authorization server metadata at %s (HTTP %s)", shown(url), answer.status)
            continue
        try:
            metadata = AuthorizationServerMetadata.model_validate(document)
        except ValidationError:
            logger.debug("invalid authorization server metadata at %s", shown(url))
            continue
        if metadata.issuer != issuer:
            raise IssuerMismatch(
                f"the authorization server metadata at {shown(url)} names issuer {metadata.issuer!r}, "
                f"not {issuer!r}: refusing to use it"
            )
        return metadata
    return None


async def discover(
    http: EitherAsyncClient,
    server_url: str,
    *,
    resource_metadata: str | None = None,
    legacy_fallback: bool = True,
    issuer: str | None = None,
) -> Discovery:
    """Run discovery for the MCP server at ``server_url`` (``resource_metadata``: the 401 challenge's URL).

    ``issuer``: the authorization server a bound grant's credentials are for (None: whichever the server names).
    """
    trusted = (server_url,) if issuer is None else (server_url, issuer)
    protected = await fetch_protected_resource_metadata(http, server_url, resource_metadata)
    if protected is not None:
        if not protected.authorization_servers:
            raise DiscoveryError(
                f"the protected resource metadata of {shown(server_url)} names no authorization server"
            )
        chosen = pick_issuer(protected.authorization_servers, issuer, server_url=server_url)
        metadata = await fetch_authorization_server_metadata(http, chosen)
        if metadata is None:
            raise DiscoveryError(f"no authorization server metadata found for {chosen!r}")
        return Discovery(server_url, protected.resource, protected, _checked(metadata, trusted))
    if not legacy_fallback:
        raise DiscoveryError(f"no protected resource metadata found for {shown(server_url)}")
    base = origin(server_url)
    check_bound_issuer(base, issuer, server_url=server_url)
    logger.debug("no protected resource metadata for %s: 2025-03-26 discovery at %s", shown(server_url), shown(base))
    metadata = await fetch_authorization_server_metadata(http, base, urls=[_with_path(base, _OAUTH)])
    if metadata is None:
        metadata = AuthorizationServerMetadata(
            issuer=base,
            authorization_endpoint=_with_path(base, "/authorize"),
            token_endpoint=_with_path(base, "/token"),
            registration_endpoint=_with_path(base, "/register"),
            code_challenge_methods_supported=["S256"],  # 2025-03-26: PKCE is required of every server
        )
    return Discovery(server_url, canonical(server_url), None, _checked(metadata, trusted))


def _checked(metadata: AuthorizationServerMetadata, trusted: tuple[str, ...]) -> AuthorizationServerMetadata:
    """``metadata`` once every endpoint the flow may use passed :func:`check_learned_url`."""
    check_learned_url(metadata.token_endpoint, "token endpoint", trusted=trusted)
    for what, url in (
        ("authorization endpoint", metadata.authorization_endpoint),
        ("registration endpoint", metadata.registration_endpoint),
    ):
        if url is not None:
            check_learned_url(url, what, trusted=trusted)
    return metadata
