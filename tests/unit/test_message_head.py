"""The head of a broken message names a request only when it is certainly that request's response."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from mcp_client.transports._message_head import HEAD_SIZE, response_id_from_head


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xx', 7),
        (b'{"jsonrpc": "2.0", "id": "abc", "error": {"code": -1, "mess', "abc"),
        (b' \n{"id":12,"jsonrpc":"2.0","result":{oops', 12),
        # An id nested in a notification's params (or in data) proves nothing.
        (b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"id":7,"x":', None),
        (b'{"jsonrpc":"2.0","params":{"id":7},"method":"notifications/progress"', None),
        # A server's own request has an id of the server's, not ours.
        (b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{', None),
        # A result holding an id, with no top-level id.
        (b'{"jsonrpc":"2.0","result":{"id":7,"content":[', None),
        # Cut before it says what it is.
        (b'{"jsonrpc":"2.0","id":7', None),
        (b'{"jsonrpc":"2.0","id":7,"res', None),
        # The id after a result cut off: unknown.
        (b'{"jsonrpc":"2.0","result":{"content":"xxxx', None),
        # A repeated id is uncertain.
        (b'{"id":7,"id":8,"result":{', None),
        # Not an id of ours, or not an object at all.
        (b'{"id":true,"result":{', None),
        (b'{"id":1.5,"result":{', None),
        (b'{"id":1234567890123456789012,"result":{', None),
        (b'[{"id":7,"result":{}}', None),
        (b"not json at all", None),
        (b"", None),
    ],
)
def test_the_head_names_only_a_certain_response(head: bytes, expected: object) -> None:
    assert response_id_from_head(head) == expected


def test_only_the_head_is_read() -> None:
    padding = "x" * HEAD_SIZE
    head = f'{{"jsonrpc":"2.0","pad":"{padding}","id":5,"result":{{'.encode()
    assert response_id_from_head(head) is None


_ids = st.one_of(st.integers(min_value=0, max_value=10**18 - 1), st.text(max_size=20))
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(request_id=_ids, payload=_values, cut=st.integers(min_value=0, max_value=HEAD_SIZE))
def test_any_prefix_of_a_response_names_its_id_or_nothing(request_id: int | str, payload: object, cut: int) -> None:
    raw = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"data": payload}}).encode()
    assert response_id_from_head(raw[:cut]) in (None, request_id)
    assert response_id_from_head(raw) == request_id


@given(request_id=_ids, payload=_values, cut=st.integers(min_value=0, max_value=HEAD_SIZE))
def test_no_prefix_of_a_notification_or_server_request_names_an_id(
    request_id: int | str, payload: object, cut: int
) -> None:
    notification = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"id": request_id, "d": payload}}
    server_request = {"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"d": payload}}
    for message in (notification, server_request):
        raw = json.dumps(message).encode()
        assert response_id_from_head(raw[:cut]) is None
