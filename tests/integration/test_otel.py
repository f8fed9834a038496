"""OpenTelemetry spans from the event stream (``mcp_client.otel``), against the scripted peer in memory.

Spans go to opentelemetry-sdk's ``InMemorySpanExporter`` through a tracer provider of the test's own (the global
one is never touched). Timing tests run on trio's fake clock.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_client import (
    Client,
    ClientGroup,
    Event,
    IdleTimeout,
    MCPClientError,
    RequestSent,
    RetryPolicy,
    ServerError,
    TimeoutPolicy,
    memory,
)
from mcp_client._redact import remember_secrets
from mcp_client.otel import Tracing
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.stdio import stdio

pytestmark = pytest.mark.anyio

POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def tracing(provider: TracerProvider) -> Tracing:
    return Tracing(provider, attributes={"network.transport": "pipe"})


def client_for(peer: ScriptedPeer, tracing: Tracing, *then: object, **options: object) -> Client:
    hook = tracing.hook(*then) if then else tracing.on_event  # type: ignore[arg-type]
    return Client(memory(peer.serve), timeout=POLICY, on_event=hook, **options)  # type: ignore[arg-type]


def calls(exporter: InMemorySpanExporter, method: str = "tools/call") -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if (span.attributes or {}).get("mcp.method.name") == method]


def event_names(span: ReadableSpan) -> list[str]:
    return [event.name for event in span.events]


async def test_one_span_per_call_with_the_conventional_attributes(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    peer = ScriptedPeer(era="modern")
    async with client_for(peer, tracing) as client:
        await client.list_tools()
        await client.call_tool("echo", {"text": "one"})
        await client.list_prompts()

    (listing,) = calls(exporter, "tools/list")
    (first,) = calls(exporter, "tools/call")
    (second,) = calls(exporter, "prompts/list")
    assert listing.name == "tools/list"
    assert first.name == "tools/call echo"
    assert first.kind is SpanKind.CLIENT
    assert first.status.status_code is StatusCode.UNSET
    attributes = dict(first.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "echo"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["network.transport"] == "pipe"
    assert attributes["mcp_client.attempts"] == 1
    request_id = attributes["jsonrpc.request.id"]
    assert attributes["mcp_client.request_ids"] == (request_id,)
    assert "error.type" not in attributes
    # The tool name comes from the events; a request without a target is named after the method alone.
    assert second.name == "prompts/list"
    assert "gen_ai.tool.name" not in (second.attributes or {})
    assert first.parent is None


async def test_a_span_is_a_child_of_the_callers_span(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    tracing = Tracing(provider, protocol_version=lambda: "2026-07-28")
    peer = ScriptedPeer(era="modern")
    async with client_for(peer, tracing) as client:
        with provider.get_tracer("host").start_as_current_span("host work") as host:
            await client.call_tool("echo", {"text": "x"})
    (span,) = calls(exporter)
    assert span.parent is not None
    assert span.parent.span_id == host.get_span_context().span_id
    assert (span.attributes or {})["mcp.protocol.version"] == "2026-07-28"


async def test_a_server_error_sets_the_error_status_and_code(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    peer = ScriptedPeer(era="modern")
    async with client_for(peer, tracing) as client:
        with pytest.raises(ServerError):
            await client.call_tool("fail", {"code": -32000, "message": "boom"})
    (span,) = calls(exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "boom"
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "-32000"
    assert attributes["rpc.response.status_code"] == "-32000"
    assert "exception" in event_names(span)


@pytest.mark.fake_clock
async def test_a_timeout_is_an_error_span_that_records_the_cancellation(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    peer = ScriptedPeer(era="modern")
    async with client_for(peer, tracing) as client:
        with pytest.raises(IdleTimeout):
            await client.call_tool("silent", timeout=TimeoutPolicy(idle=3, maximum=100))
        await client.call_tool("echo", {"text": "after"})
    timed_out, after = calls(exporter)
    assert timed_out.status.status_code is StatusCode.ERROR
    attributes = dict(timed_out.attributes or {})
    assert attributes["error.type"] == "IdleTimeout"
    assert attributes["mcp_client.timeout.kind"] == "idle"
    # The cancellation went on the wire after the call ended; the span waited for it.
    assert attributes["mcp_client.cancel.method"] == "notification"
    assert event_names(timed_out)[:1] == ["mcp_client.timeout"]
    assert "mcp_client.cancel" in event_names(timed_out)
    assert after.status.status_code is StatusCode.UNSET


@pytest.mark.fake_clock
async def test_retries_stay_in_one_span_and_late_answers_become_events(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    """Attempt 1 times out and is retried; its late answer lands while attempt 2 runs (an event of the span).
    Attempt 2 times out too, the call fails; its late answer comes after the span ended (a child span)."""
    peer = ScriptedPeer(era="modern")
    retry = RetryPolicy(attempts=2, retry_idle_timeout=True)
    async with client_for(peer, tracing, retry=retry) as client:
        await client.list_tools()  # ignore_cancel is idempotent: retries are safe
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("ignore_cancel", {"seconds": 5}, timeout=TimeoutPolicy(idle=3, maximum=100))
        await anyio.sleep(10)

    (span,) = calls(exporter)
    first, second = caught.value.request_ids
    attributes = dict(span.attributes or {})
    assert attributes["mcp_client.attempts"] == 2
    assert attributes["mcp_client.request_ids"] == (str(first), str(second))
    assert attributes["jsonrpc.request.id"] == str(second)
    names = event_names(span)
    assert names.count("mcp_client.timeout") == 2
    assert "mcp_client.retry" in names
    assert "mcp_client.request_sent" in names
    late = [event for event in span.events if event.name == "mcp_client.late_message"]
    assert [dict(event.attributes or {})["request_id"] for event in late] == [first]
    (after,) = [s for s in exporter.get_finished_spans() if s.name == "mcp_client.late_message"]
    assert after.parent is not None
    assert after.parent.span_id == span.context.span_id
    assert dict(after.attributes or {})["request_id"] == second


@pytest.mark.fake_clock
async def test_progress_becomes_a_limited_number_of_events(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    tracing = Tracing(provider, max_progress_events=3)
    peer = ScriptedPeer(era="modern")
    async with client_for(peer, tracing) as client:
        await client.call_tool("slow", {"seconds": 10, "progress_every": 1, "total": 10})
    (span,) = calls(exporter)
    progress = [dict(event.attributes or {}) for event in span.events if event.name == "mcp_client.progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3, 10]  # the first few, and the last
    assert all(p["total"] == 10 for p in progress)
    assert (span.attributes or {})["mcp_client.progress.count"] == 10


async def test_traceparent_injection_format(tracing: Tracing, provider: TracerProvider) -> None:
    params: dict[str, object] = {"name": "echo", "_meta": {"mine": 1}}
    assert tracing.inject(params) is params
    assert params["_meta"] == {"mine": 1}  # no active span: nothing to propagate
    with provider.get_tracer("host").start_as_current_span("host") as host:
        tracing.inject(params)
    meta = params["_meta"]
    assert isinstance(meta, dict)
    assert meta["mine"] == 1
    match = TRACEPARENT.match(meta["traceparent"])
    assert match is not None
    context = host.get_span_context()
    assert match.groups()[:2] == (f"{context.trace_id:032x}", f"{context.span_id:016x}")
    assert int(match.group(3), 16) & 1  # sampled


async def test_the_meta_hook_starts_the_span_and_sends_its_context(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    """What the client will do once wired: the hook before each call; the server sees the call's span as parent."""
    peer = ScriptedPeer(era="modern")
    async with client_for(peer, tracing) as client:
        params: dict[str, object] = {"name": "echo", "arguments": {"text": "x"}}
        tracing.meta_hook("tools/call", params)
        await client.request("tools/call", params)
    (span,) = calls(exporter)
    assert span.name == "tools/call echo"
    (sent,) = [m for m in peer.stats.received if m.get("method") == "tools/call"]
    meta = sent["params"]["_meta"]
    match = TRACEPARENT.match(meta["traceparent"])
    assert match is not None
    assert match.group(2) == f"{span.context.span_id:016x}"
    assert "progressToken" in meta or "io.modelcontextprotocol/protocolVersion" in meta  # the session's stamp kept


async def test_a_shared_tracing_keeps_clients_apart(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    seen: list[Event] = []
    async with (
        client_for(ScriptedPeer(era="modern"), tracing, seen.append) as one,
        client_for(ScriptedPeer(era="legacy"), tracing) as two,
        anyio.create_task_group() as task_group,
    ):
        task_group.start_soon(one.call_tool, "echo", {"text": "1"})
        task_group.start_soon(two.call_tool, "echo", {"text": "2"})
    assert len(calls(exporter)) == 2
    assert any(isinstance(event, RequestSent) for event in seen)


async def test_group_spans_name_their_server(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    peers = {"a": ScriptedPeer(era="modern"), "b": ScriptedPeer(era="legacy")}
    servers = {name: memory(peer.serve) for name, peer in peers.items()}
    async with ClientGroup(servers, on_event=tracing.on_group_event, timeout=POLICY) as group:
        await group.call_tool("a/echo", {"text": "1"})
        await group.call_tool("b/echo", {"text": "2"})
    servers_seen = [(span.attributes or {}).get("mcp_client.server.name") for span in calls(exporter)]
    assert servers_seen == ["a", "b"]


def test_no_span_when_tracing_is_off() -> None:
    """With no SDK configured the API's no-op tracer is used: the hook costs nothing and records nothing."""
    tracing = Tracing(trace.NoOpTracerProvider())
    tracing.on_event(RequestSent(1, "tools/call", None))
    tracing.flush()


async def test_a_failed_calls_span_holds_no_secret(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    """A server error naming a URL with credentials and a configured header value: the span's status, its
    exception event (message and stack) hold neither (spans leave the process for a collector)."""
    secret = "hdr-span-secret-4242"
    remember_secrets(headers={"X-Api-Key": secret})
    message = f"upstream https://bob:pw-0x5ecret@api.example/v1?key=sk-live-0123456789 refused {secret}"
    async with client_for(ScriptedPeer(), tracing) as client:
        with pytest.raises(ServerError):
            await client.call_tool("fail", {"message": message})
    (span,) = calls(exporter)
    texts = [span.status.description or ""]
    texts += [str(value) for event in span.events for value in (event.attributes or {}).values()]
    assert any("api.example" in text for text in texts)
    for text in texts:
        assert secret not in text
        assert "pw-0x5ecret" not in text
        assert "sk-live-0123456789" not in text


@pytest.mark.fake_clock
async def test_a_progress_message_enters_its_span_without_a_secret(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    """A progress message is the server's text, and a server may echo back what it was sent (a header value, a
    URL with credentials): it entered the span's progress events whole, and spans leave the process."""
    secret = "hdr-progress-secret-4242"
    remember_secrets(headers={"X-Api-Key": secret})
    message = f"fetching https://bob:pw-0x5ecret@api.example/v1?key=sk-live-0123456789 with {secret}"
    async with client_for(ScriptedPeer(), tracing) as client:
        await client.call_tool("slow", {"seconds": 2, "progress_every": 1, "message": message})
    (span,) = calls(exporter)
    shown = [
        str((event.attributes or {}).get("message")) for event in span.events if event.name == "mcp_client.progress"
    ]
    assert len(shown) == 2
    for text in shown:
        assert "api.example" in text
        assert secret not in text
        assert "pw-0x5ecret" not in text
        assert "sk-live-0123456789" not in text


def _span_texts(span: ReadableSpan) -> list[str]:
    texts = [span.name, span.status.description or ""]
    texts += [value for value in (span.attributes or {}).values() if isinstance(value, str)]
    for event in span.events:
        texts += [value for value in (event.attributes or {}).values() if isinstance(value, str)]
    return texts


@pytest.mark.real_clock
async def test_a_servers_hostile_text_enters_its_spans_visible_and_encodable(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    """A server's progress message and error text with terminal escapes and a lone surrogate: a span exporter
    encodes UTF-8 (OTLP's protobuf), and one lone surrogate fails its whole batch; a collector's console shows the
    escapes. Server text enters a span visible, as in every log record."""
    command = [sys.executable, str(Path(__file__).with_name("hostile_text_server.py"))]
    async with Client(stdio(command[0], command[1:]), timeout=POLICY, on_event=tracing.on_event) as client:
        await client.call_tool("hostile", {}, on_progress=lambda progress: None)
        with pytest.raises(ServerError):
            await client.call_tool("missing", {})
    spans = calls(exporter)
    assert len(spans) == 2
    texts = [text for span in spans for text in _span_texts(span)]
    assert any("\\ud800" in text for text in texts)  # the surrogate, written out
    for text in texts:
        text.encode("utf-8")  # (raises on a lone surrogate)
        assert "\x1b" not in text
        assert "\x07" not in text


async def test_a_resource_uri_enters_its_span_redacted(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    """A resource's URI may be a signed or credentialed URL (``https://bob:pw@host/r?X-Amz-Signature=…``): the
    span's ``mcp.resource.uri`` held it whole. It holds the one redacted name, as every URL a span shows."""
    peer = ScriptedPeer(era="modern")
    uri = "https://bob:pw-0x5ecret@files.example/report?X-Amz-Signature=0a1b2c3d"
    async with client_for(peer, tracing) as client:
        params: dict[str, object] = {"uri": uri}
        tracing.meta_hook("resources/read", params)
        with pytest.raises(ServerError):
            await client.request("resources/read", params)
    (span,) = calls(exporter, "resources/read")
    shown = str((span.attributes or {}).get("mcp.resource.uri"))
    assert "files.example/report" in shown
    assert "pw-0x5ecret" not in shown
    assert "0a1b2c3d" not in shown


async def test_a_tool_name_enters_its_span_without_a_secret(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    """A tool's name is the server's text (its listing; the model that picked it may echo a URL): it entered the
    span's name and ``gen_ai.tool.name`` whole, where every other text of the server is scrubbed."""
    secret = "hdr-tool-name-secret-4242"
    remember_secrets(headers={"X-Api-Key": secret})
    name = f"fetch_{secret}"
    async with client_for(ScriptedPeer(), tracing) as client:
        with pytest.raises(MCPClientError):  # (the scripted server has no such tool)
            await client.call_tool(name, {})
    (span,) = calls(exporter)
    texts = [span.name, str((span.attributes or {}).get("gen_ai.tool.name"))]
    assert all(text.endswith("fetch_***") for text in texts), texts
