"""The SSE decoder against the WHATWG event-stream rules, whole and fed in pieces of every size."""

from __future__ import annotations

import random

import pytest

from mcp_client.transports._sse import SSEDecoder, SSEEvent

LIMIT = 1000


def decode(*chunks: bytes, limit: int = LIMIT) -> tuple[list[SSEEvent], SSEDecoder]:
    decoder = SSEDecoder(limit)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events, decoder


def in_pieces(stream: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    pieces, start = [], 0
    while start < len(stream):
        size = rng.randint(1, 7)
        pieces.append(stream[start : start + size])
        start += size
    return pieces


STREAMS = [
    b'data: {"a":1}\n\n',
    b'event: message\nid: 7\ndata: {"a":1}\n\n: keep-alive\n\ndata: {"b":2}\n\n',
    b"data: one\r\ndata: two\r\n\r\ndata:three\r\rdata: four\n\r\n",
    b"\xef\xbb\xbfdata: after a BOM\n\n",
    b"retry: 1500\nid: x\n\nevent: other\ndata: typed\n\ndata\n\n",
]


@pytest.mark.parametrize("stream", STREAMS)
def test_any_split_gives_the_same_events(stream: bytes) -> None:
    whole, whole_decoder = decode(stream)
    byte_by_byte, decoder = decode(*(stream[i : i + 1] for i in range(len(stream))))
    assert byte_by_byte == whole
    assert (decoder.last_event_id, decoder.retry) == (whole_decoder.last_event_id, whole_decoder.retry)
    for seed in range(20):
        assert decode(*in_pieces(stream, seed))[0] == whole


def test_fields_and_line_endings() -> None:
    events, decoder = decode(STREAMS[2])
    assert [e.data for e in events] == [b"one\ntwo", b"three", b"four"]
    events, decoder = decode(STREAMS[4])
    assert events == [SSEEvent(b"typed", "other"), SSEEvent(b"", "message")]
    assert decoder.retry == 1500
    assert decoder.last_event_id == "x"


def test_comments_and_unknown_fields_are_skipped() -> None:
    events, _ = decode(b': ping\nfoo: bar\ndata: {"x":1}\n\n')
    assert events == [SSEEvent(b'{"x":1}')]


def test_one_space_after_the_colon_is_dropped_not_more() -> None:
    events, _ = decode(b"data:  two spaces\n\n")
    assert events[0].data == b" two spaces"


def test_a_bom_only_at_the_very_start_is_dropped() -> None:
    events, _ = decode(b"\xef", b"\xbb", b"\xbfdata: a\n\n")
    assert events == [SSEEvent(b"a")]
    events, _ = decode(b"data: a\n\n\xef\xbb\xbfdata: b\n\n")
    assert events[1:] == []  # a BOM later is part of a field name, which is unknown


def test_the_id_is_committed_when_an_event_ends() -> None:
    decoder = SSEDecoder(LIMIT)
    decoder.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b")
    assert decoder.last_event_id == "1"  # the second event is not complete
    decoder.feed(b"\n\n")
    assert decoder.last_event_id == "2"
    decoder.feed(b"data: no id of its own\n\n")
    assert decoder.last_event_id == "2"  # inherited
    decoder.feed(b"id\n\n")
    assert decoder.last_event_id == ""  # an empty id resets it


def test_an_id_with_nul_and_a_retry_that_is_not_digits_are_ignored() -> None:
    _, decoder = decode(b"id: 5\n\nid: a\x00b\nretry: 10s\nretry: -1\n\n")
    assert decoder.last_event_id == "5"
    assert decoder.retry is None


def test_an_unterminated_event_is_not_dispatched() -> None:
    events, _ = decode(b"data: complete\n\ndata: cut off\n")
    assert events == [SSEEvent(b"complete")]


def test_a_cr_at_the_end_of_a_chunk_and_lf_at_the_start_of_the_next_are_one_line_end() -> None:
    events, _ = decode(b"data: a\r", b"\ndata: b\r\n\r\n")
    assert events == [SSEEvent(b"a\nb")]


def test_an_oversized_event_keeps_only_its_head_and_memory_stays_bounded() -> None:
    decoder = SSEDecoder(100)
    events = decoder.feed(b'data: {"id": 3, "x": "')
    for _ in range(1000):
        events += decoder.feed(b"y" * 1000)
        assert decoder.held <= 100 + 64
    events += decoder.feed(b'"}\n\ndata: {"id": 4}\n\n')
    assert len(events) == 2
    assert events[0].oversized
    assert events[0].data.startswith(b'{"id": 3, "x": "yyy')
    assert len(events[0].data) <= 512
    assert events[1] == SSEEvent(b'{"id": 4}')


def test_many_data_lines_past_the_limit_make_an_oversized_event() -> None:
    events, _ = decode(b"data: 0123456789\n" * 20 + b"\n", limit=100)
    assert len(events) == 1
    assert events[0].oversized
    assert events[0].data.startswith(b"0123456789\n0123456789")


def test_an_event_at_the_limit_is_whole() -> None:
    data = b"z" * 100
    events, _ = decode(b"data: " + data + b"\n\n", limit=100)
    assert events == [SSEEvent(data)]


def test_a_long_line_of_an_unknown_field_is_skipped_not_taken_for_data() -> None:
    decoder = SSEDecoder(100)
    events = decoder.feed(b"datax: " + b"y" * 500)
    events += decoder.feed(b"y" * 500 + b"\ndata: small\n\n")
    assert events == [SSEEvent(b"small")]


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_after_a_long_line_is_cut_the_rest_of_it_is_dropped_unbuffered(chunk: int) -> None:
    """Once a line is cut, nothing more of it is buffered (or copied again) until its end: linear work."""
    decoder = SSEDecoder(100)
    line = b"data: " + b"y" * 20_000
    held: list[int] = []
    events: list[SSEEvent] = []
    for start in range(0, len(line), chunk):
        events += decoder.feed(line[start : start + chunk])
        held.append(decoder.held)
    cut_at = next(i for i, size in enumerate(held) if size == 0 and i > 0)
    assert max(held) <= 100 + 64 + chunk
    assert set(held[cut_at:]) == {0}, "the cut line was buffered again"
    events += decoder.feed(b"\r")
    events += decoder.feed(b"\n\ndata: next\n\n")
    assert len(events) == 2
    assert events[0].oversized
    assert events[0].data.startswith(b"yyy")
    assert events[1] == SSEEvent(b"next")


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_the_line_end_of_a_dropped_line_may_be_any_of_the_three(ending: bytes) -> None:
    decoder = SSEDecoder(10)
    events = decoder.feed(b"data: " + b"x" * 200)
    events += decoder.feed(b"x" * 50 + ending + ending + b"data: after" + ending + ending)
    assert [e.data for e in events] == [events[0].data, b"after"]
    assert events[0].oversized


@pytest.mark.parametrize("value", [b"", b"ab"])
def test_many_short_data_lines_cost_memory_of_their_data_not_of_their_count(value: bytes) -> None:
    """An event of many short ``data:`` lines was held as one bytes object (or pointer) per line: 2-byte lines cost
    some 40 times the limit (at the default 32 MiB, ~1.4 GB from ~100 KB of gzip). What is held is the data."""
    import tracemalloc

    limit = 300_000
    line = b"data: " + value + b"\n"
    lines_per_chunk = 65536 // len(line)
    lines_past_the_limit = limit // (len(value) + 1) * 11 // 10
    decoder = SSEDecoder(limit)
    tracemalloc.start()
    try:
        for _ in range(lines_past_the_limit // lines_per_chunk + 1):
            assert decoder.feed(line * lines_per_chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * limit, f"{peak / 1e6:.0f} MB held for an event limited to {limit / 1e6:.1f} MB"
    [event] = decoder.feed(b"\n")
    assert event.oversized
