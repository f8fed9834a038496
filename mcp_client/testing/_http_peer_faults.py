"""HTTP-level misbehaviours of :mod:`mcp_client.testing.http_peer`: what they are and the tools that trigger them.

A fault is chosen either by calling one of the tools in :data:`HTTP_TOOLS` (their arguments tune it), or by a
peer option mapping a tool name or a JSON-RPC method to an :class:`HttpFault` (``faults={"echo": HttpFault(...)}``),
optionally for the first ``times`` matching requests only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from mcp_client.testing._peer_tools import JsonObject

__all__ = ["FAULT_KINDS", "HTTP_TOOLS", "FaultKind", "HttpFault", "fault_from_tool_call"]

FaultKind: TypeAlias = Literal[
    "drop_mid_stream", "trickle", "http_500", "http_503_retry_after", "slow_headers", "garbage_body", "oversized"
]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "drop_mid_stream",
    "trickle",
    "http_500",
    "http_503_retry_after",
    "slow_headers",
    "garbage_body",
    "oversized",
)


@dataclass(frozen=True)
class HttpFault:
    """One HTTP misbehaviour and its knobs.

    * ``drop_mid_stream``: open an SSE stream, send one progress notification (when the request carries a progress
      token), then close the TCP connection without the response.
    * ``trickle``: open an SSE stream and send an SSE comment and a blank line every ``interval`` seconds, forever:
      bytes that are not messages. Ends when the client closes the stream.
    * ``http_500``: answer ``500 Internal Server Error``, ``text/plain``.
    * ``http_503_retry_after``: answer ``503 Service Unavailable`` with ``Retry-After: <retry_after>``.
    * ``slow_headers``: wait ``seconds`` before sending the status line, then answer normally.
    * ``garbage_body``: answer ``200 application/json`` with a body that is not JSON.
    * ``oversized``: answer over SSE with one event of about ``size`` bytes (a valid response with a huge text).

    ``times``: apply the fault to the first ``times`` matching requests only (None: to all of them).
    """

    kind: FaultKind
    times: int | None = None
    seconds: float = 1.0
    interval: float = 0.1
    retry_after: int = 1
    size: int = 1_000_000

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {', '.join(FAULT_KINDS)}")
        if self.times is not None and self.times < 0:
            raise ValueError(f"times must be >= 0 or None, got {self.times!r}")

    @property
    def forwards(self) -> bool:
        """Whether the request still reaches the scripted peer (after the fault's delay)."""
        return self.kind == "slow_headers"


def _hints(*, read_only: bool) -> JsonObject:
    return {
        "readOnlyHint": read_only,
        "destructiveHint": False,
        "idempotentHint": read_only,
        "openWorldHint": False,
    }


def _tool(name: str, description: str, properties: JsonObject, *, read_only: bool) -> JsonObject:
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
        "annotations": {"title": name.replace("_", " ").capitalize(), **_hints(read_only=read_only)},
    }


_TEXT = {"type": "string", "description": "Text to answer with (where the tool answers at all).", "default": ""}

HTTP_TOOLS: dict[str, JsonObject] = {
    tool["name"]: tool
    for tool in (
        _tool(
            "drop_mid_stream",
            "Open an SSE stream, send progress (when asked for), then close the TCP connection without the response.",
            {},
            read_only=False,
        ),
        _tool(
            "trickle",
            "Open an SSE stream and send SSE comment and blank lines every `interval` seconds forever, no messages.",
            {"interval": {"type": "number", "default": 0.1}},
            read_only=True,
        ),
        _tool("http_500", "Answer HTTP 500 (text/plain).", {}, read_only=False),
        _tool(
            "http_503_retry_after",
            "Answer HTTP 503 with Retry-After: `retry_after` to the first `fail_times` calls, then echo `text`.",
            {
                "text": _TEXT,
                "fail_times": {"type": "integer", "default": 1},
                "retry_after": {"type": "integer", "default": 1},
            },
            read_only=True,
        ),
        _tool(
            "slow_headers",
            "Wait `seconds` before sending the status line, then echo `text`.",
            {"seconds": {"type": "number", "default": 1.0}, "text": _TEXT},
            read_only=True,
        ),
        _tool(
            "barrier",
            "Wait until `count` calls of barrier are waiting at once (at most `seconds`), then answer 'released' "
            "(or 'timed out'): proof that that many calls were in flight together.",
            {"count": {"type": "integer", "default": 2}, "seconds": {"type": "number", "default": 5.0}},
            read_only=True,
        ),
        _tool("garbage_body", "Answer HTTP 200 application/json with a body that is not JSON.", {}, read_only=True),
        _tool(
            "oversized",
            "Answer over SSE with one event of about `size` bytes.",
            {"size": {"type": "integer", "default": 1_000_000}},
            read_only=True,
        ),
    )
}
"""The ``tools/list`` entries of the HTTP tools (appended to the scripted peer's own list)."""


def _number(arguments: JsonObject, name: str, default: float) -> float:
    value: Any = arguments.get(name)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return default


def _integer(arguments: JsonObject, name: str, default: int) -> int:
    value: Any = arguments.get(name)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return default


def fault_from_tool_call(name: str, arguments: JsonObject) -> HttpFault | None:
    """The fault a call of HTTP tool ``name`` asks for (None for any other tool). Bad arguments get defaults."""
    if name not in HTTP_TOOLS:
        return None
    if name == "trickle":
        return HttpFault("trickle", interval=max(_number(arguments, "interval", 0.1), 0.01))
    if name == "http_503_retry_after":
        return HttpFault(
            "http_503_retry_after",
            times=_integer(arguments, "fail_times", 1),
            retry_after=_integer(arguments, "retry_after", 1),
        )
    if name == "slow_headers":
        return HttpFault("slow_headers", seconds=_number(arguments, "seconds", 1.0))
    if name == "oversized":
        return HttpFault("oversized", size=_integer(arguments, "size", 1_000_000))
    return HttpFault(_PLAIN_KINDS[name])


_PLAIN_KINDS: dict[str, FaultKind] = {
    "drop_mid_stream": "drop_mid_stream",
    "http_500": "http_500",
    "garbage_body": "garbage_body",
}
