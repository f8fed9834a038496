"""The authorization code grant with PKCE (OAuth 2.1 §4.1), for hosts acting for a person.

The host opens the authorization URL in the person's browser and hands back where the browser was redirected:
that is the ``on_authorize`` hook, ``async (authorization_url) -> redirect URL or its query parameters``. It runs
inside ``waiting_on_a_person`` when the OAuth flow was given one, so the idle clocks of the calls in flight stop.

The answer is checked before the code is exchanged: ``state`` must be ours; an ``error`` ends the flow; the
RFC 9207 ``iss`` parameter, when present, must equal the issuer exactly (no normalization), and must be present
when the server advertised ``authorization_response_iss_parameter_supported``.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcp_client.auth.errors import AuthorizationError
from mcp_client.auth.metadata import TokenResponse
from mcp_client.auth.pkce import Pkce, new_state
from mcp_client.auth.registration import ClientIdentity, resolve_client
from mcp_client.auth.storage import ClientInformation
from mcp_client.auth.token_endpoint import request_token

if TYPE_CHECKING:
    from mcp_client.auth.grants import GrantContext

__all__ = ["AuthorizationCode", "AuthorizeCallback", "authorization_url", "callback_params"]

AuthorizeCallback = Callable[[str], Awaitable["str | Mapping[str, str]"]]
"""The host's browser hook: gets the authorization URL, returns the redirect URL the browser reached (or its
query parameters)."""


def authorization_url(endpoint: str, params: Mapping[str, str]) -> str:
    """``endpoint`` with ``params`` added to whatever query it already has."""
    parts = urlsplit(endpoint)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def callback_params(answer: str | Mapping[str, str]) -> dict[str, str]:
    """The authorization response parameters from a redirect URL (query, or fragment if the query has none) or
    from a mapping."""
    if not isinstance(answer, str):
        return {str(k): str(v) for k, v in answer.items()}
    parts = urlsplit(answer)
    query = parts.query or parts.fragment
    return dict(parse_qsl(query, keep_blank_values=True))


class AuthorizationCode:
    """Authorization code + PKCE S256, with the person signing in through ``on_authorize``.

    Args:
        redirect_uri: Where the authorization server sends the browser back (a loopback URL the host listens on,
            or an app's custom scheme).
        on_authorize: The browser hook (see the module docs).
        identity: How the client presents itself: pre-registered clients, a Client ID Metadata Document URL,
            the name used in dynamic registration.
    """

    interactive = True
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    issuer: str | None = None
    """Any authorization server the MCP server names: the person sees it and signs in there, and the client
    identity comes from :class:`ClientIdentity` (pre-registered clients with a secret are bound to their issuer)."""

    def __init__(
        self, redirect_uri: str, on_authorize: AuthorizeCallback, *, identity: ClientIdentity | None = None
    ) -> None:
        self.redirect_uri = redirect_uri
        self.on_authorize = on_authorize
        self.identity = identity if identity is not None else ClientIdentity()

    def __repr__(self) -> str:
        return f"AuthorizationCode(redirect_uri={self.redirect_uri!r})"

    async def client(self, context: GrantContext) -> ClientInformation:
        """The client identity at the discovered authorization server (registering if need be)."""
        return await resolve_client(
            context.http,
            context.discovery.metadata,
            context.storage,
            self.identity,
            redirect_uri=self.redirect_uri,
            grant_types=self.grant_types,
        )

    async def obtain(self, context: GrantContext) -> TokenResponse:
        """Run the browser sign-in and exchange the code."""
        metadata = context.discovery.metadata
        issuer = metadata.issuer
        if not metadata.authorization_endpoint:
            raise AuthorizationError(f"the authorization server {issuer!r} has no authorization endpoint")
        methods = metadata.code_challenge_methods_supported
        if methods is None or "S256" not in methods:
            raise AuthorizationError(
                f"the authorization server {issuer!r} does not advertise PKCE S256 "
                f"(code_challenge_methods_supported: {methods}): refusing to authorize"
            )
        client = await self.client(context)
        pkce = Pkce()
        state = new_state()
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            "code_challenge": pkce.challenge,
            "code_challenge_method": pkce.method,
            "resource": context.discovery.resource,
        }
        if context.scopes:
            params["scope"] = " ".join(context.scopes)
        url = authorization_url(metadata.authorization_endpoint, params)
        with context.pause():
            answer = await self.on_authorize(url)
        code = self._check_response(
            callback_params(answer), state, issuer, metadata.authorization_response_iss_parameter_supported
        )
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": pkce.verifier,
            "resource": context.discovery.resource,
        }
        return await request_token(context.http, metadata, form, client=client, dpop=context.dpop)

    @staticmethod
    def _check_response(params: Mapping[str, str], state: str, issuer: str, iss_required: bool) -> str:
        received_state = params.get("state", "")
        if not hmac.compare_digest(received_state.encode(), state.encode()):
            raise AuthorizationError("the authorization response does not carry this request's state: ignored")
        iss = params.get("iss")
        if iss is not None and iss != issuer:
            raise AuthorizationError(
                f"the authorization response comes from issuer {iss!r}, not {issuer!r} (RFC 9207): ignored"
            )
        if iss is None and iss_required:
            raise AuthorizationError(
                f"the authorization server {issuer!r} advertises the iss parameter but its response has none "
                "(RFC 9207): ignored"
            )
        error = params.get("error")
        if error:
            description = params.get("error_description")
            detail = f": {description}" if description else ""
            raise AuthorizationError(
                f"authorization was not granted ({error}){detail}", error=error, description=description
            )
        code = params.get("code")
        if not code:
            raise AuthorizationError("the authorization response has no code")
        return code
