"""The tools of the scripted MCP peer (see :mod:`mcp_client.testing.peer`).

Each tool is a short coroutine that scripts one server behaviour, well-behaved
(``echo``, ``slow``) or deliberately broken (``answer_twice``, ``garbage``,
``half_line``). A tool talks to the connection that called it only through a
:class:`ToolCall`, and the call talks to the wire only through the
:class:`PeerLink` protocol, so this module knows nothing about framing or
protocol eras.

Time is only ever spent in ``anyio.sleep``, so every tool runs unchanged under
trio's ``MockClock``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

import anyio
import anyio.lowlevel

JsonObject: TypeAlias = dict[str, Any]
RequestId: TypeAlias = str | int
ProgressToken: TypeAlias = str | int
Era: TypeAlias = Literal["modern", "legacy"]

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

WRONG_RESPONSE_ID = 999999
"""The id ``wrong_id`` answers first: a request id the client never issued."""

UNKNOWN_PROGRESS_TOKEN = "no-such-token"
"""The token ``progress_unknown_token`` reports progress for."""


class ToolArgumentError(Exception):
    """A ``tools/call`` argument has the wrong type or range; answered with -32602."""


class PeerLink(Protocol):
    """What a running tool may do to the connection that called it."""

    @property
    def era(self) -> Era:
        """The protocol era of the connection (decided before any tool runs)."""
        ...

    async def send_message(self, message: JsonObject) -> None:
        """Write one JSON-RPC message as a line."""
        ...

    async def send_raw(self, data: bytes) -> None:
        """Write bytes exactly as given (for the tools that break framing on purpose)."""
        ...

    async def send_response(self, request_id: RequestId, result: JsonObject) -> None:
        """Write a success response, shaped for the connection's era."""
        ...

    async def send_error(self, request_id: RequestId, code: int, message: str) -> None:
        """Write an error response."""
        ...

    async def request_client(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """Send a request to the client and return its whole response message."""
        ...

    def write_stderr(self, text: str) -> None:
        """Write a line of diagnostics where a subprocess server would: its stderr."""
        ...

    def die(self) -> None:
        """Stop the peer abruptly: the client sees EOF (a subprocess exits with code 3)."""
        ...

    def next_counter_value(self, increment: int) -> int:
        """Add ``increment`` to the peer-wide counter and return the new value."""
        ...

    def stats_snapshot(self) -> JsonObject:
        """A JSON-serialisable summary of what the peer has seen so far."""
        ...


def text_result(text: str, *, is_error: bool = False) -> JsonObject:
    """A ``tools/call`` result with one text content block."""
    result: JsonObject = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


class ToolCall:
    """One running ``tools/call``, as its tool sees it."""

    def __init__(
        self,
        link: PeerLink,
        request_id: RequestId,
        arguments: JsonObject,
        progress_token: ProgressToken | None,
    ) -> None:
        self.link = link
        self.request_id = request_id
        self.arguments = arguments
        self.progress_token = progress_token
        self.responded = False
        """Set once a response (result or error) for this call has been written."""
        self.cancel_requested = False
        """Set when the client sent ``notifications/cancelled`` for this call."""

    # -- arguments -------------------------------------------------------------------------------------

    def number(self, name: str, default: float, *, minimum: float | None = None, positive: bool = False) -> float:
        """A numeric argument, or ``default`` when it is absent."""
        value = self.optional_number(name, minimum=minimum, positive=positive)
        return default if value is None else value

    def optional_number(self, name: str, *, minimum: float | None = None, positive: bool = False) -> float | None:
        """A numeric argument, or ``None`` when it is absent or null."""
        value = self.arguments.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ToolArgumentError(f"argument {name!r} must be a finite number, got {value!r}")
        if positive and value <= 0:
            raise ToolArgumentError(f"argument {name!r} must be greater than 0, got {value!r}")
        if minimum is not None and value < minimum:
            raise ToolArgumentError(f"argument {name!r} must be at least {minimum}, got {value!r}")
        return float(value)

    def integer(self, name: str, default: int, *, minimum: int | None = None) -> int:
        """An integer argument, or ``default`` when it is absent."""
        value = self.arguments.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolArgumentError(f"argument {name!r} must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise ToolArgumentError(f"argument {name!r} must be at least {minimum}, got {value!r}")
        return value

    def text(self, name: str, default: str) -> str:
        """A string argument, or ``default`` when it is absent."""
        value = self.arguments.get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ToolArgumentError(f"argument {name!r} must be a string, got {value!r}")
        return value

    # -- output ----------------------------------------------------------------------------------------

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send progress for this call; does nothing when the request carried no progress token."""
        if self.progress_token is not None:
            await self.send_progress(self.progress_token, progress, total, message)

    async def send_progress(
        self, token: ProgressToken, progress: float, total: float | None, message: str | None
    ) -> None:
        """Send a progress notification for ``token``, whichever request that token belongs to."""
        params: JsonObject = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.link.send_message({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def respond(self, result: JsonObject) -> None:
        """Send the result of this call."""
        await self.link.send_response(self.request_id, result)
        self.responded = True

    async def respond_text(self, text: str, *, is_error: bool = False) -> None:
        """Send a result with one text content block."""
        await self.respond(text_result(text, is_error=is_error))

    async def respond_error(self, code: int, message: str) -> None:
        """Answer this call with a JSON-RPC error."""
        await self.link.send_error(self.request_id, code, message)
        self.responded = True


ToolFunction: TypeAlias = Callable[[ToolCall], Awaitable[None]]


@dataclass(frozen=True)
class ToolSpec:
    """A tool: what ``tools/list`` says about it and the coroutine that runs it."""

    name: str
    description: str
    properties: JsonObject
    annotations: JsonObject
    run: ToolFunction
    ignores_cancellation: bool = False

    def describe(self) -> JsonObject:
        """The tool's entry in a ``tools/list`` result."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": {"type": "object", "properties": self.properties},
            "annotations": self.annotations,
        }


# -- the tools -----------------------------------------------------------------------------------------


async def echo(call: ToolCall) -> None:
    await call.respond_text(call.text("text", ""))


async def slow(call: ToolCall) -> None:
    seconds = call.number("seconds", 1.0, minimum=0)
    progress_every = call.optional_number("progress_every", positive=True)
    total = call.optional_number("total", minimum=0)
    remaining = seconds
    if progress_every is not None:
        steps = math.floor(seconds / progress_every + 1e-9)
        for step in range(1, steps + 1):
            await anyio.sleep(progress_every)
            await call.report_progress(step, total, f"step {step}")
        remaining = seconds - steps * progress_every
    await anyio.sleep(max(remaining, 0.0))
    await call.respond_text("done")


async def chatty(call: ToolCall) -> None:
    interval = call.number("interval", 0.1, positive=True)
    tick = 0
    while True:
        await anyio.sleep(interval)
        tick += 1
        await call.report_progress(tick, None, f"tick {tick}")


async def never_answer(call: ToolCall) -> None:
    await anyio.sleep_forever()


async def progress_backwards(call: ToolCall) -> None:
    for value in (5, 3, 5, 7):
        await call.report_progress(value, 10, f"at {value}")
        await anyio.lowlevel.checkpoint()
    await call.respond_text("done")


async def progress_unknown_token(call: ToolCall) -> None:
    await call.send_progress(UNKNOWN_PROGRESS_TOKEN, 1, None, "progress for a token nobody issued")
    await anyio.lowlevel.checkpoint()
    await call.respond_text("done")


async def progress_after_result(call: ToolCall) -> None:
    await call.respond_text("done")
    await anyio.lowlevel.checkpoint()
    await call.report_progress(1, 1, "progress after the result")


async def answer_twice(call: ToolCall) -> None:
    result = text_result("twice")
    await call.respond(result)
    await call.respond(result)


async def ignore_cancel(call: ToolCall) -> None:
    await anyio.sleep(call.number("seconds", 1.0, minimum=0))
    await call.respond_text("finished despite cancellation")


async def die(call: ToolCall) -> None:
    await anyio.sleep(call.number("after", 0.0, minimum=0))
    call.link.die()
    await anyio.sleep_forever()


async def garbage(call: ToolCall) -> None:
    await call.link.send_raw(b"this is not json\n")
    await call.link.send_raw(b"[1,2,3]\n")
    await call.respond_text("survived")


async def half_line(call: ToolCall) -> None:
    await call.link.send_raw(b'{"jsonrpc":"2.0","id":')
    call.link.die()
    await anyio.sleep_forever()


async def huge(call: ToolCall) -> None:
    await call.respond_text("x" * call.integer("size", 1_000_000, minimum=0))


async def stderr(call: ToolCall) -> None:
    call.link.write_stderr(call.text("text", "hello from stderr"))
    await call.respond_text("ok")


async def fail(call: ToolCall) -> None:
    await call.respond_error(call.integer("code", INTERNAL_ERROR), call.text("message", "boom"))


async def tool_error(call: ToolCall) -> None:
    await call.respond_text("tool failed", is_error=True)


async def bad_result_type(call: ToolCall) -> None:
    await call.respond({"resultType": "weird", "content": [{"type": "text", "text": "weird"}]})


async def wrong_id(call: ToolCall) -> None:
    await call.link.send_response(WRONG_RESPONSE_ID, text_result("an answer to a request nobody sent"))
    await call.respond_text("right id")


async def ping_client(call: ToolCall) -> None:
    if call.link.era != "legacy":
        await call.respond_text(
            "ping_client needs a 2025-11-25 (initialize) connection: "
            "the 2026-07-28 protocol has no server-to-client requests",
            is_error=True,
        )
        return
    response = await call.link.request_client("ping")
    if "error" in response:
        await call.respond_text(f"ping failed: {json.dumps(response['error'])}", is_error=True)
    else:
        await call.respond_text("pong received")


async def stats(call: ToolCall) -> None:
    await call.respond_text(json.dumps(call.link.stats_snapshot()))


async def increment(call: ToolCall) -> None:
    await call.respond_text(str(call.link.next_counter_value(call.integer("by", 1))))


async def reindex(call: ToolCall) -> None:
    collection = call.text("collection", "docs")
    seconds = call.number("seconds", 4.0, minimum=0)
    progress_every = call.number("progress_every", 0.5, positive=True)
    batches = max(1, round(seconds / progress_every))
    for batch in range(1, batches + 1):
        await anyio.sleep(seconds / batches)
        await call.report_progress(batch, batches, f"indexed {batch}/{batches}")
    await call.respond_text(f"reindexed {collection!r} in {batches} batches")


# -- the catalogue -------------------------------------------------------------------------------------


def _number(description: str, default: float | None) -> JsonObject:
    kind: str | list[str] = "number" if default is not None else ["number", "null"]
    return {"type": kind, "description": description, "default": default}


def _integer(description: str, default: int) -> JsonObject:
    return {"type": "integer", "description": description, "default": default}


def _string(description: str, default: str) -> JsonObject:
    return {"type": "string", "description": description, "default": default}


def _hints(title: str, *, read_only: bool = True, idempotent: bool = True, destructive: bool = False) -> JsonObject:
    return {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("echo", "Return `text` unchanged.", {"text": _string("Text to echo.", "")}, _hints("Echo"), echo),
    ToolSpec(
        "slow",
        "Sleep `seconds`, reporting progress 1, 2, 3... every `progress_every` seconds, then answer 'done'.",
        {
            "seconds": _number("Total time to take.", 1.0),
            "progress_every": _number("Seconds between progress notifications; null for none.", None),
            "total": _number("The `total` to put in progress notifications.", None),
        },
        _hints("Slow"),
        slow,
    ),
    ToolSpec(
        "chatty",
        "Report progress every `interval` seconds forever; never answers, ends only when cancelled.",
        {"interval": _number("Seconds between progress notifications.", 0.1)},
        _hints("Chatty"),
        chatty,
    ),
    ToolSpec("silent", "Never answer and never report progress.", {}, _hints("Silent"), never_answer),
    ToolSpec(
        "progress_backwards",
        "Report progress 5, 3, 5, 7 (out of 10), then answer 'done'.",
        {},
        _hints("Progress backwards"),
        progress_backwards,
    ),
    ToolSpec(
        "progress_unknown_token",
        f"Report progress for the token {UNKNOWN_PROGRESS_TOKEN!r}, then answer 'done'.",
        {},
        _hints("Progress for an unknown token"),
        progress_unknown_token,
    ),
    ToolSpec(
        "progress_after_result",
        "Answer 'done', then report progress for the finished request.",
        {},
        _hints("Progress after the result"),
        progress_after_result,
    ),
    ToolSpec("answer_twice", "Send the same result twice.", {}, _hints("Answer twice"), answer_twice),
    ToolSpec(
        "ignore_cancel",
        "Ignore notifications/cancelled and answer after `seconds` anyway.",
        {"seconds": _number("Time to take before answering.", 1.0)},
        _hints("Ignore cancellation"),
        ignore_cancel,
        ignores_cancellation=True,
    ),
    ToolSpec(
        "die",
        "After `after` seconds, stop the server: the client sees EOF; a subprocess exits with code 3.",
        {"after": _number("Seconds to wait before dying.", 0.0)},
        _hints("Die", read_only=False, idempotent=False, destructive=True),
        die,
    ),
    ToolSpec(
        "garbage",
        "Write a line that is not JSON and a line that is not an object, then answer 'survived'.",
        {},
        _hints("Garbage"),
        garbage,
    ),
    ToolSpec(
        "half_line",
        "Write the start of a message without its end or newline, then die.",
        {},
        _hints("Half a line", read_only=False, idempotent=False, destructive=True),
        half_line,
    ),
    ToolSpec(
        "huge",
        "Answer with a text of `size` 'x' characters.",
        {"size": _integer("Length of the text.", 1_000_000)},
        _hints("Huge"),
        huge,
    ),
    ToolSpec(
        "stderr",
        "Write `text` to the server's stderr, then answer 'ok'.",
        {"text": _string("Text to write.", "hello from stderr")},
        _hints("Write to stderr"),
        stderr,
    ),
    ToolSpec(
        "fail",
        "Answer with a JSON-RPC error.",
        {"code": _integer("Error code.", INTERNAL_ERROR), "message": _string("Error message.", "boom")},
        _hints("Fail"),
        fail,
    ),
    ToolSpec(
        "tool_error",
        "Answer with a result flagged isError.",
        {},
        _hints("Tool error"),
        tool_error,
    ),
    ToolSpec(
        "bad_result_type",
        "Answer with resultType 'weird'.",
        {},
        _hints("Bad result type"),
        bad_result_type,
    ),
    ToolSpec(
        "wrong_id",
        f"Send a response for id {WRONG_RESPONSE_ID} (never issued), then the real result.",
        {},
        _hints("Wrong id"),
        wrong_id,
    ),
    ToolSpec(
        "ping_client",
        "Send a ping request to the client and answer once it responds (2025-11-25 connections only).",
        {},
        _hints("Ping the client"),
        ping_client,
    ),
    ToolSpec(
        "stats",
        "Answer with a JSON summary of what the server has seen (outcomes, cancelled request ids).",
        {},
        _hints("Server statistics", idempotent=False),
        stats,
    ),
    ToolSpec(
        "increment",
        "Add `by` to a server-wide counter and answer with its new value (not idempotent).",
        {"by": _integer("Amount to add.", 1)},
        _hints("Increment", read_only=False, idempotent=False),
        increment,
    ),
    ToolSpec(
        "reindex",
        "Pretend to reindex `collection` for `seconds`, reporting progress every `progress_every` seconds.",
        {
            "collection": _string("Collection to reindex.", "docs"),
            "seconds": _number("Total time to take.", 4.0),
            "progress_every": _number("Seconds between progress notifications.", 0.5),
        },
        _hints("Reindex", read_only=False),
        reindex,
    ),
    ToolSpec("stuck", "Hang without answering or reporting progress.", {}, _hints("Stuck"), never_answer),
)

TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}
