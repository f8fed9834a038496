"""OpenTelemetry tracing from the event stream: one CLIENT span per call, W3C trace context in ``params._meta``.

Needs the ``otel`` extra (``pip install 'mcp-policy-client[otel]'``, which installs ``opentelemetry-api``); the rest of
mcp_client never imports this module.

```python
from mcp_client.otel import Tracing

tracing = Tracing()                      # the global tracer provider, or Tracing(tracer_provider=...)
async with Client(transport, on_event=tracing.on_event) as client:
    with tracing.target("reindex"):      # until the events carry the tool name
        await client.call_tool("reindex", {"collection": "docs"})
```

Spans follow the OpenTelemetry semantic conventions for MCP (development status): named ``{mcp.method.name}
{target}`` (``"tools/call reindex"``), kind CLIENT, with ``mcp.method.name``, ``jsonrpc.request.id``,
``gen_ai.tool.name`` and ``gen_ai.operation.name = "execute_tool"`` (tool calls), ``gen_ai.prompt.name``,
``mcp.resource.uri``, ``mcp.protocol.version``, ``rpc.response.status_code`` and ``error.type`` (failures), plus
this client's own ``mcp_client.*`` attributes and span events (progress, retries, timeouts, cancellations, late
messages). A call's retries stay in its one span. The span's status is ERROR when the call raised.

A span starts at the call's first ``RequestSent`` (or earlier, at :meth:`Tracing.meta_hook`) and ends at its
``RequestFinished``; when a cancellation is still on its way (a timeout, a cancel), the span is held open until
its ``CancelSent`` (at most ``cancel_grace`` seconds; :meth:`Tracing.flush` ends them all) and ends at the time
the call finished. Anything for a call whose span has ended (a late answer) becomes a zero-length child span.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeAlias

try:
    from opentelemetry import trace
    from opentelemetry.context import Context
    from opentelemetry.propagators.textmap import TextMapPropagator
    from opentelemetry.trace import Span, SpanContext, SpanKind, Status, StatusCode, TracerProvider
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    from opentelemetry.util.types import AttributeValue
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "mcp_client.otel needs OpenTelemetry: install the 'otel' extra (pip install 'mcp-policy-client[otel]')"
    ) from exc

from mcp_client._redact import scrub
from mcp_client._types import JSONObject
from mcp_client._version import __version__
from mcp_client._visible import visible
from mcp_client.errors import MCPClientError, RequestCancelled, RequestTimeout, ServerError, ToolError
from mcp_client.events import (
    CancelSent,
    Event,
    LateMessage,
    ProgressAccepted,
    ProgressRejected,
    RequestFinished,
    RequestSent,
    RetryScheduled,
    Slow,
    TimedOut,
    TransportFailure,
)

__all__ = [
    "ATTR_ATTEMPTS",
    "ATTR_CANCEL_METHOD",
    "ATTR_ERROR_TYPE",
    "ATTR_METHOD",
    "ATTR_OPERATION",
    "ATTR_PROGRESS_COUNT",
    "ATTR_PROMPT",
    "ATTR_PROTOCOL_VERSION",
    "ATTR_REQUEST_ID",
    "ATTR_REQUEST_IDS",
    "ATTR_RESOURCE_URI",
    "ATTR_SERVER",
    "ATTR_STATUS_CODE",
    "ATTR_TIMEOUT_KIND",
    "ATTR_TOOL",
    "Tracing",
]

# The OpenTelemetry semantic conventions for MCP (gen-ai/mcp.md, development status).
ATTR_METHOD = "mcp.method.name"
ATTR_REQUEST_ID = "jsonrpc.request.id"
ATTR_PROTOCOL_VERSION = "mcp.protocol.version"
ATTR_TOOL = "gen_ai.tool.name"
ATTR_OPERATION = "gen_ai.operation.name"
ATTR_PROMPT = "gen_ai.prompt.name"
ATTR_RESOURCE_URI = "mcp.resource.uri"
ATTR_STATUS_CODE = "rpc.response.status_code"
ATTR_ERROR_TYPE = "error.type"
# This client's own.
ATTR_ATTEMPTS = "mcp_client.attempts"
"""How many requests the call put on the wire (first attempt, retries, input rounds)."""
ATTR_REQUEST_IDS = "mcp_client.request_ids"
"""Every JSON-RPC id the call used, oldest first (``jsonrpc.request.id`` is the last one)."""
ATTR_TIMEOUT_KIND = "mcp_client.timeout.kind"
"""``idle``, ``maximum`` or ``caller``: which clock ended a call that timed out."""
ATTR_CANCEL_METHOD = "mcp_client.cancel.method"
"""How a cancellation went on the wire: ``notification``, ``stream close``, ``notification and stream close``."""
ATTR_PROGRESS_COUNT = "mcp_client.progress.count"
"""How many progress updates the call accepted (only the first few become span events)."""
ATTR_SERVER = "mcp_client.server.name"
"""The server's name in a :class:`~mcp_client.ClientGroup`."""

_TARGETED = frozenset({"tools/call", "prompts/get"})
_NOT_CANCELLABLE = frozenset({"initialize", "server/discover"})
_ENDED_LIMIT = 4096

RequestId: TypeAlias = int | str
_Key: TypeAlias = tuple[object, RequestId]


@dataclass(eq=False)
class _CallSpan:
    """The span of one call and what is known of the call so far."""

    owner: Tracing
    span: Span
    method: str
    scope: object = None
    request_ids: list[RequestId] = field(default_factory=list)
    claimed: bool = False
    events: int = 0
    progress: int = 0
    held_progress: tuple[dict[str, AttributeValue], int] | None = None
    timed_out: dict[RequestId, str] = field(default_factory=dict)
    cancelled: set[RequestId] = field(default_factory=set)
    retry_key: tuple[object, str, int] | None = None
    end_ns: int | None = None
    finished_at: float = 0.0


_PENDING: ContextVar[_CallSpan | None] = ContextVar("mcp_client.otel.pending", default=None)
"""The span :meth:`Tracing.meta_hook` started for the call this task is about to send."""
_TARGET: ContextVar[str | None] = ContextVar("mcp_client.otel.target", default=None)
"""The tool or prompt name set by :meth:`Tracing.target` for the calls made in this context."""


class Tracing:
    """Turns the :mod:`~mcp_client.events` stream into OpenTelemetry spans. Thread-safe.

    Use :meth:`on_event` as the ``on_event`` of one :class:`~mcp_client.Client`; to share one ``Tracing`` between
    clients give each its own :meth:`hook` (request ids are per client); for a group, :meth:`on_group_event`.

    Args:
        tracer_provider: Where spans go (default: the global provider).
        protocol_version: ``mcp.protocol.version`` of the spans: a string, or a callable asked at each span's
            start (``lambda: client.protocol_version``; an exception there means unknown).
        attributes: Set on every span (``network.transport``, ``server.address``...).
        max_progress_events: Progress updates (and rejections) recorded as span events per call; the rest are
            counted (``mcp_client.progress.count``) and the last one is recorded when the call ends.
        cancel_grace: Seconds a finished span waits for the cancellation that follows a timeout or a cancel.
        propagator: How :meth:`inject` writes the context (default: W3C ``traceparent``/``tracestate``).
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        protocol_version: str | Callable[[], str | None] | None = None,
        attributes: Mapping[str, AttributeValue] | None = None,
        max_progress_events: int = 16,
        cancel_grace: float = 5.0,
        propagator: TextMapPropagator | None = None,
    ) -> None:
        self._tracer = trace.get_tracer("mcp_client", __version__, tracer_provider=tracer_provider)
        self._protocol_version = protocol_version
        self._attributes = dict(attributes or {})
        self._max_progress_events = max_progress_events
        self._cancel_grace = cancel_grace
        self._propagator = propagator if propagator is not None else TraceContextTextMapPropagator()
        self._lock = threading.RLock()
        self._open: dict[_Key, _CallSpan] = {}
        self._awaiting_retry: dict[tuple[object, str, int], deque[_CallSpan]] = {}
        self._awaiting_cancel: dict[_Key, _CallSpan] = {}
        self._ended: OrderedDict[_Key, SpanContext] = OrderedDict()

    # -- hooks ----------------------------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """The ``on_event`` hook of one client."""
        self._handle(event, None, None)

    def on_group_event(self, server: str, event: Event) -> None:
        """The ``on_event`` hook of a :class:`~mcp_client.ClientGroup` (spans get ``mcp_client.server.name``)."""
        self._handle(event, ("server", server), server)

    def hook(self, *then: Callable[[Event], None], server: str | None = None) -> Callable[[Event], None]:
        """An ``on_event`` hook for one more client sharing this ``Tracing``, followed by the hooks ``then``.

        ``server`` names the client's server on its spans. Each call of :meth:`hook` is a scope of its own.
        """
        scope = object()

        def on_event(event: Event) -> None:
            self._handle(event, scope, server)
            for other in then:
                other(event)

        return on_event

    def meta_hook(self, method: str, params: JSONObject) -> None:
        """Start the span of a call about to be sent and write its trace context into ``params["_meta"]``.

        Meant to be called by the client for every call, on the task that sends it, just before: the server's
        span then becomes a child of this call's span, and the tool, prompt or resource is known from
        ``params``. The span is claimed by the call's first ``RequestSent`` on the same task.
        """
        target = params.get("name") if method in _TARGETED else None
        call = self._start(method, target if isinstance(target, str) else None, None, None)
        uri = params.get("uri")
        if method == "resources/read" and isinstance(uri, str):
            call.span.set_attribute(ATTR_RESOURCE_URI, _shown(uri))  # (a signed or credentialed URL: redacted)
        _PENDING.set(call)
        self.inject(params, trace.set_span_in_context(call.span))

    def inject(self, params: JSONObject, context: Context | None = None) -> JSONObject:
        """Add the trace context (default: the current one) to ``params["_meta"]``: ``traceparent`` and, when
        there is one, ``tracestate``. ``params`` is changed in place (its ``_meta`` is copied) and returned."""
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=context)
        if carrier:
            own = params.get("_meta")
            meta = dict(own) if isinstance(own, dict) else {}
            meta.update(carrier)
            params["_meta"] = meta
        return params

    @staticmethod
    @contextmanager
    def target(name: str) -> Iterator[None]:
        """Name the tool (or prompt) of the calls sent in this block, for hosts whose client does not say it."""
        token = _TARGET.set(name)
        try:
            yield
        finally:
            _TARGET.reset(token)

    def flush(self) -> None:
        """End every span still waiting for its cancellation (at the time its call finished)."""
        with self._lock:
            for key in list(self._awaiting_cancel):
                self._end(self._awaiting_cancel.pop(key))

    # -- the events ---------------------------------------------------------------------------------------------

    def _handle(self, event: Event, scope: object, server: str | None) -> None:
        with self._lock:
            if self._awaiting_cancel:
                self._sweep()
            if isinstance(event, RequestSent):
                self._sent(event, scope, server)
            elif isinstance(event, RequestFinished):
                self._finished(event, scope)
            elif isinstance(event, ProgressAccepted):
                self._progress(event, scope)
            elif isinstance(event, RetryScheduled):
                self._retry(event, scope)
            elif isinstance(event, TimedOut):
                call = self._open.get((scope, event.request_id))
                if call is not None:
                    call.timed_out[event.request_id] = event.kind.value
                    attributes = {"kind": event.kind.value, "elapsed": event.elapsed, "request_id": event.request_id}
                    call.span.add_event("mcp_client.timeout", attributes)
            elif isinstance(event, CancelSent):
                self._cancel_sent(event, scope)
            elif isinstance(event, LateMessage):
                self._late(event, scope)
            elif isinstance(event, Slow):
                call = self._open.get((scope, event.request_id))
                if call is not None:
                    call.span.add_event("mcp_client.slow", {"elapsed": event.elapsed})
            elif isinstance(event, ProgressRejected) and event.request_id is not None:
                call = self._open.get((scope, event.request_id))
                if call is not None and call.events < self._max_progress_events:
                    call.events += 1
                    call.span.add_event("mcp_client.progress_rejected", {"reason": _shown(event.reason)})
            elif isinstance(event, TransportFailure) and event.request_id is not None:
                call = self._open.get((scope, event.request_id))
                if call is not None:
                    attributes = {ATTR_ERROR_TYPE: _error_type(event.error), "message": _shown(event.error.message)}
                    call.span.add_event("mcp_client.transport_failure", attributes)

    def _start(self, method: str, target: str | None, scope: object, server: str | None) -> _CallSpan:
        attributes: dict[str, AttributeValue] = dict(self._attributes)
        attributes[ATTR_METHOD] = method
        if target is not None:
            target = _shown(target)  # (a tool's or prompt's name is the server's text: it may echo a secret back)
        if target is not None and method == "tools/call":
            attributes[ATTR_TOOL] = target
            attributes[ATTR_OPERATION] = "execute_tool"
        elif target is not None and method == "prompts/get":
            attributes[ATTR_PROMPT] = target
        version = self._version()
        if version is not None:
            attributes[ATTR_PROTOCOL_VERSION] = version
        if server is not None:
            attributes[ATTR_SERVER] = server
        name = f"{method} {target}" if target is not None and method in _TARGETED else method
        span = self._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        return _CallSpan(self, span, method, scope)

    def _version(self) -> str | None:
        source = self._protocol_version
        if source is None or isinstance(source, str):
            return source
        try:
            return source()
        except Exception:
            return None

    def _sent(self, event: RequestSent, scope: object, server: str | None) -> None:
        call: _CallSpan | None = None
        previous = event.previous_request_id
        if previous is not None:
            call = self._open.get((scope, previous))
        elif event.attempt > 1:
            waiting = self._awaiting_retry.get((scope, event.method, event.attempt))
            if waiting:
                call = waiting.popleft()
                call.retry_key = None
        if call is None:
            pending = _PENDING.get()
            if pending is not None and pending.owner is self and not pending.claimed and pending.method == event.method:
                call = pending
                call.claimed = True
                call.scope = scope
                if server is not None:
                    call.span.set_attribute(ATTR_SERVER, server)
            else:
                target = event.target if event.target is not None else _TARGET.get()
                call = self._start(event.method, target, scope, server)
        call.request_ids.append(event.request_id)
        call.span.set_attribute(ATTR_REQUEST_ID, str(event.request_id))
        if len(call.request_ids) > 1:
            call.span.add_event("mcp_client.request_sent", {"request_id": event.request_id, "attempt": event.attempt})
        self._open[(scope, event.request_id)] = call

    def _retry(self, event: RetryScheduled, scope: object) -> None:
        call = self._open.get((scope, event.request_id))
        if call is None:
            return
        attributes: dict[str, AttributeValue] = {
            "request_id": event.request_id,
            "attempt": event.attempt,
            "delay": event.delay,
            ATTR_ERROR_TYPE: _error_type(event.cause),
        }
        call.span.add_event("mcp_client.retry", attributes)
        call.retry_key = (scope, call.method, event.attempt)
        self._awaiting_retry.setdefault(call.retry_key, deque()).append(call)

    def _progress(self, event: ProgressAccepted, scope: object) -> None:
        call = self._open.get((scope, event.request_id))
        if call is None:
            return
        call.progress += 1
        attributes: dict[str, AttributeValue] = {"progress": event.progress.progress, "delivered": event.delivered}
        if event.progress.total is not None:
            attributes["total"] = event.progress.total
        if event.progress.message is not None:
            attributes["message"] = _shown(event.progress.message)  # (a server's text: it may echo a secret back)
        if call.events < self._max_progress_events:
            call.events += 1
            call.span.add_event("mcp_client.progress", attributes)
        else:
            call.held_progress = (attributes, time.time_ns())

    def _cancel_sent(self, event: CancelSent, scope: object) -> None:
        key = (scope, event.request_id)
        attributes: dict[str, AttributeValue] = {"request_id": event.request_id, "how": event.how.value}
        if event.reason is not None:
            attributes["reason"] = event.reason
        call = self._open.get(key) or self._awaiting_cancel.pop(key, None)
        if call is not None:
            call.cancelled.add(event.request_id)
            call.span.set_attribute(ATTR_CANCEL_METHOD, event.how.value)
            call.span.add_event("mcp_client.cancel", attributes)
            if call.end_ns is not None:
                self._end(call)
            return
        self._after_end(key, "mcp_client.cancel", {ATTR_CANCEL_METHOD: event.how.value, **attributes})

    def _late(self, event: LateMessage, scope: object) -> None:
        key = (scope, event.request_id) if event.request_id is not None else None
        attributes: dict[str, AttributeValue] = {"kind": event.kind}
        if event.request_id is not None:
            attributes["request_id"] = event.request_id
        if event.late_by is not None:
            attributes["late_by"] = event.late_by
        call = (self._open.get(key) or self._awaiting_cancel.get(key)) if key is not None else None
        if call is not None:
            call.span.add_event("mcp_client.late_message", attributes)
        elif key is not None:
            self._after_end(key, "mcp_client.late_message", attributes)

    def _after_end(self, key: _Key, name: str, attributes: dict[str, AttributeValue]) -> None:
        """Something about a call whose span has ended: a zero-length child span of it, carrying one event."""
        parent = self._ended.get(key)
        if parent is None:
            return
        context = trace.set_span_in_context(trace.NonRecordingSpan(parent))
        span = self._tracer.start_span(name, context=context, kind=SpanKind.INTERNAL, attributes=attributes)
        span.add_event(name, attributes)
        span.end()

    def _finished(self, event: RequestFinished, scope: object) -> None:
        call = self._open.get((scope, event.request_id))
        if call is None:
            pending = _PENDING.get()  # a call that ended before it was sent
            if pending is None or pending.owner is not self or pending.claimed or pending.method != event.method:
                return
            call = pending
            call.claimed = True
            call.scope = scope
        for request_id in call.request_ids:
            self._open.pop((scope, request_id), None)
        if call.retry_key is not None:
            waiting = self._awaiting_retry.get(call.retry_key)
            if waiting is not None and call in waiting:
                waiting.remove(call)
                if not waiting:
                    del self._awaiting_retry[call.retry_key]
        span = call.span
        span.set_attribute(ATTR_ATTEMPTS, len(call.request_ids))
        span.set_attribute(ATTR_REQUEST_IDS, [str(request_id) for request_id in call.request_ids])
        span.set_attribute(ATTR_PROGRESS_COUNT, call.progress)
        if call.held_progress is not None:
            attributes, timestamp = call.held_progress
            span.add_event("mcp_client.progress", attributes, timestamp=timestamp)
        error = event.error
        if error is not None:
            _record_error(span, error, call.timed_out.get(event.request_id))
        call.end_ns = time.time_ns()
        call.finished_at = time.monotonic()
        ended_by_us = error is not None and (event.request_id in call.timed_out or isinstance(error, RequestCancelled))
        if event.cancelled:
            ended_by_us = True
        cancel_follows = (
            ended_by_us
            and event.method not in _NOT_CANCELLABLE
            and bool(call.request_ids)
            and event.request_id not in call.cancelled
        )
        if cancel_follows:
            self._awaiting_cancel[(scope, event.request_id)] = call
        else:
            self._end(call)

    def _end(self, call: _CallSpan) -> None:
        call.span.end(end_time=call.end_ns)
        context = call.span.get_span_context()
        for request_id in call.request_ids:
            self._ended[(call.scope, request_id)] = context
        while len(self._ended) > _ENDED_LIMIT:
            self._ended.popitem(last=False)

    def _sweep(self) -> None:
        now = time.monotonic()
        for key, call in list(self._awaiting_cancel.items()):
            if now - call.finished_at >= self._cancel_grace:
                del self._awaiting_cancel[key]
                self._end(call)


def _error_type(error: MCPClientError) -> str:
    if isinstance(error, ServerError):
        return str(error.code)
    if isinstance(error, ToolError):
        return "tool_error"
    return type(error).__qualname__


def _record_error(span: Span, error: MCPClientError, timeout_kind: str | None) -> None:
    span.set_attribute(ATTR_ERROR_TYPE, _error_type(error))
    if isinstance(error, ServerError):
        span.set_attribute(ATTR_STATUS_CODE, str(error.code))
    if isinstance(error, RequestTimeout):
        span.set_attribute(ATTR_TIMEOUT_KIND, timeout_kind or error.kind)
    # scrubbed (URLs redacted, configured secrets hidden): a span leaves the process for a collector
    message = _shown(error.message)
    stack = _shown("".join(traceback.format_exception(error)))
    span.record_exception(error, attributes={"exception.message": message, "exception.stacktrace": stack})
    span.set_status(Status(StatusCode.ERROR, message))


def _shown(text: str) -> str:
    """Text for a span: visible (an exporter encodes UTF-8, and one lone surrogate would fail its whole batch) and
    scrubbed of secrets (a server may echo one back)."""
    return scrub(visible(text))
