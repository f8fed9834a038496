"""Interop peer for subscriptions: an official-Python-SDK server (``mcp==2.3.0``) whose lists change at run time.

Usage::

    python python_sdk_listen_server.py                     # stdio (default)
    python python_sdk_listen_server.py --http --port 8765  # Streamable HTTP at /mcp

It serves ``subscriptions/listen`` with the SDK's own ``ListenHandler`` (2026-07-28), wrapped so a test can end
the open subscriptions either way a server may:

* ``add_tool(name)``: registers a new tool ``name`` (it echoes) and publishes tools/list_changed;
* ``touch(uri)``: publishes resources/updated for ``uri``;
* ``end_subscriptions()``: the SDK's graceful close, each listen answered with its completion result;
* ``tear_down_subscriptions()``: the server's teardown, ``notifications/cancelled`` naming each listen's id.
"""

import argparse
from typing import Any

import uvicorn
from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp_types import (
    CancelledNotification,
    CancelledNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)

bus = InMemorySubscriptionBus()
mcp: MCPServer = MCPServer("mcp-client-interop-listen", version="1.0.0", subscriptions=bus)


class TearableListen:
    """The SDK's listen handler, plus a record of the open listens so they can be torn down."""

    def __init__(self) -> None:
        self.inner = ListenHandler(bus)
        self.open: dict[Any, ServerRequestContext[Any, Any]] = {}

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        self.open[ctx.request_id] = ctx
        try:
            return await self.inner(ctx, params)
        finally:
            self.open.pop(ctx.request_id, None)


listen = TearableListen()
mcp._lowlevel_server.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams, listen)


@mcp.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a tool called ``name`` (it echoes its text) and tell the subscribers."""

    def echo_again(text: str) -> str:
        return text

    mcp.add_tool(echo_again, name=name, description=f"{name}: added at run time")
    await ctx.notify_tools_changed()
    return f"added {name}"


@mcp.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Tell the subscribers of ``uri`` that it changed."""
    await ctx.notify_resource_updated(uri)
    return f"touched {uri}"


@mcp.tool()
async def end_subscriptions() -> str:
    """End every open subscription gracefully (each listen gets its completion result)."""
    count = len(listen.open)
    listen.inner.close()
    return f"ended {count}"


@mcp.tool()
async def tear_down_subscriptions() -> str:
    """Tear every open subscription down: ``notifications/cancelled`` naming its listen id, then end it."""
    count = len(listen.open)
    for request_id, ctx in list(listen.open.items()):
        cancel = CancelledNotification(
            params=CancelledNotificationParams(request_id=request_id, reason="the server tore it down")
        )
        await ctx.session.send_notification(cancel, related_request_id=request_id)
    listen.inner.close()
    return f"tore down {count}"


@mcp.resource("memo://config")
def config() -> str:
    """A resource to subscribe to."""
    return "version 1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port on 127.0.0.1 (with --http)")
    args = parser.parse_args()
    if not args.http:
        mcp.run()
        return
    uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
