"""The message parser agrees with ``json.loads`` on values and on what it refuses; the writer with ``json.dumps``."""

from __future__ import annotations

import json

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
