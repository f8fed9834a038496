"""The OAuth client for MCP's Streamable HTTP transport, as an ``httpx2.Auth`` that is an ``httpx.Auth`` too.

Pass it to the client the transport uses (``httpx2.AsyncClient(auth=OAuth(...))``, or httpx 0.28's
``httpx.AsyncClient(auth=OAuth(...))``), or to the transport directly where it takes ``auth=``. Its flow reads
and sets only what requests and responses of both lines have, so either client can run it; when httpx is
installed the class derives from both lines' ``Auth`` (each client checks for its own). For every request to the
MCP server's origin it:

1. attaches the stored token (``Authorization: Bearer …``, or ``DPoP …`` with a fresh proof), refreshing it first
   if it has expired;
2. on **401**: answers a DPoP ``use_dpop_nonce`` challenge once with the new nonce; otherwise runs discovery
   (RFC 9728, RFC 8414), refreshes the token if it can, else obtains a new one through the :class:`Grant`, and
   sends the request again, once; a second 401 raises :class:`Unauthorized`;
3. on **403** ``insufficient_scope``: re-authorizes with the scopes asked before plus the challenged ones, at most
   ``max_step_ups`` times per request, and never when that would ask for nothing new (the server already refused
   those scopes): :class:`InsufficientScope` then.

Requests to any other origin pass through untouched: tokens never leave the MCP server's origin (side exchanges
run on a separate client and carry only what their endpoint needs). Tokens are never logged.

Only one task at a time renews the tokens of a store, across every ``OAuth`` on that store (and every process, for a
:class:`~mcp_client.auth.FileTokenStorage`); others waiting on it reuse its result. A renewal starts from the tokens
stored now, not from those its request was sent with, so a rotated refresh token is never sent twice; a refused
refresh forgets the stored tokens only if they are still the ones that were refused. Discovery and token exchange run
inside the send of the request that met the 401, so whatever bounds that request (the connect budget for the
first one) bounds them too; each side exchange is also bounded by ``exchange_timeout``. The browser sign-in runs
inside ``waiting_on_a_person`` (see :attr:`OAuth.waiting_on_a_person`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from mcp_client._log_guard import package_logger
from mcp_client.auth._http import same_origin, shown
from mcp_client.auth.challenge import Challenge, parse_www_authenticate, pick_challenge
from mcp_client.auth.discovery import Discovery, discover
from mcp_client.auth.dpop import DPoPKey, htu
from mcp_client.auth.errors import InsufficientScope, TokenError, Unauthorized
from mcp_client.auth.grants import Grant, GrantContext
from mcp_client.auth.renewal_lock import renewal_lock
from mcp_client.auth.scopes import select_scopes, union
from mcp_client.auth.storage import InMemoryTokenStorage, StoredTokens, TokenStorage
from mcp_client.auth.token_endpoint import request_token, stored_tokens
from mcp_client.transports.bounded_body import MAX_RETRIED_BODY, discard_before_retry

__all__ = ["OAuth"]

logger = package_logger("mcp_client.auth")

PauseFactory = Callable[[], AbstractContextManager[Any]]

if TYPE_CHECKING:
    import httpx

    from mcp_client._httpx import EitherAsyncClient

    class _AuthOfBothLines(httpx2.Auth, httpx.Auth):
        """What an OAuth is to either client."""

        def auth_flow(self, request: Any) -> Generator[Any, Any, None]: ...
        def sync_auth_flow(self, request: Any) -> Generator[Any, Any, None]: ...
        def async_auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]: ...

else:
    # httpx only if installed: a host without it has no httpx.AsyncClient to hand us.
    _AuthOfBothLines = type(
        "_AuthOfBothLines",
        (httpx2.Auth, __import__("httpx").Auth) if find_spec("httpx") is not None else (httpx2.Auth,),
        {"__doc__": "What an OAuth is to either client.", "__module__": __name__},
    )


class OAuth(_AuthOfBothLines):
    """OAuth 2.1 for one MCP server, driven by the server's 401 and 403 answers.

    Args:
        grant: How tokens are obtained: :class:`AuthorizationCode` (a person signs in), :class:`ClientCredentials`,
            :class:`JwtBearer` or :class:`EnterpriseManaged`.
        server_url: The MCP endpoint. Default: the URL of the first request (only its origin gets tokens).
        storage: Where tokens and registered clients are kept (default: in memory).
        scopes: Scopes to request when the server names none (neither in its challenge nor in its metadata).
        offline_access: Ask for ``offline_access`` (a refresh token) when the authorization server lists it.
        dpop: True: always DPoP-bind tokens (RFC 9449); False: never; None (default): when the server's challenge
            uses the ``DPoP`` scheme or its metadata requires bound tokens, and the authorization server takes ES256.
            A :class:`DPoPKey` behaves as None but with that key (keep it to reuse bound tokens across runs).
        http_client: Client for the side exchanges (metadata, registration, tokens), an ``httpx2.AsyncClient`` or
            an ``httpx.AsyncClient``; default: a new ``httpx2.AsyncClient`` per flow, without redirects, with
            ``exchange_timeout``. Never the MCP connection's own client.
        exchange_timeout: Seconds allowed for each side exchange when ``http_client`` is not given.
        max_step_ups: Re-authorizations for ``insufficient_scope`` allowed per request.
        legacy_fallback: Allow 2025-03-26 discovery (no protected resource metadata: the MCP server's origin is the
            authorization server, with default endpoints if it has no metadata either).
        waiting_on_a_person: A context manager factory entered around the browser sign-in (the session's
            ``waiting_on_a_person``); may also be set later through the attribute.
    """

    requires_request_body = False
    requires_response_body = False

    def __init__(
        self,
        grant: Grant,
        *,
        server_url: str | None = None,
        storage: TokenStorage | None = None,
        scopes: Sequence[str] | None = None,
        offline_access: bool = True,
        dpop: bool | DPoPKey | None = None,
        http_client: EitherAsyncClient | None = None,
        exchange_timeout: float = 30.0,
        max_step_ups: int = 2,
        legacy_fallback: bool = True,
        waiting_on_a_person: PauseFactory | None = None,
    ) -> None:
        if max_step_ups < 0:
            raise ValueError("max_step_ups must be >= 0")
        self.grant = grant
        self.server_url = htu(server_url) if server_url is not None else None
        self.storage: TokenStorage = storage if storage is not None else InMemoryTokenStorage()
        self.scopes = tuple(scopes) if scopes is not None else None
        self.offline_access = offline_access
        self._dpop_mode = dpop if isinstance(dpop, bool) or dpop is None else None
        self._dpop_key = dpop if isinstance(dpop, DPoPKey) else None
        self._http = http_client
        self.exchange_timeout = exchange_timeout
        self.max_step_ups = max_step_ups
        self.legacy_fallback = legacy_fallback
        self.waiting_on_a_person: PauseFactory | None = waiting_on_a_person
        """Entered around the browser sign-in; connect it to ``Session.waiting_on_a_person``."""
        self._lock: anyio.Lock | None = None
        self._discovery: Discovery | None = None

    def __repr__(self) -> str:
        return f"OAuth({self.grant!r}, server_url={self.server_url!r})"

    @property
    def discovery(self) -> Discovery | None:
        """What the last discovery found (None before the first one)."""
        return self._discovery

    async def tokens(self) -> StoredTokens | None:
        """The stored tokens for the MCP server (None before the first authorization)."""
        return await self.storage.get_tokens(self._key) if self.server_url is not None else None

    async def sign_out(self) -> None:
        """Forget the tokens for the MCP server (registered clients are kept)."""
        if self.server_url is not None:
            await self.storage.set_tokens(self._key, None)

    # -- the Auth of either line ------------------------------------------------------------------------------
    # Requests and responses are typed Any here: they are httpx2's or httpx's, whichever client runs the flow.

    def sync_auth_flow(self, request: Any) -> Generator[Any, Any, None]:
        raise RuntimeError("mcp_client's OAuth works with an async client (httpx2.AsyncClient, httpx.AsyncClient) only")

    async def async_auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
        if self.server_url is None:
            self.server_url = htu(str(request.url))
        if not same_origin(str(request.url), self.server_url):
            yield request  # another origin never sees our tokens
            return
        tokens = await self._usable_tokens()
        self._apply(request, tokens)
        response = yield request
        self._note_nonce(response)
        renewed = False
        nonce_retried = False
        step_ups = 0
        while True:
            challenge = pick_challenge(parse_www_authenticate(response.headers.get_list("www-authenticate")))
            if response.status_code == 401:
                if self._nonce_challenge(tokens, challenge) and not nonce_retried:
                    nonce_retried = True
                elif renewed:
                    raise Unauthorized(
                        f"{shown(self.server_url)} refused the token it was just issued (HTTP 401)", status_code=401
                    )
                else:
                    tokens = await self._renew(tokens, challenge)
                    renewed, nonce_retried = True, False
            elif response.status_code == 403 and challenge is not None and challenge.error == "insufficient_scope":
                tokens = await self._step_up(tokens, challenge, step_ups)
                step_ups += 1
                nonce_retried = False
            else:
                return
            await discard_before_retry(response, MAX_RETRIED_BODY)  # (httpx reads it whole otherwise)
            self._apply(request, tokens)
            response = yield request
            self._note_nonce(response)

    # -- tokens on requests -----------------------------------------------------------------------------------

    @property
    def _key(self) -> str:
        assert self.server_url is not None
        return self.server_url

    def _apply(self, request: Any, tokens: StoredTokens | None) -> None:
        if tokens is None:
            return
        if tokens.token_type == "DPoP" and self._dpop_key is not None:
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self._dpop_key.proof(
                request.method, str(request.url), access_token=tokens.access_token
            )
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"

    def _note_nonce(self, response: Any) -> None:
        if self._dpop_key is not None:
            self._dpop_key.remember_nonce(str(response.request.url), response.headers.get("dpop-nonce"))

    def _nonce_challenge(self, tokens: StoredTokens | None, challenge: Challenge | None) -> bool:
        return (
            tokens is not None
            and tokens.token_type == "DPoP"
            and challenge is not None
            and challenge.error == "use_dpop_nonce"
        )

    def _bound_to_us(self, tokens: StoredTokens) -> bool:
        if tokens.dpop_jkt is None:
            return True
        return self._dpop_key is not None and self._dpop_key.thumbprint == tokens.dpop_jkt

    async def _usable_tokens(self) -> StoredTokens | None:
        tokens = await self.storage.get_tokens(self._key)
        if tokens is None or not self._bound_to_us(tokens):
            return None
        if not tokens.expired():
            return tokens
        if tokens.refresh_token is None:
            return None
        async with self._locked():
            current = await self.storage.get_tokens(self._key)
            if current is None or not self._bound_to_us(current):
                return None
            if not current.expired():
                return current  # another task (or process) renewed them meanwhile
            if current.refresh_token is None:
                return None
            async with self._side_client() as http:
                try:
                    discovery = self._discovery or await self._discover(http, None)
                except Exception as exc:  # the request goes out without a token; its 401 starts over
                    logger.debug("discovery for a refresh failed: %s", exc)
                    return None
                return await self._refresh(http, discovery, current)

    # -- getting tokens ---------------------------------------------------------------------------------------

    @property
    def _wants_refresh_tokens(self) -> bool:
        return self.offline_access and "refresh_token" in self.grant.grant_types

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with renewal_lock(self.storage, self._lock):
            yield

    @asynccontextmanager
    async def _side_client(self) -> AsyncIterator[EitherAsyncClient]:
        if self._http is not None:
            yield self._http
            return
        async with httpx2.AsyncClient(timeout=self.exchange_timeout, follow_redirects=False) as http:
            yield http

    async def _discover(self, http: EitherAsyncClient, challenge: Challenge | None) -> Discovery:
        assert self.server_url is not None
        discovery = await discover(
            http,
            self.server_url,
            resource_metadata=challenge.resource_metadata if challenge is not None else None,
            legacy_fallback=self.legacy_fallback,
            issuer=getattr(self.grant, "issuer", None),  # a grant of a host's own making may predate the attribute
        )
        self._discovery = discovery
        return discovery

    def _dpop_for(self, discovery: Discovery, challenge: Challenge | None, sent: StoredTokens | None) -> DPoPKey | None:
        if self._dpop_mode is False:
            return None
        protected = discovery.protected_resource
        wanted = (
            self._dpop_mode is True
            or (sent is not None and sent.token_type == "DPoP")
            or (challenge is not None and challenge.scheme == "dpop")
            or (protected is not None and protected.dpop_bound_access_tokens_required)
        )
        if not wanted:
            return None
        if self._dpop_key is None:
            self._dpop_key = DPoPKey()
        algorithms = discovery.metadata.dpop_signing_alg_values_supported
        if self._dpop_mode is None and algorithms is not None and self._dpop_key.algorithm not in algorithms:
            logger.debug("the authorization server takes no %s DPoP proofs: bearer tokens", self._dpop_key.algorithm)
            return None
        return self._dpop_key

    async def _renew(self, sent: StoredTokens | None, challenge: Challenge | None) -> StoredTokens:
        """After a 401: the token another task just got, a refreshed one, or a new one."""
        async with self._locked():
            current = await self.storage.get_tokens(self._key)
            if (
                current is not None
                and (sent is None or current.access_token != sent.access_token)
                and self._bound_to_us(current)
                and not current.expired()
            ):
                return current
            async with self._side_client() as http:
                discovery = await self._discover(http, challenge)
                dpop = self._dpop_for(discovery, challenge, sent)
                if current is not None and self._bound_to_us(current) and current.refresh_token is not None:
                    refreshed = await self._refresh(http, discovery, current)  # the stored one: never a spent one
                    if refreshed is not None:
                        return refreshed
                protected = discovery.protected_resource
                scopes = select_scopes(
                    challenged=challenge.scopes if challenge is not None else None,
                    resource_scopes=protected.scopes_supported if protected is not None else None,
                    default=self.scopes,
                    server_scopes=discovery.metadata.scopes_supported,
                    offline_access=self._wants_refresh_tokens,
                )
                return await self._obtain(http, discovery, scopes, dpop)

    async def _step_up(self, sent: StoredTokens | None, challenge: Challenge, done: int) -> StoredTokens:
        """After a 403 ``insufficient_scope``: a token for the union of the scopes asked before and now."""
        required = challenge.scopes or ()
        previous = sent.requested_scopes if sent is not None else None
        wanted = union(previous, required)
        server = shown(self.server_url or "the MCP server")
        if done >= self.max_step_ups:
            raise InsufficientScope(
                f"{server} still wants scopes {list(required)} after {done} re-authorizations",
                scopes=required,
            )
        if previous is not None and set(wanted) <= set(previous):
            raise InsufficientScope(
                f"{server} refuses the token for lack of scopes {list(required)}, which were already "
                "requested: re-authorizing cannot help",
                scopes=required,
            )
        async with self._locked():
            current = await self.storage.get_tokens(self._key)
            if (
                current is not None
                and sent is not None
                and current.access_token != sent.access_token
                and set(wanted) <= set(current.requested_scopes or ())
                and self._bound_to_us(current)
                and not current.expired()
            ):
                return current
            async with self._side_client() as http:
                discovery = await self._discover(http, challenge)
                scopes = select_scopes(
                    challenged=wanted,
                    resource_scopes=None,
                    server_scopes=discovery.metadata.scopes_supported,
                    offline_access=self._wants_refresh_tokens,
                )
                return await self._obtain(http, discovery, scopes, self._dpop_for(discovery, challenge, sent))

    async def _obtain(
        self, http: EitherAsyncClient, discovery: Discovery, scopes: tuple[str, ...] | None, dpop: DPoPKey | None
    ) -> StoredTokens:
        context = GrantContext(http, discovery, self.storage, scopes, dpop, self.waiting_on_a_person or nullcontext)
        logger.debug("authorizing with %s for %s (scopes %s)", discovery.issuer, discovery.resource, scopes)
        token = await self.grant.obtain(context)
        tokens = stored_tokens(
            token, issuer=discovery.issuer, resource=discovery.resource, requested_scopes=scopes, dpop=dpop
        )
        await self.storage.set_tokens(self._key, tokens)
        return tokens

    async def _refresh(
        self, http: EitherAsyncClient, discovery: Discovery, tokens: StoredTokens
    ) -> StoredTokens | None:
        """A refreshed token, or None (the old one is then forgotten when the server refused the refresh token)."""
        if tokens.refresh_token is None or tokens.issuer != discovery.issuer:
            return None
        dpop = self._dpop_key if tokens.dpop_jkt is not None else None
        context = GrantContext(http, discovery, self.storage, tokens.requested_scopes, dpop, nullcontext)
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": tokens.resource}
        try:
            client = await self.grant.client(context)
            token = await request_token(
                http, discovery.metadata, form, client=client, signer=getattr(self.grant, "signer", None), dpop=dpop
            )
        except TokenError as exc:
            logger.debug("refreshing the token failed: %s", exc)
            if exc.error in ("invalid_grant", "invalid_client", "unauthorized_client"):
                stored = await self.storage.get_tokens(self._key)
                if stored is not None and (stored.access_token, stored.refresh_token) == (
                    tokens.access_token,
                    tokens.refresh_token,
                ):
                    await self.storage.set_tokens(self._key, None)  # only what failed, not what replaced it
            return None
        refreshed = stored_tokens(
            token,
            issuer=tokens.issuer,
            resource=tokens.resource,
            requested_scopes=tokens.requested_scopes,
            dpop=dpop,
            previous_refresh_token=tokens.refresh_token,
        )
        await self.storage.set_tokens(self._key, refreshed)
        logger.debug("refreshed the token for %s", tokens.resource)
        return refreshed
