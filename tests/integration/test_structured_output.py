"""A tool result's structuredContent is checked against the outputSchema list_tools() reported, unless turned off."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_client import Client, StructuredOutputError, TimeoutPolicy, memory
from tests.integration.line_server import JSON, LineServer, Notify, RpcError

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
ANSWERS: dict[str, Any] = {"good": {"n": 1}, "bad": {"n": "one"}, "none": None}


async def handle(method: str, params: JSON, notify: Notify) -> JSON:
    if method == "tools/list":
        tools = [{"name": name, "inputSchema": {"type": "object"}, "outputSchema": SCHEMA} for name in ANSWERS]
        return {"tools": [*tools, {"name": "free", "inputSchema": {"type": "object"}}]}
    if method == "tools/call":
        answer: JSON = {"content": [{"type": "text", "text": "x"}]}
        structured = ANSWERS.get(params["name"], {"anything": True})
        if structured is not None:
            answer["structuredContent"] = structured
        return answer
    raise RpcError(-32601, method)


def client(**options: Any) -> Client:
    return Client(memory(LineServer(handle).serve), timeout=TimeoutPolicy(idle=10, maximum=100), **options)


async def test_structured_output_is_validated_on_call_tool_and_on_the_call_handle() -> None:
    async with client() as c:
        await c.call_tool("bad", {})  # not listed yet: no schema known, nothing to check
        await c.list_tools()
        assert (await c.call_tool("good", {})).structured_content == {"n": 1}
        assert (await c.call_tool("free", {})).structured_content == {"anything": True}
        with pytest.raises(StructuredOutputError, match="at n") as caught:
            await c.call_tool("bad", {})
        assert caught.value.result.structured_content == {"n": "one"}
        with pytest.raises(StructuredOutputError, match="no structuredContent"):
            await c.call_tool("none", {})
        async with c.tool_call("bad", {}) as call:
            with pytest.raises(StructuredOutputError):
                await call.result()


async def test_validate_output_false_hands_results_over_unchecked() -> None:
    async with client(validate_output=False) as c:
        await c.list_tools()
        assert (await c.call_tool("bad", {})).structured_content == {"n": "one"}
