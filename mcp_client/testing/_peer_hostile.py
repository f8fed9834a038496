"""Hostile tools of the scripted peer: each puts one kind of bad input on the wire, then answers correctly.

A client must turn every bad line into a report and lose nothing else, so each tool writes its bad bytes and the
true answer of the call **in one write** (one chunk on a pipe, one ``read()`` for the client), after an optional
good notification: a reader that drops the rest of a chunk after a bad line loses the answer and the test sees it.
Over HTTP the peer's router sends each line as an event of its own.

The bad lines are never responses to the calling request (they name no id, or an id never issued), except
``result_and_error``, whose only answer is itself broken: the client must fail that call, typed.
"""

from __future__ import annotations

import json

import anyio

from mcp_client.testing._peer_tools import JsonObject, ToolCall, ToolSpec, text_result

__all__ = ["HOSTILE_KINDS", "HOSTILE_TOOLS", "flood_client", "hostile_line"]

HOSTILE_KINDS: tuple[str, ...] = (
    "deep_nesting",
    "deep_nesting_response",
    "truncated",
    "not_utf8",
    "not_an_object",
    "huge_line",
    "many_values",
    "wrong_id",
    "string_id_never_issued",
    "null_id_error",
    "nan_progress",
    "infinite_progress",
    "string_progress",
    "unknown_token_progress",
    "bad_method",
    "empty_object",
    "batch_array",
)
"""Every kind :func:`hostile_line` knows: the argument ``kind`` of the ``hostile`` tool."""


_PROGRESS_HEAD = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":'


def _notification(params: object) -> JsonObject:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": params}}


def _dumps(message: object) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def hostile_line(kind: str, *, depth: int = 5000, size: int = 2_000_000, token: object = "p1") -> bytes:
    """One line (without its newline) of the given ``kind`` of bad input; ``ValueError`` for an unknown kind.

    The progress kinds report for ``token`` (the calling request's, when it has one)."""
    quoted = json.dumps(token).encode()
    if kind == "deep_nesting":
        return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":' + _nested(depth) + b"}}"
    if kind == "deep_nesting_response":
        return b'{"jsonrpc":"2.0","id":987654,"result":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    if kind == "truncated":
        return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","da'
    if kind == "not_utf8":
        return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\xff\xfe"}}'
    if kind == "not_an_object":
        return b'["jsonrpc","2.0"]'
    if kind == "huge_line":
        return _dumps(_notification("x" * size))
    if kind == "many_values":  # small enough for the size limit, but a quarter of a million values to decode
        count = size * 3 // 8 // 3
        return (
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":['
            + b"{}," * count
            + b"{}]}}"
        )
    if kind == "wrong_id":
        return _dumps({"jsonrpc": "2.0", "id": 987654, "result": {"content": []}})
    if kind == "string_id_never_issued":
        return _dumps({"jsonrpc": "2.0", "id": "no-such-request", "result": {}})
    if kind == "null_id_error":
        return _dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
    if kind == "nan_progress":
        return _PROGRESS_HEAD + quoted + b',"progress":NaN}}'
    if kind == "infinite_progress":
        return _PROGRESS_HEAD + quoted + b',"progress":1e999}}'
    if kind == "string_progress":
        params = {"progressToken": token, "progress": "5"}
        return _dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
    if kind == "unknown_token_progress":
        params = {"progressToken": "no-such-token", "progress": 1}
        return _dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
    if kind == "bad_method":
        return _dumps({"jsonrpc": "2.0", "method": 42, "params": []})
    if kind == "empty_object":
        return b"{}"
    if kind == "batch_array":
        return _dumps([{"jsonrpc": "2.0", "id": 987654, "result": {}}])
    raise ValueError(f"unknown kind of hostile input: {kind!r}")


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


async def hostile(call: ToolCall) -> None:
    kind = call.text("kind", "deep_nesting")
    depth = call.integer("depth", 5000, minimum=1)
    size = call.integer("size", 2_000_000, minimum=0)
    token = call.progress_token if call.progress_token is not None else "p1"
    line = hostile_line(kind, depth=depth, size=size, token=token)
    result = text_result(f"survived {kind}")
    if call.link.era == "modern":
        result["resultType"] = "complete"
    answer = _dumps({"jsonrpc": "2.0", "id": call.request_id, "result": result})
    await call.link.send_raw(line + b"\n" + answer + b"\n")
    call.responded = True


async def result_and_error(call: ToolCall) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": call.request_id,
        "result": text_result("both"),
        "error": {"code": -32603, "message": "both"},
    }
    await call.link.send_raw(_dumps(message) + b"\n")
    call.responded = True


async def flood_client(call: ToolCall) -> None:
    """``count`` requests of ``method`` to the client and ``notifications`` log notifications in one write, then
    this call's answer (``answer=false``: none, the call stays silent): a flood of the server's requests
    (2025-11-25) and notifications, which the client must take with a bounded number of tasks and bounded memory."""
    method = call.text("method", "ping")
    count = call.integer("count", 1000, minimum=0)
    notifications = call.integer("notifications", 0, minimum=0)
    answers = call.arguments.get("answer", True) is not False
    params = {"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object", "properties": {}}}
    lines = [
        _dumps({"jsonrpc": "2.0", "id": f"flood-{n}", "method": method, "params": params if method != "ping" else {}})
        for n in range(count)
    ]
    log = {"level": "info", "logger": "flood", "data": "flood"}
    lines += [_dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": log})] * notifications
    if not answers:
        await call.link.send_raw(b"\n".join(lines) + b"\n")
        await anyio.sleep_forever()
    result = text_result(f"flooded {count}")
    answer = _dumps({"jsonrpc": "2.0", "id": call.request_id, "result": result})
    await call.link.send_raw(b"\n".join([*lines, answer]) + b"\n")
    call.responded = True


def _hints(title: str) -> JsonObject:
    return {"title": title, "readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}


HOSTILE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "hostile",
        "Write one line of bad input of `kind` and this call's answer 'survived <kind>' in a single write.",
        {
            "kind": {"type": "string", "enum": list(HOSTILE_KINDS), "default": "deep_nesting"},
            "depth": {"type": "integer", "description": "Nesting depth (deep kinds).", "default": 5000},
            "size": {"type": "integer", "description": "Bytes of a huge line.", "default": 2_000_000},
        },
        _hints("Hostile input"),
        hostile,
    ),
    ToolSpec(
        "flood_client",
        "2025-11-25: send the client `count` requests of `method` in one write, then this call's answer.",
        {
            "method": {"type": "string", "default": "ping"},
            "count": {"type": "integer", "description": "How many requests.", "default": 1000},
            "notifications": {"type": "integer", "description": "How many log notifications.", "default": 0},
            "answer": {
                "type": "boolean",
                "description": "Answer after the flood (false: stay silent).",
                "default": True,
            },
        },
        _hints("Flood the client"),
        flood_client,
    ),
    ToolSpec(
        "result_and_error",
        "Answer with a response carrying both `result` and `error` (JSON-RPC forbids it).",
        {},
        _hints("Result and error"),
        result_and_error,
    ),
)
