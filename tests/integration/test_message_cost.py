"""What a server's message costs to read is bounded by what it may hold, not only by its size.

Decoding JSON holds the interpreter's lock, in a worker thread too, so a message of ten million tiny values (32 MiB
of ``{},``, about 5 s and 825 MiB) froze every client of the process while it was read. A message that may hold
more values than the limit that comes with the size limit is refused before the decoder sees it; one long string
(an image, a file) is as cheap as ever, and a host that raises ``max_message_size`` raises both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcp_client import Client, Event, ProtocolViolation
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports import _json
from mcp_client.transports._json import DEFAULT_MAX_VALUES, TooManyValues, loads, max_values_for
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]


def _values(count: int) -> bytes:
    """An array of ``count`` values: the count is exact (its commas and its one opening bracket)."""
    return b"[" + b"0," * (count - 1) + b"0]"


def test_a_message_that_may_hold_more_values_than_the_limit_is_refused_before_it_is_decoded() -> None:
    assert DEFAULT_MAX_VALUES == 131_072
    assert len(loads(_values(DEFAULT_MAX_VALUES))) == DEFAULT_MAX_VALUES  # type: ignore[arg-type]
    with pytest.raises(TooManyValues, match="131,072 values"):
        loads(_values(DEFAULT_MAX_VALUES + 1))
    with pytest.raises(ValueError, match="values"):
        loads(_values(DEFAULT_MAX_VALUES + 1).decode())
    assert len(loads(_values(200_000), max_values=200_000)) == 200_000  # type: ignore[arg-type]


def test_one_long_string_at_the_size_limit_is_read() -> None:
    text = b"x" * (DEFAULT_MAX_MESSAGE_SIZE - 16)
    assert loads(b'{"data":"' + text + b'"}') == {"data": text.decode()}


def test_the_size_limit_raises_the_values_limit_with_it() -> None:
    assert max_values_for(DEFAULT_MAX_MESSAGE_SIZE) == DEFAULT_MAX_VALUES
    assert max_values_for(4 * DEFAULT_MAX_MESSAGE_SIZE) == 4 * DEFAULT_MAX_VALUES
    assert max_values_for(1024) == DEFAULT_MAX_VALUES  # a smaller size limit bounds the values already


async def test_three_messages_of_millions_of_values_are_dropped_unread_and_the_next_answer_comes(
    connect: Connect, events: list[Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[int] = []
    real_from_json = _json.from_json  # type: ignore[attr-defined]

    def counting_from_json(raw: Any, **kwargs: Any) -> Any:
        decoded.append(len(raw))
        return real_from_json(raw, **kwargs)

    monkeypatch.setattr(_json, "from_json", counting_from_json)
    size = 30_000_000  # each line: about 11 MiB of "{}," (3.75 million values), under the 32 MiB size limit
    async with connect(ScriptedPeer()) as client:
        for _ in range(3):
            result = await client.call_tool("hostile", {"kind": "many_values", "size": size})
            assert text_of(result) == "survived many_values"
        assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"

    refused = [e for e in events if isinstance(e, ProtocolViolation) and "values in one message" in e.detail]
    assert len(refused) == 3
    assert max(decoded) < 1_000_000  # the decoder never saw one of them


async def test_a_host_that_raises_the_size_limit_reads_a_message_of_that_many_values(
    connect: Connect, events: list[Event]
) -> None:
    async with connect(ScriptedPeer(), max_message_size=4 * DEFAULT_MAX_MESSAGE_SIZE) as client:
        # 250,000 objects (500,001 counted), under the raised limit of 524,288
        result = await client.call_tool("hostile", {"kind": "many_values", "size": 2_000_000})
        assert text_of(result) == "survived many_values"
    assert not [e for e in events if isinstance(e, ProtocolViolation)]


@pytest.mark.parametrize("as_text", [False, True])
def test_commas_and_brackets_inside_strings_are_no_values(as_text: bool) -> None:
    """Red team: a text full of commas (a CSV file, JSON sent as text) counted as that many values, so an answer of
    a 1.3 MB CSV text, far under the size limit, was refused as "more than 131,072 values"."""
    text = ",".join(str(i) for i in range(200_000)) + "[{" * 100_000
    raw = _json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}})
    message = loads(raw if as_text else raw.encode())
    assert message["result"]["content"][0]["text"] == text  # type: ignore[index]


@pytest.mark.parametrize(
    "raw",
    [
        # escaped quotes and backslashes in strings do not hide the values after them
        b'["\\"",' + b"0," * DEFAULT_MAX_VALUES + b"0]",
        b'["\\\\",' + b"0," * DEFAULT_MAX_VALUES + b"0]",
        b'["\\\\\\"' + b"," * DEFAULT_MAX_VALUES + b'",' + b"0," * DEFAULT_MAX_VALUES + b"0]",
        # values after a run of backslashes that spans a chunk of the count
        b'["' + b"\\\\" * 700_000 + b'",' + b"0," * DEFAULT_MAX_VALUES + b"0]",
        # many short strings
        b"[" + b'"",' * DEFAULT_MAX_VALUES + b'""]',
    ],
)
def test_values_outside_strings_are_counted_whatever_the_strings_hold(raw: bytes) -> None:
    with pytest.raises(TooManyValues):
        loads(raw)
    with pytest.raises(TooManyValues):
        loads(raw.decode())


async def test_a_tool_answer_of_a_long_csv_text_is_read(connect: Connect, events: list[Event]) -> None:
    """Red team: the same CSV answer through a real client, over every line transport, failed the call with a
    ``ProtocolError``."""
    text = ",".join(str(i) for i in range(200_000))
    async with connect(ScriptedPeer()) as client:
        assert text_of(await client.call_tool("echo", {"text": text})) == text
    assert not [e for e in events if isinstance(e, ProtocolViolation)]
