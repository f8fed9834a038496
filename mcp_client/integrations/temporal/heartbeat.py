"""The activity's heartbeat while an MCP call is in flight: worker liveness that carries the call's checkpoint.

Temporal notices a dead worker when heartbeats stop for ``heartbeat_timeout``. The beat is sent on every accepted
progress notification and at least every third of the timeout. Each beat carries the latest
:class:`~mcp_client.integrations.temporal.wire.Checkpoint`, since a heartbeat replaces the details of the last one.

Temporal sends only the first heartbeat of an attempt at once; later ones are held back for up to 0.8 x the
timeout and sent as one. The checkpoint that must survive a crash therefore has to be the *first* beat: a
task-capable call holds every beat until the task's reference is known (or, at the latest, until half the
timeout has passed, when liveness wins and the beat says ``written``: the conservative checkpoint), and a plain
call beats ``written`` before its request leaves.

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
        hold: Send nothing until the first :meth:`record` (a task-capable call waiting for its task id), for at
            most half of ``timeout``.
    """

    def __init__(self, send: Callable[..., None], timeout: float | None, *, hold: bool = False) -> None:
        self._send = send
        self._timeout = timeout
        self._holding = hold
        self.checkpoint: Checkpoint | None = None
        self.beats = 0
        """How many beats were handed to Temporal (for tests and logs)."""

    @property
    def holding(self) -> bool:
        """True while beats wait for the first checkpoint."""
        return self._holding

    def record(self, checkpoint: Checkpoint) -> None:
        """Make ``checkpoint`` what every beat carries from now on, and beat at once."""
        self.checkpoint = checkpoint
        self._holding = False
        self.beat()

    def beat(self, *_: Any) -> None:
        """Beat now (a progress callback, hence the ignored arguments), unless still holding for a checkpoint."""
        if self._holding:
            return
        self.beats += 1
        if self.checkpoint is None:
            self._send()
        else:
            self._send(self.checkpoint.to_details())

    async def run(self) -> None:
        """Beat at least every third of the timeout until cancelled; end a hold after half the timeout."""
        if self._timeout is None:
            await anyio.sleep_forever()
            return
        if self._holding:
            await anyio.sleep(self._timeout / 2)
            if self._holding:  # the task id did not come in time: liveness first, and "may have run"
                self.record(Checkpoint("written"))
        while True:
            await anyio.sleep(self._timeout / 3)
            self.beat()
