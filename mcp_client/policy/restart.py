"""When a crashed stdio server is started again: the restart policy (a value) and its ledger (state). Pure.

A server that died is started again after a random wait (full jitter: uniform between zero and an exponentially
growing bound, so clients of one crashed host do not come back in step), as long as fewer than
``max_restarts`` restarts happened in the last ``window`` seconds. A server that crashes again and again is
then left down: its calls fail at once instead of waiting on a process that cannot stay up. A server that stayed
up for a whole ``window`` starts again from the first, shortest wait.

Nothing here sleeps or spawns; the supervisor (:mod:`~mcp_client.client.supervisor`) asks
:meth:`RestartLedger.next_delay` with the current time and acts on the answer.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_client.policy.backoff import exponential_bound
from mcp_client.policy.seconds import check_seconds

__all__ = ["RestartLedger", "RestartPolicy"]


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """How a stdio server that exited on its own is started again (``stdio(..., restart=RestartPolicy())``).

    Args:
        max_restarts: Most restarts within any ``window`` seconds; one more crash leaves the server down.
        window: The span, in seconds, over which restarts are counted.
        initial_backoff: Upper bound of the random wait before the first restart, in seconds.
        max_backoff: Upper bound of any wait, in seconds.
        multiplier: How much the bound grows with each restart within the window.
    """

    max_restarts: int = 5
    window: float = 60.0
    initial_backoff: float = 0.1
    max_backoff: float = 10.0
    multiplier: float = 2.0

    def __post_init__(self) -> None:
        if isinstance(self.max_restarts, bool) or not isinstance(self.max_restarts, int) or self.max_restarts < 0:
            raise ValueError(f"max_restarts must be an integer >= 0, got {self.max_restarts!r}")
        for name in ("window", "initial_backoff", "max_backoff"):
            check_seconds(name, getattr(self, name), zero=True)
        if not self.multiplier >= 1:
            raise ValueError(f"multiplier must be >= 1, got {self.multiplier!r}")

    def bound(self, restart_number: int) -> float:
        """The upper bound of the wait before restart number ``restart_number`` within a window (1 for the first)."""
        return exponential_bound(
            restart_number, initial=self.initial_backoff, multiplier=self.multiplier, cap=self.max_backoff
        )


@dataclass(slots=True)
class RestartLedger:
    """The restarts of one supervised server: whether another is allowed now, and after what wait."""

    policy: RestartPolicy
    random: Callable[[], float] = field(default=random.random)
    """Uniform in [0, 1); replace it for deterministic tests."""
    _restarts: deque[float] = field(default_factory=deque)

    @property
    def restarts(self) -> int:
        """Restarts granted within the current window (as of the last call)."""
        return len(self._restarts)

    def next_delay(self, now: float) -> float | None:
        """The server died at ``now``: the seconds to wait before starting it again, or ``None`` when the cap of
        restarts in the window is reached (leave it down). A granted restart is counted at once."""
        window_start = now - self.policy.window
        while self._restarts and self._restarts[0] <= window_start:
            self._restarts.popleft()
        if len(self._restarts) >= self.policy.max_restarts:
            return None
        self._restarts.append(now)
        return self.random() * self.policy.bound(len(self._restarts))
