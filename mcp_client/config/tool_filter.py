"""Which tools of a server a host offers: ``include_tools``/``exclude_tools`` of an entry. The filter itself lives in
:mod:`mcp_client.policy.tool_filter` (a client applies it); this is where configurations name it."""

from mcp_client.policy.tool_filter import ALL_TOOLS, ToolFilter, ToolNotAllowed, exact

__all__ = ["ALL_TOOLS", "ToolFilter", "ToolNotAllowed", "exact"]
