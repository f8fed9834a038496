"""OAuth 2.1 authorization for MCP over Streamable HTTP (the spec's "Authorization" chapter).

```python
import httpx2
from mcp_client import Client
from mcp_client.auth import OAuth, AuthorizationCode, FileTokenStorage
from mcp_client.transports.http import http

async def sign_in(url: str) -> str:          # open the browser, return the URL it was redirected to
    ...

auth = OAuth(
    AuthorizationCode("http://127.0.0.1:8765/callback", sign_in),
    storage=FileTokenStorage("~/.config/my-host/tokens.json"),
)
async with httpx2.AsyncClient(auth=auth) as client, Client(http(url, client=client)) as mcp:
    await mcp.list_tools()
```

Machine-to-machine hosts use :class:`ClientCredentials`, :class:`JwtBearer` (workload identity federation) or
:class:`EnterpriseManaged` (SEP-990) instead of :class:`AuthorizationCode`. See ``docs/oauth.md``.
"""

from mcp_client.auth.authorization_code import AuthorizationCode, AuthorizeCallback, callback_params
from mcp_client.auth.challenge import Challenge, parse_www_authenticate
from mcp_client.auth.discovery import Discovery, discover
from mcp_client.auth.dpop import DPoPKey
from mcp_client.auth.errors import (
    AuthorizationError,
    DiscoveryError,
    InsufficientScope,
    IssuerMismatch,
    OAuthError,
    RegistrationError,
    ResourceMismatch,
    TokenError,
    Unauthorized,
    UnsafeURL,
    UntrustedIssuer,
)
from mcp_client.auth.grants import ClientCredentials, EnterpriseManaged, Grant, GrantContext, JwtBearer
from mcp_client.auth.metadata import AuthorizationServerMetadata, ProtectedResourceMetadata, TokenResponse
from mcp_client.auth.provider import OAuth
from mcp_client.auth.registration import ClientIdentity
from mcp_client.auth.storage import (
    ClientInformation,
    FileTokenStorage,
    InMemoryTokenStorage,
    StoredTokens,
    TokenStorage,
)
from mcp_client.auth.token_endpoint import PrivateKeyJwt

__all__ = [
    "AuthorizationCode",
    "AuthorizationError",
    "AuthorizationServerMetadata",
    "AuthorizeCallback",
    "Challenge",
    "ClientCredentials",
    "ClientIdentity",
    "ClientInformation",
    "DPoPKey",
    "Discovery",
    "DiscoveryError",
    "EnterpriseManaged",
    "FileTokenStorage",
    "Grant",
    "GrantContext",
    "InMemoryTokenStorage",
    "InsufficientScope",
    "IssuerMismatch",
    "JwtBearer",
    "OAuth",
    "OAuthError",
    "PrivateKeyJwt",
    "ProtectedResourceMetadata",
    "RegistrationError",
    "ResourceMismatch",
    "StoredTokens",
    "TokenError",
    "TokenResponse",
    "TokenStorage",
    "Unauthorized",
    "UnsafeURL",
    "UntrustedIssuer",
    "callback_params",
    "discover",
    "parse_www_authenticate",
]
