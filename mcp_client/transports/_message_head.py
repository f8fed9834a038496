"""What the head of a message that will not be parsed whole says for certain: the id of a response.

A message that is cut off, too large or otherwise not valid JSON can still end the one request it answers at once,
instead of leaving it to its idle timeout, but only when its head proves that it *is* the response to that request:
the top-level object has an ``"id"`` and a ``"result"`` or ``"error"`` member and no ``"method"``. An ``"id"``
nested in the params of a notification, a server's own request (whose ids are the server's, not ours) or a value
in a result's data proves nothing, and blaming a call for it would fail a healthy call. Pure: bytes in, an id or
None out.
"""

from __future__ import annotations

import json

from mcp_client._types import RequestId

__all__ = ["HEAD_SIZE", "response_id_from_head"]

HEAD_SIZE = 512
"""How much of a broken message is read for its id (and kept for the event that reports it)."""

_SPACE = b" \t\n\r"
_OPEN = frozenset(b"{[")
_CLOSE = frozenset(b"}]")
_MAX_ID_DIGITS = 18


class _Cut(Exception):
    """The head ended (or stopped being JSON) before the member being read was complete."""


def response_id_from_head(head: bytes) -> RequestId | None:
    """The id of the response that ``head`` begins, or None unless the head shows for certain that it is one."""
    try:
        members = _top_level_members(head[:HEAD_SIZE])
    except _Cut as cut:
        members = cut.args[0] if cut.args else {}
    if "method" in members or ("result" not in members and "error" not in members):
        return None
    value = members.get("id")
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _top_level_members(head: bytes) -> dict[str, object]:
    """The members of the top-level object seen in ``head``: the id's value, others as ``True``.

    Raises :class:`_Cut` carrying what was seen when the head ends early. A repeated ``"id"`` is uncertain (the
    last one wins in JSON parsers, and it may lie past the head), so it is recorded as None.
    """
    members: dict[str, object] = {}
    at = _skip_space(head, 0, members)
    if head[at] != ord("{"):
        return {}
    at = _skip_space(head, at + 1, members)
    if head[at] == ord("}"):
        return members
    while True:
        if head[at] != ord('"'):
            return {}
        end = _string_end(head, at, members)
        try:
            key = json.loads(head[at:end])
        except ValueError:
            return {}
        at = _skip_space(head, end, members)
        if head[at] != ord(":"):
            return {}
        at = _skip_space(head, at + 1, members)
        if key == "id":
            value, at = _id_value(head, at, members)
            members["id"] = None if "id" in members else value
        else:
            members[key] = True
            at = _skip_value(head, at, members)
        at = _skip_space(head, at, members)
        if head[at] == ord("}"):
            return members
        if head[at] != ord(","):
            return {}
        at = _skip_space(head, at + 1, members)


def _skip_space(head: bytes, at: int, seen: dict[str, object]) -> int:
    while at < len(head) and head[at] in _SPACE:
        at += 1
    if at >= len(head):
        raise _Cut(seen)
    return at


def _string_end(head: bytes, at: int, seen: dict[str, object]) -> int:
    """The index just past the string that starts at ``at`` (its opening quote)."""
    at += 1
    while at < len(head):
        byte = head[at]
        if byte == ord("\\"):
            at += 2
            continue
        if byte == ord('"'):
            return at + 1
        at += 1
    raise _Cut(seen)


def _id_value(head: bytes, at: int, seen: dict[str, object]) -> tuple[object, int]:
    """An id: a string, or an integer of at most 18 digits (anything else is not one of ours)."""
    if head[at] == ord('"'):
        end = _string_end(head, at, seen)
        try:
            value = json.loads(head[at:end])
        except ValueError:
            return None, end
        return value, end
    end = at
    while end < len(head) and head[end] not in _SPACE and head[end] not in b",}":
        end += 1
    if end >= len(head):
        raise _Cut(seen)
    token = head[at:end]
    if token.isdigit() and len(token) <= _MAX_ID_DIGITS:
        return int(token), end
    return None, end


def _skip_value(head: bytes, at: int, seen: dict[str, object]) -> int:
    """The index just past the value that starts at ``at``: a string, an object or array, or a scalar."""
    if head[at] == ord('"'):
        return _string_end(head, at, seen)
    if head[at] in _OPEN:
        depth = 0
        while at < len(head):
            byte = head[at]
            if byte == ord('"'):
                at = _string_end(head, at, seen)
                continue
            if byte in _OPEN:
                depth += 1
            elif byte in _CLOSE:
                depth -= 1
                if depth == 0:
                    return at + 1
            at += 1
        raise _Cut(seen)
    while at < len(head) and head[at] not in _SPACE and head[at] not in b",}]":
        at += 1
    if at >= len(head):
        raise _Cut(seen)
    return at
