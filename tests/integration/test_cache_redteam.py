"""Red team of the result cache and the listing walk: what a host does to an answer it was given never reaches the
cache, and an answer the cache cannot write as JSON is an answer like any other, not an untyped error."""

from __future__ import annotations

import pytest

from mcp_client import Client, TimeoutPolicy, memory
from mcp_client.cache import ResultCache
from tests.integration.line_server import JSON, LineServer, Notify, RpcError

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

POLICY = TimeoutPolicy(idle=None, maximum=100, connect=30)

_ECHO: JSON = {
    "name": "echo",
    "description": "Echoes.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "description": "Text."}}},
}


def _server(tools: list[JSON], read: JSON | None = None) -> LineServer:
    async def handle(method: str, params: JSON, notify: Notify) -> JSON:
        if method == "tools/list":
            return {"tools": tools, "ttlMs": 60_000, "cacheScope": "public"}
        if method == "tools/call":
            return {"content": [{"type": "text", "text": "ran"}]}
        if method == "resources/read" and read is not None:
            return {**read, "ttlMs": 60_000}
        raise RpcError(-32601, method)

    return LineServer(handle, era="modern")


async def test_a_hosts_change_to_a_listed_tools_schema_does_not_reach_the_cache() -> None:
    """Red team: the cache copied an answer one level deep, so a host that made a listed tool's schema strict in
    place (as framework adapters do) changed the kept listing: the next ``list_tools()`` showed the change, and with
    ``pin_tools=True`` the tool was refused as changed (``ToolChanged``), though the server changed nothing."""
    server = _server([_ECHO])
    async with Client(memory(server.serve), timeout=POLICY, pin_tools=True) as client:
        (tool,) = await client.list_tools()
        tool.input_schema["properties"]["text"]["description"] = "changed by the host"
        tool.input_schema["additionalProperties"] = False
        (again,) = await client.list_tools()
        assert again.input_schema == _ECHO["inputSchema"]
        result = await client.call_tool("echo", {"text": "x"})
    assert not result.is_error
    assert server.methods().count("tools/list") == 1  # the second listing came from the cache


async def test_a_change_to_an_answer_from_a_cache_the_host_gave_does_not_reach_the_cache() -> None:
    cache = ResultCache()
    server = _server([_ECHO])
    async with Client(memory(server.serve), timeout=POLICY, cache=cache) as first:
        (tool,) = await first.list_tools()
        tool.input_schema["properties"]["text"]["enum"] = ["only this"]
        (again,) = await first.list_tools()
    assert "enum" not in again.input_schema["properties"]["text"]


async def test_a_kept_answer_holding_a_lone_surrogate_is_read_not_an_untyped_error() -> None:
    """Red team: an answer whose text holds a lone surrogate escape (``"\\ud800"``, which JSON allows and the reader
    accepts as ``json.loads`` does) raised pydantic's ``PydanticSerializationError`` out of ``list_tools()`` (the
    listing walk measures its pages as JSON) and ``read_resource()`` (the cache measures what it keeps)."""
    tools = [{**_ECHO, "description": "bad \ud800 text"}]
    read: JSON = {"contents": [{"uri": "memo://a", "text": "x\udfff"}]}
    server = _server(tools, read)
    async with Client(memory(server.serve), timeout=POLICY) as client:
        (tool,) = await client.list_tools()
        assert tool.description == "bad \ud800 text"
        for _ in range(2):
            contents = (await client.read_resource("memo://a")).contents
            assert getattr(contents[0], "text", None) == "x\udfff"
