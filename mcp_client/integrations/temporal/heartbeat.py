"""The activity's heartbeat while an MCP call is in flight: worker liveness that carries the call's checkpoint.

Temporal notices a dead worker when heartbeats stop for ``heartbeat_timeout``. The beat is sent on every accepted
progress notification and at least every third of the timeout. Each beat carries the latest
:class:`~mcp_client.integrations.temporal.wire.Checkpoint`, since a heartbeat replaces the details of the last one.

Temporal sends only the first heartbeat of an attempt at once; later ones are held back by the worker's throttle
(0.8 x the timeout, at most the worker's ``max_heartbeat_throttle_interval``, which the plugin lowers to 1 s) and
sent as one. The checkpoint that must survive a crash is therefore the *first* beat: ``written``, recorded before
the request leaves, since a crash after that must never lead to a second run. A task's reference comes second, and
reaches Temporal within the throttle interval (see docs/temporal.md, "The remaining window").

Uses anyio for the periodic beat; the send function is Temporal's ``activity.heartbeat``, passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from mcp_client.integrations.temporal.wire import Checkpoint

__all__ = ["Heartbeat"]


class Heartbeat:
    """Beats for one activity attempt.

    Args:
        send: Temporal's ``activity.heartbeat``.
        timeout: The activity's heartbeat timeout in seconds (None: Temporal does not watch beats; the checkpoint
            is still sent, once per change).
    """

    def __init__(self, send: Callable[..., None], timeout: float | None) -> None:
        self._send = send
        self._timeout = timeout
        self.checkpoint: Checkpoint | None = None
        self.beats = 0
        """How many beats were handed to Temporal (for tests and logs)."""

    def record(self, checkpoint: Checkpoint) -> None:
        """Make ``checkpoint`` what every beat carries from now on, and beat at once."""
        self.checkpoint = checkpoint
        self.beat()

    def beat(self, *_: Any) -> None:
        """Beat now (also a progress callback, hence the ignored arguments)."""
        self.beats += 1
        if self.checkpoint is None:
            self._send()
        else:
            self._send(self.checkpoint.to_details())

    async def run(self) -> None:
        """Beat at least every third of the timeout until cancelled."""
        if self._timeout is None:
            await anyio.sleep_forever()
            return
        while True:
            await anyio.sleep(self._timeout / 3)
            self.beat()
