"""A ``tools/call`` result read by the text-only fast path is the very model the full validation makes.

Most results carry text blocks only; :func:`mcp_client.protocol.results.tool_result` validates those block by block as
``TextContent`` instead of trying the content union's five members. Whatever the shape, the model it returns (its
fields, the fields that were set, its dump by alias) and the error it raises are those of
``CallToolResult.model_validate``.
"""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from hypothesis import given, settings, strategies as st

from mcp_client import ProtocolError
from mcp_client.protocol.results import _text_result, tool_result

TEXT_BLOCK = st.fixed_dictionaries(
    {"type": st.just("text"), "text": st.text(max_size=20)},
    optional={
        "annotations": st.fixed_dictionaries({}, optional={"priority": st.floats(0, 1), "audience": st.just(["user"])}),
        "_meta": st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    },
)
OTHER_BLOCK = st.sampled_from(
    [
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "resource_link", "uri": "file:///a", "name": "a"},
        {"type": "text"},  # no text: invalid
        {"type": "text", "text": 3},  # not a string: invalid
        {"text": "no type"},
        "not an object",
    ]
)
RESULT = st.fixed_dictionaries(
    {"content": st.lists(st.one_of(TEXT_BLOCK, TEXT_BLOCK, OTHER_BLOCK), max_size=3)},
    optional={
        "isError": st.one_of(st.booleans(), st.just("yes")),
        "structuredContent": st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
        "_meta": st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
        "resultType": st.sampled_from(["complete", None]),
    },
)


def full_path(result: dict[str, Any]) -> mcp_types.CallToolResult | str:
    try:
        return mcp_types.CallToolResult.model_validate(result)
    except Exception as exc:
        return type(exc).__name__


@settings(max_examples=300, deadline=None)
@given(RESULT)
def test_the_fast_path_makes_the_model_the_full_validation_makes(result: dict[str, Any]) -> None:
    expected = full_path(result)
    if isinstance(expected, str):
        with pytest.raises(ProtocolError):
            tool_result("t", result, raise_on_error=False)
        assert _text_result(result) is None
        return
    got = tool_result("t", result, raise_on_error=False)
    assert type(got) is type(expected)
    assert got == expected
    assert got.model_fields_set == expected.model_fields_set
    assert got.model_dump(by_alias=True) == expected.model_dump(by_alias=True)
    assert [type(block) for block in got.content] == [type(block) for block in expected.content]


def test_a_text_only_result_takes_the_fast_path() -> None:
    result = {"content": [{"type": "text", "text": "hello"}], "isError": False}
    fast = _text_result(result)
    assert fast is not None
    assert fast == mcp_types.CallToolResult.model_validate(result)
    assert _text_result({"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]}) is None
