"""The documents OAuth exchanges, as read from the wire: protected resource metadata (RFC 9728), authorization
server metadata (RFC 8414 / OpenID Connect Discovery), token responses (RFC 6749 §5.1) and client registration
responses (RFC 7591). Unknown members are kept; wrong types fail validation (the document is then not used).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "AuthorizationServerMetadata",
    "ProtectedResourceMetadata",
    "RegistrationResponse",
    "TokenResponse",
]


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ProtectedResourceMetadata(_Document):
    """RFC 9728 §2: what the MCP server says about itself as an OAuth protected resource."""

    resource: str
    authorization_servers: list[str] = Field(default_factory=list)
    scopes_supported: list[str] | None = None
    dpop_bound_access_tokens_required: bool = False
    dpop_signing_alg_values_supported: list[str] | None = None


class AuthorizationServerMetadata(_Document):
    """RFC 8414 §2 (OpenID Connect Discovery documents carry the same members)."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    response_types_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    client_id_metadata_document_supported: bool = False
    authorization_response_iss_parameter_supported: bool = False
    dpop_signing_alg_values_supported: list[str] | None = None

    def supports_auth_method(self, method: str) -> bool:
        """Whether the token endpoint accepts ``method`` (RFC 8414: absent means ``client_secret_basic`` only)."""
        supported = self.token_endpoint_auth_methods_supported
        return method in (supported if supported is not None else ["client_secret_basic"])


class TokenResponse(_Document):
    """A successful token endpoint answer."""

    access_token: str = Field(repr=False)
    token_type: str = "Bearer"
    expires_in: float | None = None
    refresh_token: str | None = Field(default=None, repr=False)
    scope: str | None = None

    @field_validator("access_token")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value:
            raise ValueError("access_token is empty")
        return value


class RegistrationResponse(_Document):
    """RFC 7591 §3.2.1: the client the authorization server registered."""

    client_id: str
    client_secret: str | None = Field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    redirect_uris: list[str] | None = None
    client_secret_expires_at: float | None = None
