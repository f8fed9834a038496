"""The activity's heartbeat while an MCP call is in flight: worker liveness that carries the call's checkpoint.

Temporal notices a dead worker when heartbeats stop for ``heartbeat_timeout``. The beat is sent on every accepted
progress notification and at least every third of the timeout. Each beat carries the latest
:class:`~mcp_client.integrations.temporal.wire.Checkpoint`, since a heartbeat replaces the details of the last one.

A beat of ``activity.heartbeat`` is fire and forget: the SDK encodes it in a task of its own (through the payload
codec, which may await a key service) and the worker's throttle may hold it back. A checkpoint that must be in
Temporal before the next step (``written`` before the request leaves, a task's reference before the call relies on
the next attempt to resume it) is therefore :meth:`Heartbeat.confirm`-ed: sent through the worker's client as well,
awaited until the service acknowledged it (see docs/temporal.md, "No window").

Uses anyio for the periodic beat; the send function is Temporal's ``activity.heartbeat``, passed in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from mcp_client.integrations.temporal.wire import Checkpoint

__all__ = ["Heartbeat"]


class Heartbeat:
    """Beats for one activity attempt.

    Args:
        send: Temporal's ``activity.heartbeat`` (fire and forget: encoded and sent later, in the background).
        timeout: The activity's heartbeat timeout in seconds (None: Temporal does not watch beats; the checkpoint
            is still sent, once per change).
        confirm: Records details in Temporal and returns once the service has them (a heartbeat through the
            worker's client, its payload codec included); :meth:`confirm` uses it.
    """

    def __init__(
        self,
        send: Callable[..., None],
        timeout: float | None,
        confirm: Callable[[Any], Awaitable[None]] | None = None,
    ) -> None:
        self._send = send
        self._timeout = timeout
        self._confirm = confirm
        self.checkpoint: Checkpoint | None = None
        self.beats = 0
        """How many beats were handed to Temporal (for tests and logs)."""

    def record(self, checkpoint: Checkpoint) -> None:
        """Make ``checkpoint`` what every beat carries from now on, and beat at once."""
        self.checkpoint = checkpoint
        self.beat()

    async def confirm(self, checkpoint: Checkpoint, within: float | None = None) -> None:
        """Make ``checkpoint`` what every beat carries, and return only once Temporal has recorded it (encoded by
        the client's codec, however long that awaits). Raises whatever the encoding or the round trip raised, or
        ``TimeoutError`` after ``within`` seconds (a codec or a service that does not answer)."""
        self.record(checkpoint)
        if self._confirm is not None:
            with anyio.fail_after(within):
                await self._confirm(checkpoint.to_details())

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
