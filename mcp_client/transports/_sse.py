"""A sans-IO decoder of Server-Sent Events (the WHATWG ``text/event-stream`` format) working on raw bytes.

Feed it the body's chunks as they arrive; each :meth:`SSEDecoder.feed` returns the events completed by that chunk,
so the caller can hand them on as one batch. Event data stays bytes (JSON parses them as they are) and is never
decoded to text line by line. What the format says is kept: lines end in LF, CRLF or CR (also across chunks), a
leading BOM is dropped, ``:`` starts a comment, one space after the colon is dropped, an event is dispatched at a
blank line, an ``id`` holding NUL is ignored, ``retry`` must be all digits, and an unterminated event at the end of
the stream is discarded. One difference on purpose: an event whose data grows past ``max_data`` is not held in
memory; only its first bytes are kept and the event comes out marked ``oversized``.

Every byte is copied a bounded number of times: a chunk without a line end is kept as it is (joined once, when
its line ends), and once a line is cut for its length, what follows of it is dropped as it arrives, unbuffered,
until its line end.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SSEDecoder", "SSEEvent"]

_BOM = b"\xef\xbb\xbf"
_KEPT_OF_OVERSIZED = 512
"""Bytes of an oversized event's data kept for the error report."""


class SSEEvent(NamedTuple):
    """One dispatched event: its type (``"message"`` unless the server named one) and its data lines joined by LF."""

    data: bytes
    type: str = "message"
    oversized: bool = False
    """The data passed ``max_data``; :attr:`data` holds only its first bytes."""


class SSEDecoder:
    """Incremental SSE parser: ``feed(chunk) -> events``; :attr:`last_event_id` and :attr:`retry` as the stream set
    them (the id as committed by the last dispatched event, as a reconnecting client must send it)."""

    __slots__ = (
        "_data",
        "_data_lines",
        "_discarding",
        "_id",
        "_max_data",
        "_oversized",
        "_parts",
        "_parts_size",
        "_skip_lf",
        "_started",
        "_tail",
        "_type",
        "last_event_id",
        "retry",
    )

    def __init__(self, max_data: int) -> None:
        self._max_data = max_data
        self._tail = b""
        """The bytes seen before the stream started (while a BOM may still be arriving)."""
        self._parts: list[bytes] = []
        """The start of a line whose end has not arrived yet, as the chunks that brought it."""
        self._parts_size = 0
        self._discarding = False
        """A line was cut for its length: drop what arrives until its end."""
        self._skip_lf = False
        """The last chunk ended in CR: an LF at the start of the next one belongs to it."""
        self._started = False
        self._data: bytes | bytearray = b""
        """The event's data lines, joined by LF as they arrive (one line is kept as it came): what is held is the
        data, not one object per line (an event of millions of 2-byte lines held some 40 times its size)."""
        self._data_lines = 0
        self._oversized = False
        self._type = ""
        self._id: str | None = None
        self.last_event_id: str | None = None
        """The id the last dispatched event carried (or inherited); None until the server sent one."""
        self.retry: int | None = None
        """The server's reconnection delay in milliseconds, if it sent one."""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events that ``chunk`` completes, in order."""
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not self._started and chunk:
            if len(self._tail) + len(chunk) < len(_BOM) and _BOM.startswith(self._tail + chunk):
                self._tail += chunk  # too short to tell yet
                return []
            self._started = True
            if self._tail:
                chunk, self._tail = self._tail + chunk, b""
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        events: list[SSEEvent] = []
        if self._discarding:
            chunk = self._skip_rest_of_line(chunk)
        if not chunk:
            return events
        if chunk.find(b"\n") < 0 and chunk.find(b"\r") < 0:  # no line ends here: keep the chunk as it is
            self._hold(chunk)
            return events
        if self._parts:
            buffer = b"".join([*self._parts, chunk])
            self._parts, self._parts_size = [], 0
        else:
            buffer = chunk
        lines = buffer.splitlines()  # for bytes: exactly LF, CRLF and CR, the format's line ends
        end = buffer[-1:]
        if end == b"\n" or end == b"\r":
            self._skip_lf = end == b"\r"
            tail = b""
        else:
            tail = lines.pop() if lines else b""
        for line in lines:
            if not line:
                self._dispatch(events)
            elif line[0] != 0x3A:  # ":" starts a comment (keep-alives)
                self._field(line)
        if tail:
            self._hold(tail)
        return events

    @property
    def held(self) -> int:
        """Bytes held for the line whose end has not arrived (bounded by ``max_data`` plus a little)."""
        return self._parts_size + len(self._tail)

    def _hold(self, piece: bytes) -> None:
        self._parts.append(piece)
        self._parts_size += len(piece)
        if self._parts_size > self._max_data + 64:
            line = b"".join(self._parts)
            self._parts, self._parts_size = [], 0
            self._cut_long_line(line)

    def _skip_rest_of_line(self, chunk: bytes) -> bytes:
        """What follows the end of the line being dropped (nothing, if it does not end in ``chunk``)."""
        ends = [i for i in (chunk.find(b"\n"), chunk.find(b"\r")) if i >= 0]
        if not ends:
            return b""
        self._discarding = False
        at = min(ends)
        if chunk[at] == 0x0D:
            if at + 1 == len(chunk):
                self._skip_lf = True
                return b""
            if chunk[at + 1] == 0x0A:
                at += 1
        return chunk[at + 1 :]

    def _field(self, line: bytes) -> None:
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._add_data(value)
        elif name == b"event":
            self._type = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:
                self._id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)

    def _add_data(self, value: bytes) -> None:
        if self._oversized:
            return
        if self._data_lines:
            if isinstance(self._data, bytes):
                self._data = bytearray(self._data)
            self._data += b"\n"
            self._data += value[: self._max_data + 1 - len(self._data)]
        else:
            self._data = value[: self._max_data + 1]
        self._data_lines += 1
        if len(self._data) > self._max_data:
            self._keep_head_only()

    def _keep_head_only(self) -> None:
        self._data = self._data[:_KEPT_OF_OVERSIZED]
        self._oversized = True

    def _cut_long_line(self, line: bytes) -> None:
        """A line longer than any acceptable event: keep its head (if it is data), drop the rest as it comes."""
        if line.startswith(b"data:"):
            value = line[5:]
            self._add_data(value[1:] if value[:1] == b" " else value)
            if not self._oversized:
                self._keep_head_only()
        self._discarding = True

    def _dispatch(self, events: list[SSEEvent]) -> None:
        self.last_event_id = self._id
        if self._data_lines:
            events.append(SSEEvent(bytes(self._data), self._type or "message", self._oversized))
        self._data = b""
        self._data_lines = 0
        self._oversized = False
        self._type = ""
