"""Protocol eras: how each request is stamped, and which versions this client speaks.

* **Modern** (2026-07-28): no handshake. Every request carries the protocol version, the client's capabilities
  and its identity in ``params._meta``; a server may answer any request with ``-32022`` naming the versions it
  supports.
* **Legacy** (2025-11-25 and the handshake versions before it): an ``initialize`` exchange fixes the version for
  the connection; only the progress token goes into ``_meta``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_client.protocol.tasks import Task, creation_of, task_of

__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "Era",
]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
"""Stateless protocol versions this client speaks, newest first."""
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""Handshake protocol versions this client accepts from a server's ``initialize`` answer, newest first."""


@dataclass(frozen=True, slots=True)
class Era:
    """The protocol version in use with one server, and how requests are stamped for it."""

    version: str
    modern: bool
    client_info: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    _meta_base: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.modern:
            base: dict[str, Any] = {
                PROTOCOL_VERSION_KEY: self.version,
                CLIENT_CAPABILITIES_KEY: self.capabilities,
            }
            if self.client_info:
                base[CLIENT_INFO_KEY] = self.client_info
            object.__setattr__(self, "_meta_base", base)

    def stamp(self, params: dict[str, Any], progress_token: str | None) -> dict[str, Any]:
        """Add this era's ``_meta`` (and the progress token) to ``params``, which the caller owns. Returns it."""
        own = params.get("_meta")
        if not self._meta_base and progress_token is None and own is None:
            return params
        meta = dict(own) if isinstance(own, dict) else {}
        meta.update(self._meta_base)
        if progress_token is not None:
            meta["progressToken"] = progress_token
        params["_meta"] = meta
        return params

    @property
    def input_rounds(self) -> bool:
        """May a result be ``input_required`` (the server asking for input within a request)? 2026-07-28 only."""
        return self.modern

    @property
    def server_requests(self) -> bool:
        """Does the server send requests of its own that the client answers? 2025-11-25 only: at 2026-07-28
        servers must not, and clients never send responses."""
        return not self.modern

    @property
    def param_headers(self) -> bool:
        """Are ``Mcp-Param-*`` headers stamped from a tool's arguments (on a transport that carries headers)?"""
        return self.modern

    @property
    def request_logs(self) -> bool:
        """Does each request ask for its own log messages (``_meta`` log level), which then come only on its own
        stream? 2026-07-28 only: at 2025-11-25 ``logging/setLevel`` sets one level for the session."""
        return self.modern

    @property
    def has_ping(self) -> bool:
        """Is there a ``ping`` request? 2025-11-25 only: 2026-07-28 removed it (any request shows liveness)."""
        return not self.modern

    @property
    def tasks_extension(self) -> bool:
        """Are tasks the ``io.modelcontextprotocol/tasks`` extension (2026-07-28: the server decides, a report
        carries the result, input is answered with ``tasks/update``)? Else the 2025-11-25 experimental tasks: the
        client asks with ``params.task``, and the result and the server's requests come through ``tasks/result``."""
        return self.modern

    def task_of(self, raw: object) -> Task:
        """A task as this era spells it on the wire (``ttlMs``/``pollIntervalMs`` at 2026-07-28, ``ttl``/
        ``pollInterval`` at 2025-11-25); anything malformed is a :class:`~mcp_client.ProtocolError`."""
        return task_of(raw, modern=self.tasks_extension)

    def created_task(self, result: dict[str, Any], *, asked: bool) -> Task | None:
        """The task a ``tools/call`` answer created, or None for an ordinary result (2026-07-28: ``resultType:
        "task"``; 2025-11-25: a nested ``task`` in answer to a call that ``asked`` for one)."""
        return creation_of(result, modern=self.tasks_extension, asked=asked)

    @property
    def listen_stream(self) -> bool:
        """Do changes come on a ``subscriptions/listen`` stream (2026-07-28)? Else as the session's own
        notifications, with ``resources/subscribe`` for single resources (2025-11-25)."""
        return self.modern

    @property
    def name(self) -> str:
        """``"2026-07-28 (stateless)"`` or ``"2025-11-25 (initialize)"``, for humans."""
        return f"{self.version} ({'stateless' if self.modern else 'initialize'})"
