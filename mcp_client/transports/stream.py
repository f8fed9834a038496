"""Newline-delimited JSON over a pair of byte streams: the framing of stdio, shared by the in-memory transport.

One reader task splits the incoming bytes into lines, parses each as compact JSON and hands objects to the
session. A line that is not JSON, not an object, longer than the size limit, or that may hold more values than the
limit that comes with it (:func:`~mcp_client.transports._json.max_values_for`: decoding holds the event loop) is
reported and skipped: it never ends the connection and never disturbs unrelated requests. Writes are serialised
by a lock so lines never interleave. End of input is the death of the shared channel: every request on it fails at once.

Cancellation is the same in both eras here: a ``notifications/cancelled`` message.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.abc

from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject, RequestId
from mcp_client.errors import TransportError
from mcp_client.events import CancelMethod
from mcp_client.transports._json import TooManyValues, dump_bytes, loads, max_values_for
from mcp_client.transports._message_head import HEAD_SIZE, response_id_from_head
from mcp_client.transports.base import Connection, MessageHandler

__all__ = [
    "BURST_PAUSE",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "PROBE_AFTER",
    "LineConnection",
    "LineSplitter",
    "batch_hooks",
    "cancellation",
    "read_lines",
]

logger = package_logger("mcp_client.transport")

DEFAULT_MAX_MESSAGE_SIZE = 32 * 1024 * 1024
"""Largest message accepted from a server, in bytes (32 MiB). A message may also hold at most one value per 256
bytes of this limit (131,072 by default), which keeps its decoding short; a host raises both with
``max_message_size``."""

_CHUNK = 65536

BURST_PAUSE = 0.002
"""Seconds a pipe reader waits before its next read after a read of notifications alone, while such waits pay.

A server streaming progress writes one line per write; a reader that takes each as it lands wakes up (a context
switch, on a machine the server shares) for nearly every one. After a read that found notifications and nothing
else, the next read waits this long and takes what piled up meanwhile in one piece. A read with anything else in
it (an answer, a request of the server's) is followed by an immediate read, so a lone answer is never held back;
an answer that follows notifications within the pause waits for the rest of it, at most. Whether the waits pay is
measured by the read that follows one (see :data:`PROBE_AFTER`)."""

PROBE_AFTER = 8
"""Reads of a single notification that follow at once, after a pause that found at most one more waiting.

Such a server is no faster than the reader: another pause would cost a timer and two ``epoll`` changes to save at
most one wake-up. A read that finds several notifications waiting starts the pauses again at once; after this many
single-notification reads without one, the reader tries a pause again (the server may have sped up)."""


def encode_message(message: JSONObject) -> bytes:
    """Compact JSON plus the newline that ends it. JSON escapes newlines inside strings, so one line each."""
    return dump_bytes(message) + b"\n"


class LineSplitter:
    """Sans-IO framing: feed it bytes as they arrive; it hands each complete line's message to the handler.

    Shared by the reader task (:func:`read_lines`) and, on asyncio, by a pipe protocol that is fed straight from
    the event loop (no task wake-up per chunk).
    """

    __slots__ = ("_buffer", "_discarding", "_handler", "_max_message_size", "_max_values", "_unpaid", "streaming")

    def __init__(self, handler: MessageHandler, *, max_message_size: int) -> None:
        self._handler = handler
        self._max_message_size = max_message_size
        self._max_values = max_values_for(max_message_size)
        self._buffer = bytearray()
        self._discarding: bytes | None = None  # head of an oversized line being skipped
        self.streaming = False
        """Should the next read wait :data:`BURST_PAUSE`? The last chunk completed notifications alone, and either
        more than one or at a time the waits pay (see :data:`PROBE_AFTER`)."""
        self._unpaid = 0  # single-notification reads still to go at once after a pause that found little

    def feed(self, chunk: bytes) -> None:
        """Deliver every line that ``chunk`` completes; keep the unfinished rest."""
        handler = self._handler
        start = 0
        notifications = other = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                break
            piece = chunk[start:newline]
            start = newline + 1
            if self._discarding is not None:
                _report_oversized(handler, self._discarding, self._max_message_size)
                self._discarding = None
                self._buffer.clear()
                continue
            if self._buffer:
                self._buffer += piece
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = piece
            if len(line) > self._max_message_size:
                _report_oversized(handler, line[:HEAD_SIZE], self._max_message_size)
                continue
            if _deliver_line(line, handler, self._max_values):
                notifications += 1
            else:
                other += 1
        self.streaming = self._pace(notifications, other)
        if self._discarding is None and start < len(chunk):
            self._buffer += chunk[start:]
            if len(self._buffer) > self._max_message_size:
                self._discarding = bytes(self._buffer[:HEAD_SIZE])
                self._buffer.clear()

    def _pace(self, notifications: int, other: int) -> bool:
        if self.streaming:  # this chunk is what a pause collected
            self._unpaid = 0 if notifications > 1 else PROBE_AFTER
        if other or not notifications:
            return False
        if notifications > 1:
            self._unpaid = 0
            return True
        if self._unpaid:
            self._unpaid -= 1
            return False
        return True

    def finish(self) -> None:
        """The input ended: report a message it cut off, if any."""
        if self._discarding is not None or self._buffer.strip():
            head = self._discarding if self._discarding is not None else bytes(self._buffer[:HEAD_SIZE])
            self._handler.on_invalid("input ended in the middle of a message", head, response_id_from_head(head))
        self._discarding = None
        self._buffer.clear()


async def read_lines(
    stream: anyio.abc.ByteReceiveStream,
    handler: MessageHandler,
    *,
    max_message_size: int,
) -> None:
    """Read messages until end of input, delivering each to ``handler``. Returns at EOF."""
    splitter = LineSplitter(handler, max_message_size=max_message_size)
    batch_begin, batch_end = batch_hooks(handler)
    while True:
        try:
            chunk = await stream.receive(_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            break
        batch_begin()
        try:
            splitter.feed(chunk)
        finally:
            batch_end()
    splitter.finish()


def batch_hooks(handler: MessageHandler) -> tuple[Callable[[], None], Callable[[], None]]:
    """The handler's optional ``on_batch_begin`` and ``on_batch_end`` (around each chunk's messages), or no-ops."""
    begin: Callable[[], None] | None = getattr(handler, "on_batch_begin", None)
    end: Callable[[], None] | None = getattr(handler, "on_batch_end", None)
    return begin or _nothing, end or _nothing


def _nothing() -> None:
    pass


def _report_oversized(handler: MessageHandler, head: bytes, limit: int) -> None:
    handler.on_invalid(f"message larger than the {limit}-byte limit was dropped", head, response_id_from_head(head))


def _deliver_line(line: bytes, handler: MessageHandler, max_values: int) -> bool:
    """Parse and deliver one line; True if it was a notification."""
    if not line.strip():
        return False
    try:
        message = loads(line, max_values=max_values)
    except TooManyValues as exc:
        handler.on_invalid(f"{exc}: dropped unread", line[:HEAD_SIZE], response_id_from_head(line))
        return False
    except ValueError as exc:
        handler.on_invalid(f"not valid JSON ({exc})", line[:HEAD_SIZE], response_id_from_head(line))
        return False
    if not isinstance(message, dict):
        handler.on_invalid(f"a JSON {type(message).__name__} is not a JSON-RPC message", line[:HEAD_SIZE], None)
        return False
    handler.on_message(message)
    return "id" not in message


def cancellation(request_id: RequestId, reason: str | None) -> JSONObject:
    """The ``notifications/cancelled`` message for ``request_id`` (the reason only when there is one)."""
    params: JSONObject = {"requestId": request_id}
    if reason:
        params["reason"] = reason
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


class LineConnection(Connection):
    """A :class:`Connection` writing newline-delimited JSON to a byte stream.

    The reader side is run by whoever owns the streams (see :func:`read_lines`); this class only writes.
    """

    def __init__(
        self,
        send_stream: anyio.abc.ByteSendStream,
        *,
        describe_failure: Callable[[], str] = lambda: "the server's input is closed",
    ) -> None:
        self._send_stream = send_stream
        self._send_now: Callable[..., bool] | None = getattr(send_stream, "try_send", None)
        self._lock = anyio.Lock(fast_acquire=True)  # no checkpoint when uncontended: one write at a time is the rule
        self._describe_failure = describe_failure
        self._closed = False

    async def _write(self, message: JSONObject) -> None:
        data = encode_message(message)
        if self._closed:
            raise TransportError(self._describe_failure(), written=False)
        try:
            async with self._lock:
                await self._send_stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise self._broken(exc) from exc

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        await self._write(message)

    def try_send_request(self, message: JSONObject, *, server_busy: bool = False) -> bool:
        return self._try_write(message, server_busy)

    def try_cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod | None:
        return CancelMethod.NOTIFICATION if self._try_write(cancellation(request_id, reason)) else None

    def _try_write(self, message: JSONObject, corked: bool = False) -> bool:
        send_now = self._send_now  # a stream that can take bytes without waiting (asyncio's own pipes)
        if send_now is None or self._closed or self._lock.locked():
            return False
        try:
            sent: bool = send_now(encode_message(message), corked=corked)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise self._broken(exc) from exc
        return sent

    def _broken(self, exc: BaseException) -> TransportError:
        """The server's input failed under a write: nothing more goes out on it."""
        self._closed = True
        detail = str(exc) or type(exc).__name__
        return TransportError(f"{self._describe_failure()} ({detail})", written=False)

    async def send_notification(self, message: JSONObject) -> None:
        await self._write(message)

    async def send_response(self, message: JSONObject) -> None:
        await self._write(message)

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        await self._write(cancellation(request_id, reason))
        return CancelMethod.NOTIFICATION

    async def close_input(self) -> None:
        """Close the server's input (the first rung of the stdio shutdown ladder)."""
        self._closed = True
        with anyio.CancelScope(shield=True), anyio.move_on_after(1):
            async with self._lock:
                try:
                    await self._send_stream.aclose()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    logger.debug("server input already closed")
