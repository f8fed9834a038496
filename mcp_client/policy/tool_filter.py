"""Which tools of a server a host offers: ``include_tools``/``exclude_tools`` of an entry (Gemini CLI's
``includeTools``/``excludeTools``, Codex's ``enabled_tools``/``disabled_tools``).

A :class:`~mcp_client.Client` given one (``tool_filter=``; a :class:`~mcp_client.group.ClientGroup` gives each server's
client its own) leaves a tool the filter excludes out of every listing and refuses its calls with
:class:`ToolNotAllowed` before anything is sent, on every path (``group["name"]``, the blocking facade, adapters).
A host's own lists (Gemini CLI, Codex, Goose) name tools exactly: :mod:`mcp_client.config.dialects.translate` escapes
them with :func:`exact`. Patterns are exact names or ``fnmatch`` globs, matched
case-sensitively (MCP tool names hold no ``*``, ``?`` or ``[``, so a plain name matches only itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from mcp_client.errors import MCPClientError

__all__ = ["ALL_TOOLS", "ToolFilter", "ToolNotAllowed", "exact"]


@dataclass(frozen=True, slots=True)
class ToolFilter:
    """The tools of one server a host may list and call.

    Args:
        include: Only the tools matching one of these (None: every tool).
        exclude: Never the tools matching one of these; wins over ``include`` (as in Gemini CLI and Codex).
    """

    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` passes the filter."""
        if any(fnmatchcase(tool, pattern) for pattern in self.exclude):
            return False
        return self.include is None or any(fnmatchcase(tool, pattern) for pattern in self.include)


ALL_TOOLS = ToolFilter()


def exact(name: str) -> str:
    """A pattern that matches ``name`` only (its ``*``, ``?`` and ``[`` made literal)."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in name)


class ToolNotAllowed(MCPClientError):
    """The tool is left out by its server's tool filter (``include_tools``/``exclude_tools``): refused before
    anything was sent."""

    outcome = "tool_filtered"
    refusal = True

    def __init__(self, message: str, *, name: str, **context: Any) -> None:
        super().__init__(message, **context)
        self.tool = name
