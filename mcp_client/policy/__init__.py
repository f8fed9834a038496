"""The sans-IO policy core: pure state machines that take ``now`` and return decisions.

Nothing here performs I/O, sleeps, or imports anyio; the session turns these decisions into cancel scopes, writes
and stream closes. See ``timeout`` (deadlines), ``progress`` (tokens, validation, pacing) and ``ids``.
"""

from mcp_client.policy.ids import RequestIds
from mcp_client.policy.progress import (
    Progress,
    ProgressCoalescer,
    ProgressTokens,
    ProgressTracker,
    ProgressVerdict,
)
from mcp_client.policy.timeout import DEFAULT_TIMEOUT, Deadline, TimeoutKind, TimeoutPolicy

__all__ = [
    "DEFAULT_TIMEOUT",
    "Deadline",
    "Progress",
    "ProgressCoalescer",
    "ProgressTokens",
    "ProgressTracker",
    "ProgressVerdict",
    "RequestIds",
    "TimeoutKind",
    "TimeoutPolicy",
]
