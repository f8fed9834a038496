"""Interop for what a host calls beyond tools: resource templates, completion, ping and server logs.

Against the official Python SDK's MCPServer (mcp 2.3.0, 2026-07-28) over stdio and Streamable HTTP, with
``servers/python_sdk_surface_server.py``, and against ``@modelcontextprotocol/server-everything`` (2025-11-25) over
stdio. Real processes, real clocks, wide margins.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import mcp_types
import pytest

from mcp_client import (
    Client,
    Event,
    IdleTimerReset,
    RequestSent,
    ServerLog,
    StructuredOutputError,
    TimeoutPolicy,
    stdio,
)
from mcp_client.transports.base import Transport
from mcp_client.transports.http import http
from tests.interop.conftest import INTEROP_DIR, free_port, serve_http

pytestmark = [pytest.mark.anyio]

SURFACE_SERVER = INTEROP_DIR / "servers" / "python_sdk_surface_server.py"
POLICY = TimeoutPolicy(idle=20, maximum=60)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def surface_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, str(SURFACE_SERVER), "--http", "--port", str(port)]
    yield from serve_http(command, port, dict(os.environ), "the surface server")


@pytest.fixture(params=["stdio", "http"])
def transport_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def surface_client(kind: str, request: pytest.FixtureRequest, events: list[Event]) -> AsyncIterator[Client]:
    transport: Transport
    if kind == "stdio":
        transport = stdio(sys.executable, [str(SURFACE_SERVER)])
    else:
        transport = http(request.getfixturevalue("surface_url"))
    async with Client(transport, timeout=POLICY, on_event=events.append) as client:
        yield client


async def test_templates_completion_and_ping_on_a_2026_server(
    transport_kind: str, request: pytest.FixtureRequest
) -> None:
    events: list[Event] = []
    async with surface_client(transport_kind, request, events) as client:
        assert client.protocol_version == "2026-07-28"
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["greeting://{name}"]
        ref = mcp_types.ResourceTemplateReference(type="ref/resource", uri="greeting://{name}")
        assert await client.complete(ref, "name", "al") == mcp_types.Completion(
            values=["alice", "albert"], total=2, has_more=False
        )
        prompt = mcp_types.PromptReference(type="ref/prompt", name="greet")
        completion = await client.complete(prompt, "style", "", {"name": "bob"})
        assert completion.values == ["formal for bob", "casual"]
        await client.ping()
    assert [e.method for e in events if isinstance(e, RequestSent)][-1] == "server/discover"


async def test_log_messages_of_a_call_arrive_as_its_events_and_keep_it_alive(
    transport_kind: str, request: pytest.FixtureRequest
) -> None:
    """Six logs 0.4 s apart under a 1 s idle timeout: the call lives because its own logs reset idle."""
    events: list[Event] = []
    async with surface_client(transport_kind, request, events) as client:
        result = await client.call_tool(
            "chatty", {"count": 6, "interval": 0.4}, log_level="info", timeout=TimeoutPolicy(idle=1.0, maximum=30)
        )
        assert not result.is_error
        unasked = await client.call_tool("chatty", {"count": 2, "interval": 0.01})  # no log_level: no logs
        assert not unasked.is_error
    [call_id] = [e.request_id for e in events if isinstance(e, RequestSent) and e.target == "chatty"][:1]
    logs = [e for e in events if isinstance(e, ServerLog)]
    assert [(log.level, log.data, log.logger, log.request_id) for log in logs] == [
        ("info", f"step {step}", "chatty", call_id) for step in range(1, 7)
    ]
    assert len([e for e in events if isinstance(e, IdleTimerReset) and e.request_id == call_id]) == 6


@pytest.fixture
def everything(server_everything_command: list[str]) -> list[str]:
    return server_everything_command


async def test_ping_logging_completion_and_templates_on_a_2025_server(everything: list[str]) -> None:
    events: list[Event] = []
    async with Client(stdio(everything[0], everything[1:]), timeout=POLICY, on_event=events.append) as client:
        assert client.protocol_version == "2025-11-25"
        await client.ping()
        templates = await client.list_resource_templates()
        assert templates
        prompt = mcp_types.PromptReference(type="ref/prompt", name="completable-prompt")
        completion = await client.complete(prompt, "name", "A", {"department": "Engineering"})
        assert completion.values == ["Alice"]
        await client.set_log_level("debug")
        await client.call_tool("toggle-simulated-logging", {})
        with anyio.fail_after(15):
            while not any(isinstance(e, ServerLog) for e in events):
                await anyio.sleep(0.05)  # a real server's log, on a real clock
        await client.call_tool("toggle-simulated-logging", {})
    sent = [e.method for e in events if isinstance(e, RequestSent)]
    assert "ping" in sent
    assert "logging/setLevel" in sent
    log = next(e for e in events if isinstance(e, ServerLog))
    assert log.request_id is None  # a 2025 session-wide log belongs to no request


async def test_structured_output_of_a_real_server_is_checked_against_its_output_schema(
    transport_kind: str, request: pytest.FixtureRequest
) -> None:
    events: list[Event] = []
    async with surface_client(transport_kind, request, events) as client:
        await client.list_tools()
        good = await client.call_tool("weather", {"city": "Oslo"})
        assert good.structured_content == {"city": "Oslo", "celsius": 21.5}
        with pytest.raises(StructuredOutputError, match="celsius"):
            await client.call_tool("bad_weather", {"city": "Oslo"})


async def test_list_tools_twice_within_a_real_servers_ttl_makes_one_request(
    transport_kind: str, request: pytest.FixtureRequest
) -> None:
    """The server keeps tools/list fresh for 60 s and resources/read too (private); other lists for 0 s."""
    events: list[Event] = []
    async with surface_client(transport_kind, request, events) as client:
        first = await client.list_tools()
        assert await client.list_tools() == first
        await client.read_resource("greeting://alice")
        assert (await client.read_resource("greeting://alice")).contents[0].text == "hello alice"  # type: ignore[union-attr]
        await client.list_prompts()
        await client.list_prompts()
        await client.list_tools(cache=False)
    sent = [e.method for e in events if isinstance(e, RequestSent)]
    assert sent.count("tools/list") == 2  # the second call came from the cache, the third bypassed it
    assert sent.count("resources/read") == 1
    assert sent.count("prompts/list") == 2  # ttl 0: never kept
