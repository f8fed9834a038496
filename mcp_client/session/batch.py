"""Work that waits until every message read in one go has been routed.

A transport that reads several messages at once (a chunk of stdio output) says when it starts delivering them
(``on_batch_begin``) and when it is done (``on_batch_end``). Actions deferred in between run at the end: progress
for a sync callback reaches it once per batch, as its newest value, in the same loop turn as the read. Outside a
batch (a transport that does not mark them), the first deferral queues a run on the loop's next turn instead,
which only asyncio offers (:attr:`~mcp_client._backends.base.Backend.call_soon`): on trio nothing is deferred this way.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp_client._backends.auto import current_backend

__all__ = ["AfterBatch"]


class AfterBatch:
    """Actions to run at the end of the current batch of incoming messages (or on the loop's next turn)."""

    __slots__ = ("_actions", "_call_soon", "_open", "_queued")

    def __init__(self, call_soon: Callable[[Callable[[], None]], object] | None = None) -> None:
        """``call_soon`` runs a function on the loop's next turn; by default the running loop's, where it has one."""
        self._call_soon = call_soon if call_soon is not None else current_backend().call_soon
        self._actions: list[Callable[[], None]] = []
        self._open = False
        self._queued = False

    @property
    def can_defer(self) -> bool:
        """True when work can wait for the loop's next turn outside a batch (asyncio): :meth:`defer` may be used."""
        return self._call_soon is not None

    def open(self) -> None:
        """A batch begins: what is deferred from now on waits for :meth:`run`."""
        self._open = True

    def defer(self, action: Callable[[], None]) -> None:
        """Run ``action`` when the batch ends (or on the loop's next turn, outside a batch). Must not raise."""
        self._actions.append(action)
        if not self._open and not self._queued:
            assert self._call_soon is not None, "AfterBatch.defer() outside a batch needs a loop that can call soon"
            self._queued = True
            self._call_soon(self.run)

    def run(self) -> None:
        """The batch is over: run what was deferred, in order (including anything deferred while running)."""
        self._open = False
        self._queued = False  # a run already queued on the loop finds nothing to do: harmless
        while self._actions:
            actions, self._actions = self._actions, []
            for action in actions:
                action()
