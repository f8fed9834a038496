"""The message parser agrees with ``json.loads`` on values and on what it refuses."""

from __future__ import annotations

import json

import pytest

from mcp_client.transports._json import loads

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
