"""The "use the client's default" sentinel of per-call arguments, in the style of httpx's ``USE_CLIENT_DEFAULT``.

``timeout=`` omitted means the policy the client resolves for the call (its registry of rules over its default);
``None`` means no limits at all; a :class:`~mcp_client.TimeoutPolicy` is taken as it is; a number is that many
seconds of maximum over the resolved policy.
"""

from __future__ import annotations

import enum
from typing import Final, TypeAlias

from mcp_client.policy.timeout import TimeoutPolicy

__all__ = ["USE_CLIENT_DEFAULT", "TimeoutArg", "UseClientDefault"]


class UseClientDefault(enum.Enum):
    """The type of :data:`USE_CLIENT_DEFAULT`."""

    USE_CLIENT_DEFAULT = "USE_CLIENT_DEFAULT"

    def __repr__(self) -> str:
        return "USE_CLIENT_DEFAULT"


USE_CLIENT_DEFAULT: Final = UseClientDefault.USE_CLIENT_DEFAULT
"""Passed as ``timeout=`` or ``retry=`` (the default): use what the client resolves for the call."""

TimeoutArg: TypeAlias = TimeoutPolicy | float | UseClientDefault | None
"""What ``timeout=`` accepts: a policy, a number of seconds (the maximum, over the resolved policy), ``None`` for
no limits, or :data:`USE_CLIENT_DEFAULT`."""
