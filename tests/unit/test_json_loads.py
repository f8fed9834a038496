"""The message parser agrees with ``json.loads`` on values and on what it refuses; the writer with ``json.dumps``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_client.transports._json import dump_bytes, dumps, loads

GOOD = [
    b'{"jsonrpc":"2.0","id":1,"result":{}}',
    b'  {"a": [1, 2.5, null, true]}  \r\n',
    b'{"text":"caf\xc3\xa9 \\u00e9"}',
    b"[1]",
    b'"just a string"',
    b"NaN",
]
BAD = [
    b"",
    b"   ",
    b'{"a":1} trailing',
    b"{}\x0c",  # a form feed is whitespace to Python, not to JSON
    b"{}\xc2\xa0",
    b'{"a":1}{"b":2}',
    b'{"a":',
    b"\xff\xfe{}",
    b"{'a': 1}",
]


@pytest.mark.parametrize("raw", GOOD)
def test_same_value_as_json_loads(raw: bytes) -> None:
    expected = json.loads(raw)
    got = loads(raw)
    assert got == expected or (got != got and expected != expected)  # NaN is not equal to itself
    assert loads(raw.decode()) == got or got != got


@pytest.mark.parametrize("raw", BAD)
def test_refuses_what_json_loads_refuses_with_a_value_error(raw: bytes) -> None:
    with pytest.raises(ValueError, match=r"."):
        loads(raw)


def test_a_lone_surrogate_escape_reads_as_json_loads_reads_it() -> None:
    assert loads(b'{"text":"\\ud800"}') == {"text": "\ud800"}


def test_bytes_are_read_as_utf8_only() -> None:
    with pytest.raises(ValueError, match=r"."):
        loads('{"a":1}'.encode("utf-16"))


MESSAGES: list[object] = [
    {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "café"}}},
    {"a": [1, 2.5, None, True, False, -0.0, 1e16, 2**80], "b": {"c": 'line\nbreak \u2028 "quoted"'}},
    {"text": "NaN and Infinity are only words here"},
    [],
    "plain",
]


@pytest.mark.parametrize("message", MESSAGES)
def test_written_json_reads_back_as_the_standard_library_reads_its_own(message: object) -> None:
    ours = dump_bytes(message)
    assert ours == json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
    assert dumps(message) == ours.decode()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_number_is_refused_with_a_value_error(value: float) -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        dump_bytes({"params": {"arguments": {"x": [1, value]}}})


def test_a_value_neither_engine_knows_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dump_bytes({"x": object()})


def test_non_ascii_is_written_as_utf8_not_escaped() -> None:
    assert dump_bytes({"t": "é"}) == '{"t":"é"}'.encode()


def test_string_values_are_not_kept_by_the_parser_after_the_message_is_gone() -> None:
    # pydantic-core's reader can keep every short string it reads in a process-wide cache of 16,384 entries, there
    # to be shared by the next message: right for keys, which repeat, but texts, ids and progress tokens do not,
    # and a long run filled the cache with them (about 1 MiB that a reader of unique values never reuses).
    raw = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a text seen once"}]}}'
    first, second = loads(raw), loads(raw)
    assert isinstance(first, dict)
    assert isinstance(second, dict)
    text_first = first["result"]["content"][0]["text"]
    text_second = second["result"]["content"][0]["text"]
    assert text_first == text_second == "a text seen once"
    assert text_first is not text_second  # a fresh string each time: nothing held for it once the message is gone
    assert next(iter(first)) is next(iter(second))  # the keys are still shared: "jsonrpc" is built once


def test_reading_unique_values_does_not_grow_the_process(tmp_path: Path) -> None:
    # In a fresh process, as the cache is process-wide: 20,000 messages of unique texts and progress tokens leave
    # (next to) nothing behind once they are dropped.
    script = """
import gc, tracemalloc
from mcp_client.transports._json import loads
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
for n in range(20_000):
    loads(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t%d","progress":%d,'
          b'"message":"step %d of a long tool"}}' % (n, n, n))
gc.collect()
print(tracemalloc.get_traced_memory()[0] - before)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    grown = int(done.stdout.strip())
    assert grown < 64 * 1024, f"{grown} bytes still held after the messages were dropped"
