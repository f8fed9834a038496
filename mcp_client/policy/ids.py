"""Request id allocation: a monotonic integer counter, so an id is never reused for the life of a client.

Both protocol eras are satisfied by this: 2025-11-25 forbids reuse within a session, 2026-07-28 only among requests
still awaiting a response. Reconnects, timeouts and retries never rewind the counter, so a late answer to an old
request can never be confused with a new one.
"""

from __future__ import annotations

__all__ = ["RequestIds", "wire_id"]


def wire_id(raw: object) -> int | None:
    """A request id as read from the wire, as the integer this client would have issued, else ``None``.

    Some peers echo ids as strings (``"7"``); JSON-RPC correlation treats them as the same id. Booleans (a JSON
    ``true`` is no id), other strings and other types are never one of ours. The one parser of ids from the wire.
    """
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) <= 18:
        return int(raw)
    return None


class RequestIds:
    """Hands out request ids 1, 2, 3, ... and knows which ids it has issued."""

    __slots__ = ("_next",)

    def __init__(self) -> None:
        self._next = 1

    def allocate(self) -> int:
        """A request id never handed out before by this allocator."""
        request_id = self._next
        self._next += 1
        return request_id

    def was_issued(self, request_id: object) -> bool:
        """True if ``request_id`` (as read from the wire) is one this allocator handed out."""
        issued = wire_id(request_id)
        return issued is not None and 1 <= issued < self._next
