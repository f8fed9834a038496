"""What a host calls beyond tools: resource templates, completion, ping, log levels and server log messages."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest

from mcp_client import Client, Event, IdleTimeout, IdleTimerReset, ServerLog, TimeoutPolicy, memory
from tests.integration.line_server import JSON, LineServer, Notify, RpcError

pytestmark = pytest.mark.anyio

POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)
TEMPLATE_PAGES: dict[str | None, JSON] = {
    None: {"resourceTemplates": [{"name": "a", "uriTemplate": "a://{x}"}], "nextCursor": "p2"},
    "p2": {"resourceTemplates": [{"name": "b", "uriTemplate": "b://{y}"}]},
}
LOG_KEY = "io.modelcontextprotocol/logLevel"


async def handle(method: str, params: JSON, notify: Notify) -> JSON:
    if method == "resources/templates/list":
        return TEMPLATE_PAGES[params.get("cursor")]
    if method == "completion/complete":
        return {"completion": {"values": [params["argument"]["value"] + "ce"], "total": 1, "hasMore": False}}
    if method in ("ping", "logging/setLevel"):
        return {}
    if method == "tools/call":
        arguments = params.get("arguments") or {}
        for step in range(int(arguments.get("logs", 0))):
            await anyio.sleep(float(arguments.get("every", 0)))
            await notify("notifications/message", {"level": "info", "logger": "t", "data": {"step": step}})
        await anyio.sleep(float(arguments.get("every", 0)))
        return {"content": [{"type": "text", "text": "done"}]}
    raise RpcError(-32601, f"no {method}")


def client(server: LineServer, events: list[Event] | None = None, **options: Any) -> Client:
    options.setdefault("timeout", POLICY)
    hook = events.append if events is not None else None
    return Client(memory(server.serve), on_event=hook, **options)


async def test_list_resource_templates_fetches_every_page() -> None:
    server = LineServer(handle)
    async with client(server) as c:
        templates = await c.list_resource_templates()
    assert [t.uri_template for t in templates] == ["a://{x}", "b://{y}"]
    assert [r.get("params", {}).get("cursor") for r in server.requests[1:]] == [None, "p2"]


async def test_complete_sends_the_ref_argument_and_context_and_returns_the_completion() -> None:
    server = LineServer(handle)
    ref = mcp_types.ResourceTemplateReference(type="ref/resource", uri="a://{x}")
    async with client(server) as c:
        completion = await c.complete(ref, "x", "ali", {"y": "1"})
        with pytest.raises(TypeError, match="PromptReference"):
            await c.complete({"type": "ref/prompt", "name": "p"}, "x", "v")  # type: ignore[arg-type]
    assert completion == mcp_types.Completion(values=["alice"], total=1, has_more=False)
    [sent] = [r["params"] for r in server.requests if r["method"] == "completion/complete"]
    assert sent["ref"] == {"type": "ref/resource", "uri": "a://{x}"}
    assert (sent["argument"], sent["context"]) == ({"name": "x", "value": "ali"}, {"arguments": {"y": "1"}})


@pytest.mark.parametrize(("era", "method"), [("legacy", "ping"), ("modern", "server/discover")])
async def test_ping_is_ping_at_2025_and_an_uncached_discover_at_2026(era: str, method: str) -> None:
    server = LineServer(handle, era=era)  # type: ignore[arg-type]
    async with client(server, protocol="auto" if era == "modern" else "2025-11-25") as c:
        before = len(server.requests)
        await c.ping()
        await c.ping()
    assert [r["method"] for r in server.requests[before:]] == [method, method]


async def test_a_call_asks_for_its_log_level_and_gets_its_log_messages_as_events() -> None:
    server = LineServer(handle)
    events: list[Event] = []
    async with client(server, events) as c:
        with pytest.raises(ValueError, match="log level"):
            await c.call_tool("t", {}, log_level="loud")  # type: ignore[arg-type]
        await c.call_tool("t", {"logs": 2}, log_level="info")
        await c.call_tool("t", {})
    calls = [r for r in server.requests if r["method"] == "tools/call"]
    assert [r["params"]["_meta"].get(LOG_KEY) for r in calls] == ["info", None]  # the bad level never left
    logs = [e for e in events if isinstance(e, ServerLog)]
    assert logs == [
        ServerLog("info", {"step": 0}, "t", calls[0]["id"]),
        ServerLog("info", {"step": 1}, "t", calls[0]["id"]),
    ]


async def test_set_log_level_is_logging_set_level_at_2025_and_the_default_request_level_at_2026() -> None:
    legacy = LineServer(handle, era="legacy")
    events: list[Event] = []
    async with client(legacy, events, protocol="2025-11-25") as c:
        await c.set_log_level("warning")
        await c.call_tool("t", {"logs": 1}, log_level="debug")  # no per-request level at 2025: not sent
    [set_level] = [r for r in legacy.requests if r["method"] == "logging/setLevel"]
    assert set_level["params"]["level"] == "warning"
    [call] = [r for r in legacy.requests if r["method"] == "tools/call"]
    assert LOG_KEY not in call["params"].get("_meta", {})
    # A 2025 log is session-wide: it belongs to no request, even with one in flight.
    assert [e.request_id for e in events if isinstance(e, ServerLog)] == [None]

    modern = LineServer(handle)
    async with client(modern) as c:
        await c.set_log_level("error")
        await c.call_tool("t", {})
        await c.call_tool("t", {}, log_level="debug")
    assert "logging/setLevel" not in modern.methods()
    calls = [r for r in modern.requests if r["method"] == "tools/call"]
    assert [r["params"]["_meta"][LOG_KEY] for r in calls] == ["error", "debug"]


@pytest.mark.fake_clock
@pytest.mark.parametrize("reset_on_log", [True, False])
async def test_a_log_message_of_the_call_is_a_sign_of_life_when_the_policy_says_so(reset_on_log: bool) -> None:
    """Five log messages 3 s apart under a 5 s idle timeout: the call lives only if logs reset the idle timer."""
    server = LineServer(handle)
    events: list[Event] = []
    policy = TimeoutPolicy(idle=5, maximum=100, reset_on_log=reset_on_log)
    async with client(server, events, timeout=policy) as c:
        if reset_on_log:
            result = await c.call_tool("t", {"logs": 5, "every": 3}, log_level="info")
            assert result.content[0].text == "done"  # type: ignore[union-attr]
            assert len([e for e in events if isinstance(e, IdleTimerReset)]) == 5
        else:
            with pytest.raises(IdleTimeout):
                await c.call_tool("t", {"logs": 5, "every": 3}, log_level="info")
            assert not [e for e in events if isinstance(e, IdleTimerReset)]


@pytest.mark.fake_clock
async def test_without_a_stream_a_log_with_several_calls_in_flight_belongs_to_none_and_resets_nothing() -> None:
    server = LineServer(handle)
    events: list[Event] = []
    async with client(server, events) as c, anyio.create_task_group() as group:
        group.start_soon(c.call_tool, "t", {"logs": 1, "every": 1})
        group.start_soon(c.call_tool, "t", {"logs": 1, "every": 1.5})
    logs = [e for e in events if isinstance(e, ServerLog)]
    assert len(logs) == 2
    assert [log.request_id for log in logs] == [None, None]
    assert not [e for e in events if isinstance(e, IdleTimerReset)]


@pytest.mark.fake_clock
async def test_without_a_stream_a_log_belongs_to_the_only_call_in_flight_that_asked_for_logs() -> None:
    server = LineServer(handle)
    events: list[Event] = []
    async with client(server, events) as c, anyio.create_task_group() as group:
        group.start_soon(c.call_tool, "t", {"every": 3})  # in flight all along, did not ask for logs
        group.start_soon(lambda: c.call_tool("t", {"logs": 2, "every": 1}, log_level="debug"))
    asker = [r["id"] for r in server.requests if r["method"] == "tools/call" and "logs" in r["params"]["arguments"]]
    assert [e.request_id for e in events if isinstance(e, ServerLog)] == asker * 2
    assert [e.request_id for e in events if isinstance(e, IdleTimerReset)] == asker * 2
