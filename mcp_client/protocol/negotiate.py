"""Finding out which protocol era a server speaks, and starting the session in it.

The rule of the spec's backward-compatibility section, applied in order:

1. Send ``server/discover`` at the newest modern version. A ``DiscoverResult`` naming a version we speak: modern.
2. A recognised modern error (``-32022``, ``-32021``, ``-32020``) also identifies a modern server: with ``-32022``
   pick a mutual modern version and probe once more (new id); if the server lists only handshake versions we
   accept, fall back to ``initialize``; if nothing is mutual, fail with the versions named.
3. Any other error, an answer that is not a ``DiscoverResult``, or no answer within the probe timeout: a legacy
   server. Run ``initialize`` + ``notifications/initialized`` (neither the probe nor ``initialize`` is ever
   cancelled on the wire). The fallback is never keyed to one error code.

A transport failure during all this is a :class:`~mcp_client.ConnectError`.

Negotiation owns the era's knowledge across connections too: :func:`start` consults the per-endpoint
:data:`ERA_CACHE` first and keeps it up to date. It talks to the server through a :class:`Handshake` (requests,
one notification, and the era to use from now on), so it knows nothing of the session or the call machinery
behind it; the session is the one owner of the era of its connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import mcp_types
from pydantic import ValidationError

from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject
from mcp_client.errors import (
    ConnectError,
    HeaderMismatch,
    MCPClientError,
    MissingClientCapability,
    ProtocolError,
    RequestTimeout,
    ServerError,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_client.policy import TimeoutPolicy
from mcp_client.protocol.era import LEGACY_VERSIONS, MODERN_VERSIONS, SERVER_INFO_KEY, Era

__all__ = ["ERA_CACHE", "EraCache", "Handshake", "ProtocolMode", "ServerIdentity", "negotiate", "start"]

logger = package_logger("mcp_client.protocol")

ProtocolMode = Literal["auto"] | str
"""``"auto"`` (probe, then fall back), or one protocol version to use without probing for others."""


class Handshake(Protocol):
    """What negotiation needs of the connection it starts."""

    async def request(
        self, method: str, params: JSONObject, *, policy: TimeoutPolicy, want_progress: bool = True
    ) -> JSONObject:
        """Run one request (stamped for the era last given to :meth:`use_era`) and return its result."""
        ...

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send one notification."""
        ...

    def use_era(self, era: Era) -> None:
        """Speak ``era`` from now on."""
        ...


class EraCache:
    """The protocol version that worked with each HTTP origin, for this process.

    The spec: the era "is a property of the server, not of an individual request"; clients SHOULD cache it per
    origin and re-probe if the cached assumption later fails. A legacy origin then skips the discover probe.
    """

    def __init__(self, limit: int = 1024) -> None:
        self._versions: dict[str, str] = {}
        self._limit = limit

    def get(self, key: str | None) -> str | None:
        """The version remembered for ``key`` (None for no key)."""
        return self._versions.get(key) if key is not None else None

    def remember(self, key: str | None, version: str) -> None:
        """``version`` worked with ``key``."""
        if key is None:
            return
        if len(self._versions) >= self._limit and key not in self._versions:
            self._versions.pop(next(iter(self._versions)))
        self._versions[key] = version

    def forget(self, key: str | None) -> None:
        """The remembered version failed: probe again next time."""
        if key is not None:
            self._versions.pop(key, None)


ERA_CACHE = EraCache()
"""The process-wide cache the client uses."""


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """What the server told us about itself while the session started."""

    era: Era
    server_info: mcp_types.Implementation | None
    capabilities: mcp_types.ServerCapabilities
    instructions: str | None
    discovered: dict[str, Any] | None = None
    """The ``DiscoverResult`` as received, when the session started with one (a cacheable answer)."""


async def start(
    handshake: Handshake,
    *,
    mode: ProtocolMode,
    cache_key: str | None,
    client_info: dict[str, Any],
    capabilities: dict[str, Any],
    probe_timeout: float,
    cache: EraCache = ERA_CACHE,
    handshake_only: bool = False,
) -> ServerIdentity:
    """Start the session: with the era remembered for ``cache_key`` (mode ``"auto"`` only) if there is one and it
    still works, else by :func:`negotiate`; the era that worked is remembered. ``handshake_only``: the transport
    carries only ``initialize`` eras (HTTP+SSE), so ``"auto"`` means the newest of them, without a probe."""
    if handshake_only:
        if mode in MODERN_VERSIONS:
            raise ConnectError(f"protocol {mode} is not carried over this transport; it speaks {LEGACY_VERSIONS}")
        if mode == "auto":
            mode = LEGACY_VERSIONS[0]
    key = cache_key if mode == "auto" else None
    known = cache.get(key)
    if known is not None:
        try:
            return await negotiate(
                handshake, mode=known, client_info=client_info, capabilities=capabilities, probe_timeout=probe_timeout
            )
        except MCPClientError as exc:  # the server changed since: find out again
            logger.info("the remembered protocol %s no longer works (%s); probing again", known, exc)
            cache.forget(key)
    identity = await negotiate(
        handshake, mode=mode, client_info=client_info, capabilities=capabilities, probe_timeout=probe_timeout
    )
    cache.remember(key, identity.era.version)
    return identity


async def negotiate(
    handshake: Handshake,
    *,
    mode: ProtocolMode,
    client_info: dict[str, Any],
    capabilities: dict[str, Any],
    probe_timeout: float,
) -> ServerIdentity:
    """Settle the era with the server behind ``handshake`` and return what it said about itself."""
    try:
        if mode in LEGACY_VERSIONS:
            return await _initialize(handshake, mode, client_info, capabilities)
        if mode != "auto" and mode not in MODERN_VERSIONS:
            raise ValueError(
                f"unknown protocol version {mode!r}; use 'auto' or one of {MODERN_VERSIONS + LEGACY_VERSIONS}"
            )
        return await _probe(handshake, mode, client_info, capabilities, probe_timeout)
    except TransportError as exc:
        raise ConnectError(f"the connection failed while starting the session: {exc}") from exc


async def _probe(
    handshake: Handshake, mode: str, client_info: dict[str, Any], capabilities: dict[str, Any], probe_timeout: float
) -> ServerIdentity:
    version = MODERN_VERSIONS[0] if mode == "auto" else mode
    # A person signing in (OAuth) while the probe waits does not use up its time.
    policy = TimeoutPolicy(idle=None, maximum=probe_timeout, connect=None, pause_maximum=True)
    for _attempt in range(2):
        era = Era(version, modern=True, client_info=client_info, capabilities=capabilities)
        handshake.use_era(era)
        try:
            result = await handshake.request("server/discover", {}, policy=policy, want_progress=False)
        except UnsupportedProtocolVersion as exc:
            mutual = [v for v in MODERN_VERSIONS if v in exc.supported]
            if mutual and (mutual[0] != version or _attempt == 0):
                # Retry once at the mutual version, with a new id, even when it is the one just refused.
                version = mutual[0]
                continue
            if any(v in LEGACY_VERSIONS for v in exc.supported) and mode == "auto":
                return await _initialize(handshake, LEGACY_VERSIONS[0], client_info, capabilities)
            raise ConnectError(
                f"the server supports protocol versions {exc.supported}, none of which this client speaks"
            ) from exc
        except (HeaderMismatch, MissingClientCapability) as exc:
            logger.debug("discover answered with a modern error (%s): a modern server", exc)
            return ServerIdentity(era, None, mcp_types.ServerCapabilities(), None)
        except (ServerError, RequestTimeout, ProtocolError) as exc:
            # Any other error (a transport failure, a refused sign-in) is no sign of a legacy server: it propagates.
            if mode != "auto":
                raise
            logger.debug("discover failed (%s): falling back to initialize", exc)
            try:
                return await _initialize(handshake, LEGACY_VERSIONS[0], client_info, capabilities)
            except UnsupportedProtocolVersion as refused:
                # The probe only came too late: the server read it once it was up, serves 2026-07-28 from then
                # on and refuses the handshake naming it. Probe once more (a new id) at a version it named.
                mutual = [v for v in MODERN_VERSIONS if v in refused.supported]
                if not isinstance(exc, RequestTimeout) or not mutual or _attempt:
                    raise
                logger.debug("initialize refused after a probe timed out (%s): probing again", refused)
                version = mutual[0]
                continue
        return await _adopt_discover_result(handshake, result, mode, client_info, capabilities)
    raise ConnectError("the server kept rejecting the protocol version it named as supported")


async def _adopt_discover_result(
    handshake: Handshake, result: dict[str, Any], mode: str, client_info: dict[str, Any], capabilities: dict[str, Any]
) -> ServerIdentity:
    try:
        discovered = mcp_types.DiscoverResult.model_validate(result)
    except ValidationError:
        if mode != "auto":
            raise ConnectError("the server's answer to server/discover is not a DiscoverResult") from None
        logger.debug("discover answered with something else (%r): falling back to initialize", result)
        return await _initialize(handshake, LEGACY_VERSIONS[0], client_info, capabilities)
    mutual = [v for v in MODERN_VERSIONS if v in discovered.supported_versions]
    if not mutual:
        if mode == "auto" and any(v in LEGACY_VERSIONS for v in discovered.supported_versions):
            return await _initialize(handshake, LEGACY_VERSIONS[0], client_info, capabilities)
        raise ConnectError(f"the server supports protocol versions {discovered.supported_versions}, none of ours")
    era = Era(mutual[0], modern=True, client_info=client_info, capabilities=capabilities)
    handshake.use_era(era)
    info = _server_info(discovered.meta)
    return ServerIdentity(era, info, discovered.capabilities, discovered.instructions, discovered=result)


async def _initialize(
    handshake: Handshake, version: str, client_info: dict[str, Any], capabilities: dict[str, Any]
) -> ServerIdentity:
    handshake.use_era(Era(version, modern=False))
    handshake_capabilities = _without_modern_tasks(capabilities)
    params = {"protocolVersion": version, "capabilities": handshake_capabilities, "clientInfo": client_info}
    policy = TimeoutPolicy(idle=None, maximum=None, connect=None)  # bounded by the connect budget around us
    result = await handshake.request("initialize", params, policy=policy, want_progress=False)
    try:
        initialized = mcp_types.InitializeResult.model_validate(result)
    except ValidationError as exc:
        raise ConnectError(f"the server's answer to initialize is not an InitializeResult: {exc}") from exc
    if initialized.protocol_version not in LEGACY_VERSIONS:
        raise ConnectError(
            f"the server chose protocol version {initialized.protocol_version!r}, which this client does not speak"
        )
    era = Era(initialized.protocol_version, modern=False)
    handshake.use_era(era)
    await handshake.notify("notifications/initialized")
    return ServerIdentity(era, initialized.server_info, initialized.capabilities, initialized.instructions)


def _server_info(meta: dict[str, Any] | None) -> mcp_types.Implementation | None:
    raw = (meta or {}).get(SERVER_INFO_KEY)
    if raw is None:
        return None
    try:
        return mcp_types.Implementation.model_validate(raw)
    except ValidationError:
        return None


_TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


def _without_modern_tasks(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The capabilities for ``initialize``: the 2026-07-28 tasks extension is declared per request in the modern era
    only (2025-11-25 has tasks of its own, asked for per call); other extensions stay."""
    extensions = capabilities.get("extensions")
    if not isinstance(extensions, dict) or _TASKS_EXTENSION not in extensions:
        return capabilities
    others = {key: value for key, value in extensions.items() if key != _TASKS_EXTENSION}
    trimmed = {key: value for key, value in capabilities.items() if key != "extensions"}
    return {**trimmed, "extensions": others} if others else trimmed
