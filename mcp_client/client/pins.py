"""What :class:`~mcp_client.Client` does with its tool pins and its tool filter: a base class holding them, the
listing hook that reports changed definitions and leaves filtered tools out, the check before a call, and
:meth:`PinnedTools.accept_tool_change`.

The pins themselves (what was seen, what changed, the JSON form) are :mod:`mcp_client.client.tool_pins`, pure. This base
class only wires them to the client: every ``list_tools()`` (fresh or from the cache) goes through
:meth:`PinnedTools._observe_tools`, and ``call_tool()``/``tool_call()`` through :meth:`PinnedTools._check_callable`
before anything of the call is sent. Touches the pins, the filter, the session's event hook and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import mcp_types

from mcp_client.client.tool_pins import ToolPins
from mcp_client.policy.tool_filter import ALL_TOOLS, ToolFilter, ToolNotAllowed

if TYPE_CHECKING:
    from mcp_client.session.session import Session

__all__ = ["PinnedTools"]


class PinnedTools:
    """The tool pins of a :class:`~mcp_client.Client` (a base class of it)."""

    _tool_pins: ToolPins
    _enforce_pins: bool
    _tool_filter: ToolFilter

    if TYPE_CHECKING:

        @property
        def session(self) -> Session: ...  # (the client's)

    def _init_pins(self, pin_tools: bool, tool_pins: ToolPins | None, tool_filter: ToolFilter | None = None) -> None:
        if tool_filter is not None and not isinstance(tool_filter, ToolFilter):
            raise TypeError(f"tool_filter must be a ToolFilter, not {type(tool_filter).__name__}")
        self._tool_filter = tool_filter if tool_filter is not None else ALL_TOOLS
        if not isinstance(pin_tools, bool):
            raise TypeError(f"pin_tools must be True or False, not {type(pin_tools).__name__}")
        if tool_pins is not None and not isinstance(tool_pins, ToolPins):
            raise TypeError(f"tool_pins must be a ToolPins (ToolPins.load(saved)), not {type(tool_pins).__name__}")
        self._tool_pins = tool_pins if tool_pins is not None else ToolPins()
        self._enforce_pins = pin_tools

    @property
    def tool_pins(self) -> ToolPins:
        """Each tool's definition as first listed (or loaded, or last accepted); ``.export()`` saves them."""
        return self._tool_pins

    def accept_tool_change(self, name: str) -> None:
        """Pin tool ``name``'s definition as last listed, after the host reviewed it: with ``pin_tools=True``,
        calls to it go through again.

        Raises:
            KeyError: no listing showed a tool of that name.
        """
        self._tool_pins.accept(name)

    def _offered(self, tools: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
        """The tools of a listing the filter lets through (a filtered tool is never offered)."""
        if self._tool_filter is ALL_TOOLS:
            return tools
        return [tool for tool in tools if self._tool_filter.allows(tool.name)]

    def _observe_tools(self, tools: Iterable[mcp_types.Tool]) -> None:
        """A listing arrived: report each tool whose definition differs from its pin (``ToolDefinitionChanged``)."""
        for change in self._tool_pins.observe(tools):
            self.session.emit(change)

    def _check_callable(self, name: str) -> None:
        """Refuse a call to a tool the filter leaves out (``ToolNotAllowed``) or, with ``pin_tools=True``, whose
        definition changed (``ToolChanged``)."""
        if not self._tool_filter.allows(name):
            raise ToolNotAllowed(f"tool {name!r} is left out by the tool filter", name=name)
        if self._enforce_pins:
            self._tool_pins.check(name)
