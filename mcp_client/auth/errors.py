"""What can go wrong while authorizing: every error is an :class:`OAuthError`, itself an
:class:`~mcp_client.MCPClientError`.

```
OAuthError
├── DiscoveryError            no usable protected resource / authorization server metadata
│   ├── ResourceMismatch      the metadata names another resource than the MCP server (refused before any redirect)
│   ├── IssuerMismatch        the authorization server metadata names another issuer than the one asked
│   ├── UntrustedIssuer       the MCP server names an authorization server the host's credentials are not for
│   └── UnsafeURL             a URL learned from a server is neither https nor http on a loopback host
├── RegistrationError         no client identity could be had (nothing pre-registered, no CIMD, no DCR)
├── AuthorizationError        the authorization response was an error, or failed the state / ``iss`` checks
├── TokenError                the token endpoint refused (``.error`` is the OAuth error code)
├── Unauthorized              the server refused a token it had just been given
└── InsufficientScope         a 403 ``insufficient_scope`` that re-authorizing cannot (or may no longer) fix
```

They are not :class:`~mcp_client.TransportError` on purpose: a retry policy must never re-run a failed sign-in.
No message ever contains a token, a code, a secret or a verifier.
"""

from __future__ import annotations

from typing import Any

from mcp_client.errors import MCPClientError

__all__ = [
    "AuthorizationError",
    "DiscoveryError",
    "InsufficientScope",
    "IssuerMismatch",
    "OAuthError",
    "RegistrationError",
    "ResourceMismatch",
    "TokenError",
    "Unauthorized",
    "UnsafeURL",
    "UntrustedIssuer",
]


class OAuthError(MCPClientError):
    """Authorization with the MCP server's authorization server failed."""

    refusal = True  # no authorization: nothing ran
    outcome = "authorization"

    def __init__(
        self,
        message: str,
        *,
        error: str | None = None,
        description: str | None = None,
        status_code: int | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.error = error
        """The OAuth error code (``invalid_grant``, ``access_denied``...), when there was one."""
        self.description = description
        """The server's ``error_description``, when it gave one."""
        self.status_code = status_code
        """The HTTP status of the answer that failed, when there was one."""


class DiscoveryError(OAuthError):
    """No usable protected resource metadata or authorization server metadata was found."""


class ResourceMismatch(DiscoveryError):
    """The protected resource metadata names a resource that is not the MCP server: nothing was sent anywhere."""


class IssuerMismatch(DiscoveryError):
    """The authorization server metadata's ``issuer`` is not the issuer its well-known URL was built from."""


class UntrustedIssuer(DiscoveryError):
    """The MCP server names an authorization server that the grant's static credentials (a client secret, a
    private key, an assertion) were not made for: nothing was sent to it."""


class UnsafeURL(DiscoveryError):
    """A URL learned from a server (a challenge's ``resource_metadata``, an authorization server, an endpoint of
    its metadata) is neither ``https`` nor ``http`` on a loopback host or an origin the host configured: it was
    not used."""


class RegistrationError(OAuthError):
    """No client identity: nothing pre-registered for this issuer, no Client ID Metadata Document, and dynamic
    client registration was unavailable or refused."""


class AuthorizationError(OAuthError):
    """The authorization response was an error (``access_denied``...), or failed a check (``state``, RFC 9207
    ``iss``, a missing ``code``): the code was not exchanged."""


class TokenError(OAuthError):
    """The token endpoint answered with an error (``.error`` holds its code)."""


class Unauthorized(OAuthError):
    """The MCP server answered 401 to a token that had just been issued for it."""


class InsufficientScope(OAuthError):
    """The MCP server wants scopes (``.scopes``) that re-authorization did not, or cannot, bring."""

    def __init__(self, message: str, *, scopes: tuple[str, ...] = (), **context: Any) -> None:
        context.setdefault("error", "insufficient_scope")
        context.setdefault("status_code", 403)
        super().__init__(message, **context)
        self.scopes = scopes
        """The scopes the server's challenge asked for."""
