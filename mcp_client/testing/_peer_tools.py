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
        self.params: JsonObject = {}
        """The request's whole ``params`` (``inputResponses``, ``requestState``...), when the connection sets it."""
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
            await call.report_progress(step, total, f"{call.text('message', 'step')} {step}")
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


async def broken_naming(call: ToolCall) -> None:
    named = str(call.integer("id", 1, minimum=0)).encode()
    # Broken lines that carry the id only nested or as the server's own request id: none is a response.
    await call.link.send_raw(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"id":' + named)
    await call.link.send_raw(b",oops\n")
    await call.link.send_raw(b'{"jsonrpc":"2.0","id":' + named + b',"method":"ping","params":{oops\n')
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


def _calls_so_far(call: ToolCall, name: str) -> int:
    """How many times the tool ``name`` has been called on this peer, this call included."""
    calls = call.link.stats_snapshot().get("calls_by_tool", {})
    return int(calls.get(name, 0))


async def flaky_silent(call: ToolCall) -> None:
    if _calls_so_far(call, "flaky_silent") <= call.integer("fail_first", 1, minimum=0):
        await anyio.sleep_forever()
    await call.respond_text(f"answered on call {_calls_so_far(call, 'flaky_silent')}")


async def flaky_increment(call: ToolCall) -> None:
    value = call.link.next_counter_value(1)
    if _calls_so_far(call, "flaky_increment") <= call.integer("fail_first", 1, minimum=0):
        await anyio.sleep_forever()
    await call.respond_text(str(value))


async def flaky_progress(call: ToolCall) -> None:
    interval = call.number("interval", 1.0, positive=True)
    failing = _calls_so_far(call, "flaky_progress") <= call.integer("fail_first", 1, minimum=0)
    steps = call.integer("first" if failing else "then", 3 if failing else 5, minimum=0)
    for step in range(1, steps + 1):
        await anyio.sleep(interval)
        await call.report_progress(step, None, f"step {step}")
    if failing:
        await anyio.sleep_forever()
    await call.respond_text("done")


ASK_NAME_REQUEST: JsonObject = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "default": "anon"}}},
    },
}
"""The input request ``ask`` (and ``ask_many``, under the key ``name``) sends."""

ASK_SAMPLING_REQUEST: JsonObject = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        "systemPrompt": "You are a helpful assistant.",
        "maxTokens": 100,
    },
}
"""The input request ``ask_many`` sends under the key ``capital``."""

ASK_ROOTS_REQUEST: JsonObject = {"method": "roots/list", "params": {}}
"""The input request ``ask_many`` sends under the key ``roots``."""

_STATE_PREFIX = "opaque-"


def _answered_name(response: object) -> str:
    if not isinstance(response, dict):
        return "<no answer>"
    if response.get("action") != "accept":
        return f"<{response.get('action')}>"
    content = response.get("content")
    name = content.get("name") if isinstance(content, dict) else None
    return name if isinstance(name, str) else "<no name>"


async def ask(call: ToolCall) -> None:
    if call.link.era != "modern":
        await call.respond_text("ask needs a 2026-07-28 connection (input_required)", is_error=True)
        return
    rounds = call.integer("rounds", 1, minimum=1)
    with_state = call.arguments.get("state", True)
    if not isinstance(with_state, bool):
        raise ToolArgumentError(f"argument 'state' must be a boolean, got {with_state!r}")
    responses = call.params.get("inputResponses")
    answered = isinstance(responses, dict) and "name" in responses
    state = call.params.get("requestState")
    if not with_state:
        if "requestState" in call.params:
            await call.respond_error(INVALID_PARAMS, f"requestState sent but none was given: {state!r}")
        elif answered:
            assert isinstance(responses, dict)
            await call.respond_text(_answered_name(responses["name"]))
        else:
            await call.respond({"resultType": "input_required", "inputRequests": {"name": ASK_NAME_REQUEST}})
        return
    done = 0
    if "requestState" in call.params:
        digits = state[len(_STATE_PREFIX) :] if isinstance(state, str) and state.startswith(_STATE_PREFIX) else ""
        if not digits.isdigit() or not answered:
            await call.respond_error(INVALID_PARAMS, f"bad requestState {state!r} or no inputResponses")
            return
        done = int(digits)
    if done >= rounds:
        assert isinstance(responses, dict)
        await call.respond_text(_answered_name(responses["name"]))
        return
    await call.respond(
        {
            "resultType": "input_required",
            "inputRequests": {"name": ASK_NAME_REQUEST},
            "requestState": f"{_STATE_PREFIX}{done + 1}",
        }
    )


async def ask_many(call: ToolCall) -> None:
    if call.link.era != "modern":
        await call.respond_text("ask_many needs a 2026-07-28 connection (input_required)", is_error=True)
        return
    wanted = {
        "name": ASK_NAME_REQUEST,
        "capital": ASK_SAMPLING_REQUEST,
        "roots": ASK_ROOTS_REQUEST,
    }
    keys = [key.strip() for key in call.text("keys", "name,capital,roots").split(",") if key.strip()]
    if any(key not in wanted for key in keys):
        raise ToolArgumentError(f"argument 'keys' may name only {sorted(wanted)}, got {keys!r}")
    responses = call.params.get("inputResponses")
    if isinstance(responses, dict) and all(key in responses for key in keys):
        await call.respond_text(json.dumps(responses, sort_keys=True))
        return
    await call.respond({"resultType": "input_required", "inputRequests": {key: wanted[key] for key in keys}})


async def elicit_client(call: ToolCall) -> None:
    if call.link.era != "legacy":
        await call.respond_text(
            "elicit_client needs a 2025-11-25 (initialize) connection: "
            "the 2026-07-28 protocol has no server-to-client requests",
            is_error=True,
        )
        return
    kinds = {"elicitation": ASK_NAME_REQUEST, "sampling": ASK_SAMPLING_REQUEST, "roots": ASK_ROOTS_REQUEST}
    kind = call.text("kind", "elicitation")
    if kind not in kinds:
        raise ToolArgumentError(f"argument 'kind' must be one of {sorted(kinds)}, got {kind!r}")
    response = await call.link.request_client(kinds[kind]["method"], kinds[kind]["params"])
    if "error" in response:
        await call.respond_text(f"{kind} failed: {json.dumps(response['error'], sort_keys=True)}", is_error=True)
    else:
        await call.respond_text(json.dumps(response.get("result"), sort_keys=True))


CANCELLED_ELICITATION_ID = "elicit-then-cancel"
"""The id of the ``elicitation/create`` request ``elicit_then_cancel`` sends, then cancels."""


async def elicit_then_cancel(call: ToolCall) -> None:
    if call.link.era != "legacy":
        await call.respond_text("elicit_then_cancel needs a 2025-11-25 (initialize) connection", is_error=True)
        return
    after = call.number("after", 1.0, minimum=0)
    await call.link.send_message(
        {"jsonrpc": "2.0", "id": CANCELLED_ELICITATION_ID, **ASK_NAME_REQUEST},
    )
    await anyio.sleep(after)
    await call.link.send_message(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": CANCELLED_ELICITATION_ID, "reason": "the server no longer needs it"},
        }
    )
    await anyio.sleep(call.number("then", 1.0, minimum=0))
    await call.respond_text("gave up asking")


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
            "message": _string("The text of each progress message, before its step number.", "step"),
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
        "broken_naming",
        "Write broken lines that name request `id` only inside their data or as a server request's id, then "
        "answer 'survived'.",
        {"id": _integer("The request id to name.", 1)},
        _hints("Broken lines naming an id"),
        broken_naming,
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
    ToolSpec(
        "flaky_silent",
        "Stay silent on the first `fail_first` calls to this peer (never answer); answer on the later ones.",
        {"fail_first": _integer("How many calls stay silent.", 1)},
        _hints("Flaky silent"),
        flaky_silent,
    ),
    ToolSpec(
        "flaky_increment",
        "Add 1 to the server-wide counter; stay silent on the first `fail_first` calls, else answer its value.",
        {"fail_first": _integer("How many calls stay silent.", 1)},
        _hints("Flaky increment", read_only=False, idempotent=False),
        flaky_increment,
    ),
    ToolSpec(
        "flaky_progress",
        "On the first `fail_first` calls report progress 1..`first` then go silent; later calls report "
        "1..`then` and answer 'done'. One step every `interval` seconds.",
        {
            "fail_first": _integer("How many calls fail.", 1),
            "first": _integer("Progress steps of a failing call.", 3),
            "then": _integer("Progress steps of a succeeding call.", 5),
            "interval": _number("Seconds between steps.", 1.0),
        },
        _hints("Flaky progress"),
        flaky_progress,
    ),
    ToolSpec(
        "ask",
        "2026-07-28 only: answer input_required asking (elicitation) for a name, `rounds` times, with "
        "requestState 'opaque-<n>' (none when `state` is false); then answer with the name received.",
        {
            "rounds": _integer("How many input rounds.", 1),
            "state": {"type": "boolean", "description": "Send requestState.", "default": True},
        },
        _hints("Ask for a name"),
        ask,
    ),
    ToolSpec(
        "ask_many",
        "2026-07-28 only: one input_required round asking for a name (elicitation), the capital of France "
        "(sampling) and the roots; then answer with the inputResponses as JSON.",
        {"keys": _string("Comma-separated subset of name,capital,roots to ask.", "name,capital,roots")},
        _hints("Ask many things"),
        ask_many,
    ),
    ToolSpec(
        "elicit_client",
        "2025-11-25 only: send an elicitation/create (or sampling/createMessage, roots/list: `kind`) request to "
        "the client mid-call and answer with its result as JSON.",
        {"kind": _string("elicitation, sampling or roots.", "elicitation")},
        _hints("Ask the client"),
        elicit_client,
    ),
    ToolSpec(
        "elicit_then_cancel",
        f"2025-11-25 only: send the client an elicitation/create (id {CANCELLED_ELICITATION_ID!r}), cancel it "
        "with notifications/cancelled `after` seconds later, wait `then` seconds and answer 'gave up asking'.",
        {
            "after": _number("Seconds before the cancellation.", 1.0),
            "then": _number("Seconds between the cancellation and the answer.", 1.0),
        },
        _hints("Elicit, then cancel"),
        elicit_then_cancel,
    ),
    ToolSpec("stuck", "Hang without answering or reporting progress.", {}, _hints("Stuck"), never_answer),
)

TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}
