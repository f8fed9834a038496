"""What a connected :class:`~mcp_client.Client` knows of its server: the session and its era, and what the
server said about itself (its name, capabilities, instructions, process id). A base class of ``Client``, kept in a
module of its own; read-only, it sends nothing: everything here is read through the client's
:class:`~mcp_client.client.link.Link`, the one owner (and writer) of the connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mcp_types

from mcp_client.errors import ClientClosed

if TYPE_CHECKING:
    from mcp_client.calls import CallRunner
    from mcp_client.client.link import Link
    from mcp_client.protocol.era import Era
    from mcp_client.session.session import Session

__all__ = ["ServerView"]


class ServerView:
    """The session, the era and the server's identity, as properties of :class:`~mcp_client.Client`."""

    _link: Link
    _closed: bool = False
    """Set once the client's close finished: every use of it raises (the one place they all pass)."""

    @property
    def session(self) -> Session:
        """The session (raises if the client is not connected, or closed)."""
        return self._calls_runner.session

    @property
    def _calls_runner(self) -> CallRunner:
        """The runner of this client's calls (raises if the client is not connected, or closed)."""
        runner = self._link.call_runner
        if runner is None or self._closed:
            if self._closed:
                raise ClientClosed("the client is closed: a closed Client cannot be used (make a new one)")
            raise RuntimeError("the client is not connected: use 'async with Client(...)'")
        return runner

    @property
    def era(self) -> Era:
        """The protocol era in use."""
        era = self.session.era
        assert era is not None
        return era

    @property
    def protocol_version(self) -> str:
        """The protocol version in use, e.g. ``"2026-07-28"``."""
        return self.era.version

    @property
    def server_info(self) -> mcp_types.Implementation | None:
        """The server's name and version, when it said."""
        return identity.server_info if (identity := self._link.identity) else None

    @property
    def server_capabilities(self) -> mcp_types.ServerCapabilities | None:
        """The capabilities the server declared."""
        return identity.capabilities if (identity := self._link.identity) else None

    @property
    def server_process_id(self) -> int | None:
        """The server's process id over stdio (None for other transports, or before connecting)."""
        session = self._link.session
        connection = session.connection if session is not None else None
        return connection.process_id if connection is not None else None

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if any."""
        return identity.instructions if (identity := self._link.identity) else None
