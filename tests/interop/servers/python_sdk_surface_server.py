"""Interop peer: the parts of a server a host uses beyond tool calls, built with the official Python SDK (mcp 2.3.0).

Usage::

    python python_sdk_surface_server.py                  # stdio (default)
    python python_sdk_surface_server.py --http --port N  # Streamable HTTP at /mcp

* caching hints: ``tools/list`` fresh for 60 s (public), ``resources/read`` for 60 s (private), the other lists 0;
* ``resources/templates/list``: the template ``greeting://{name}``; ``completion/complete`` completes its ``name``
  and the ``style`` argument of the prompt ``greet``;
* tools: ``count`` (how many times it was called, to tell a cached answer from a real one), ``chatty`` (logs
  ``count`` messages at ``info``, one every ``interval`` seconds, then answers), ``weather`` (structured output
  that matches its output schema) and ``bad_weather`` (structured output that breaks it).
"""

import argparse
import warnings

import anyio
import mcp_types
import uvicorn
from mcp.server import MCPServer
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context
from pydantic import BaseModel

warnings.filterwarnings("ignore", category=DeprecationWarning)  # logging is deprecated at 2026-07-28, still served

HINTS = {
    "tools/list": CacheHint(ttl_ms=60_000, scope="public"),
    "resources/read": CacheHint(ttl_ms=60_000, scope="private"),
}
mcp: MCPServer = MCPServer("mcp-client-interop-surface", version="1.0.0", cache_hints=HINTS)  # type: ignore[arg-type]
NAMES = ("alice", "albert", "bob")
calls = 0


@mcp.tool()
async def count() -> str:
    """How many times this tool has been called (this call included)."""
    global calls
    calls += 1
    return str(calls)


@mcp.tool()
async def chatty(count: int, interval: float, ctx: Context) -> str:
    """Log ``count`` info messages, one every ``interval`` seconds, then answer "done"."""
    for step in range(1, count + 1):
        await anyio.sleep(interval)
        await ctx.info(f"step {step}", logger_name="chatty")
    return "done"


class Weather(BaseModel):
    """What the weather tools answer."""

    city: str
    celsius: float


@mcp.tool()
async def weather(city: str) -> Weather:
    """The weather in ``city``, as structured output."""
    return Weather(city=city, celsius=21.5)


@mcp.tool()
async def bad_weather(city: str) -> mcp_types.CallToolResult:
    """Claims the Weather output schema, then answers with a string where a number belongs."""
    broken = {"city": city, "celsius": "warm"}
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=str(broken))], structured_content=broken
    )


# A CallToolResult returned as it is goes out unchecked; the schema is published only for listing (the SDK reads
# this field live), which is how a server that breaks its own schema looks to a client.
_bad = mcp._tool_manager.get_tool("bad_weather")
assert _bad is not None
_bad.fn_metadata.output_schema = mcp._tool_manager.get_tool("weather").fn_metadata.output_schema  # type: ignore[union-attr]


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for ``name``."""
    return f"hello {name}"


@mcp.prompt()
def greet(name: str, style: str = "plain") -> str:
    """Greet ``name`` in a ``style``."""
    return f"Greet {name} in a {style} style."


@mcp.completion()  # type: ignore[untyped-decorator,no-untyped-call]  # the SDK leaves it untyped
async def complete(
    ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
    argument: mcp_types.CompletionArgument,
    context: mcp_types.CompletionContext | None,
) -> mcp_types.Completion | None:
    """``name`` of the greeting template: the known names with that prefix; ``style`` of ``greet``: two styles."""
    if isinstance(ref, mcp_types.ResourceTemplateReference) and argument.name == "name":
        found = [name for name in NAMES if name.startswith(argument.value)]
        return mcp_types.Completion(values=found, total=len(found), has_more=False)
    if isinstance(ref, mcp_types.PromptReference) and argument.name == "style":
        known = (context.arguments or {}) if context is not None else {}
        return mcp_types.Completion(values=[f"formal for {known.get('name', 'anyone')}", "casual"])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--port", type=int, default=8766, help="HTTP port on 127.0.0.1 (with --http)")
    args = parser.parse_args()
    if not args.http:
        mcp.run()
        return
    uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
