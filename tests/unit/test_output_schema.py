"""Structured output against the tool's outputSchema: what passes, what fails, what is never fetched, what it costs."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
import referencing.exceptions

from mcp_client import MCPClientError, StructuredOutputError
from mcp_client.client.output_schema import OutputValidator

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}


def result(structured: Any, *, is_error: bool = False) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[], structured_content=structured, is_error=is_error)


def test_a_matching_result_passes_and_a_mismatch_says_where() -> None:
    validator = OutputValidator()
    validator.check("weather", WEATHER, result({"city": "Oslo", "celsius": 3}))
    broken = result({"city": "Oslo", "celsius": "cold"})
    with pytest.raises(StructuredOutputError, match="celsius") as caught:
        validator.check("weather", WEATHER, broken)
    assert isinstance(caught.value, MCPClientError)
    assert (caught.value.tool, caught.value.path, caught.value.result) == ("weather", ("celsius",), broken)


def test_a_missing_structured_content_fails_and_errors_and_schemaless_tools_are_not_checked() -> None:
    validator = OutputValidator()
    with pytest.raises(StructuredOutputError, match="no structuredContent"):
        validator.check("weather", WEATHER, result(None))
    validator.check("weather", WEATHER, result(None, is_error=True))
    validator.check("free", None, result({"anything": 1}))
    assert validator.compiled == 0


def test_the_default_dialect_is_2020_12_and_a_declared_one_is_used() -> None:
    validator = OutputValidator()
    tuple_2020 = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    with pytest.raises(StructuredOutputError):
        validator.check("t", tuple_2020, result([1, 2]))  # prefixItems is 2020-12: a second item is not allowed
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "prefixItems": [{"type": "integer"}],
        "items": False,
    }
    with pytest.raises(StructuredOutputError):
        validator.check("t", draft7, result([1]))  # draft-07 knows no prefixItems: items false forbids any item
    validator.check("t", {"type": "string", "format": "email"}, result("not an email"))  # formats are annotations


def test_local_refs_resolve_and_a_network_ref_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    validator = OutputValidator()
    local = {"$defs": {"n": {"type": "number"}}, "type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}}
    validator.check("t", local, result({"x": 1}))
    with pytest.raises(StructuredOutputError):
        validator.check("t", local, result({"x": "1"}))
    fetched: list[str] = []

    def no_network(*args: Any, **kwargs: Any) -> Any:
        fetched.append(str(args))
        raise AssertionError("the network was used")

    monkeypatch.setattr("urllib.request.urlopen", no_network)
    remote = {"type": "object", "properties": {"x": {"$ref": "https://example.com/number.json"}}}
    with pytest.raises(StructuredOutputError, match="never fetched") as caught:
        validator.check("t", remote, result({"x": 1}))
    assert isinstance(caught.value.__context__, referencing.exceptions.Unresolvable)
    assert fetched == []


def test_an_invalid_schema_is_reported_once_compiled_and_cached() -> None:
    validator = OutputValidator()
    for _ in range(3):
        with pytest.raises(StructuredOutputError, match="not a valid JSON Schema"):
            validator.check("t", {"type": 12}, result({}))
    assert validator.compiled == 1


def test_each_tool_and_schema_is_compiled_once_and_the_cache_is_bounded() -> None:
    validator = OutputValidator(limit=2)
    for _ in range(5):
        validator.check("weather", WEATHER, result({"city": "a", "celsius": 1}))
    assert validator.compiled == 1
    validator.check("weather", {**WEATHER, "title": "v2"}, result({"city": "a", "celsius": 1}))  # a new schema
    validator.check("other", WEATHER, result({"city": "a", "celsius": 1}))
    assert validator.compiled == 3
    validator.check("weather", WEATHER, result({"city": "a", "celsius": 1}))  # evicted: the oldest of three
    assert validator.compiled == 4
