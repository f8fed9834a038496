"""Small helpers shared by the integration tests: reading results and picking events."""

from __future__ import annotations

import mcp_types

from mcp_client import Event, RequestSent

__all__ = ["sent_calls", "text_of"]


def text_of(result: mcp_types.CallToolResult) -> str:
    """The text of a tool result's first content block (which must be text)."""
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


def sent_calls(events: list[Event]) -> list[RequestSent]:
    """The ``tools/call`` requests the client wrote, in order."""
    return [e for e in events if isinstance(e, RequestSent) and e.method == "tools/call"]
