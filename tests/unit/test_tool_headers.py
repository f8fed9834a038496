"""``x-mcp-header`` validation and ``Mcp-Param-*`` extraction (2026-07-28 Streamable HTTP, SEP-2243).

Includes the tool listings and arguments of the conformance suite's ``http-invalid-tool-headers`` and
``http-custom-headers`` scenarios, checked the way that suite checks them.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from hypothesis import given, strategies as st

from mcp_client.protocol.tool_headers import (
    MAX_SAFE_INTEGER,
    HeaderParam,
    InvalidHeaderArgument,
    InvalidToolHeaders,
    filter_tools,
    header_params,
    header_values,
)

_SENTINEL = re.compile(r"=\?base64\?(.*)\?=")


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _prop(kind: Any, name: Any) -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": name}


def _reason(schema: Any) -> str:
    with pytest.raises(InvalidToolHeaders) as caught:
        header_params(schema, tool="t")
    assert caught.value.tool == "t"
    assert caught.value.reason in str(caught.value)
    assert "'t'" in str(caught.value)
    return caught.value.reason


def _decode(value: str) -> str:
    match = _SENTINEL.fullmatch(value)
    return base64.b64decode(match.group(1), validate=True).decode() if match else value


# --- header_params: valid annotations ---------------------------------------------------------------------------


def test_no_annotations_no_params() -> None:
    assert header_params(_schema(q={"type": "string"}), tool="t") == ()
    assert header_params({"type": "object"}, tool="t") == ()
    assert header_params({}, tool="t") == ()


@pytest.mark.parametrize("kind", ["string", "integer", "boolean"])
def test_each_allowed_type(kind: str) -> None:
    (param,) = header_params(_schema(p=_prop(kind, "P")), tool="t")
    assert param == HeaderParam("P", ("p",), kind)  # type: ignore[arg-type]
    assert param.header == "Mcp-Param-P"


@pytest.mark.parametrize(
    ("declared", "kind"),
    [(["string", "null"], "string"), (["null", "integer"], "integer"), (["boolean"], "boolean")],
)
def test_type_list_of_one_allowed_type_plus_null(declared: list[str], kind: str) -> None:
    (param,) = header_params(_schema(p=_prop(declared, "P")), tool="t")
    assert param.type == kind


def test_every_tchar_is_accepted_and_case_is_kept() -> None:
    name = "!#$%&'*+-.^_`|~09azAZ"
    (param,) = header_params(_schema(p=_prop("string", name)), tool="t")
    assert param.name == name
    assert param.header == "Mcp-Param-" + name


def test_nested_properties_chain() -> None:
    schema = _schema(
        outer={
            "type": "object",
            "properties": {
                "inner": {"type": "object", "properties": {"leaf": _prop("string", "Leaf")}},
                "flag": _prop("boolean", "Flag"),
            },
        },
        top=_prop("integer", "Top"),
    )
    assert header_params(schema, tool="t") == (
        HeaderParam("Leaf", ("outer", "inner", "leaf"), "string"),
        HeaderParam("Flag", ("outer", "flag"), "boolean"),
        HeaderParam("Top", ("top",), "integer"),
    )


def test_data_keywords_are_not_searched() -> None:
    """``default``/``examples``/``const``/``enum`` hold instance data, and a property may be named x-mcp-header."""
    schema = {
        "type": "object",
        "default": {"x-mcp-header": "NotAnAnnotation"},
        "examples": [{"x-mcp-header": "Nope"}],
        "properties": {
            "x-mcp-header": {"type": "string"},
            "c": {"type": "object", "const": {"x-mcp-header": "X"}, "enum": [{"x-mcp-header": "Y"}]},
        },
    }
    assert header_params(schema, tool="t") == ()


def test_shared_subschema_objects_are_fine() -> None:
    """The same dict at two reachable places (not a cycle) gives two params... when their names differ."""
    leaf_a = _prop("string", "A")
    leaf_b = _prop("string", "B")
    shared = {"type": "object", "properties": {"x": {"type": "string"}}}
    schema = _schema(a=leaf_a, b=leaf_b, s1=shared, s2=shared)
    assert [p.name for p in header_params(schema, tool="t")] == ["A", "B"]


# --- header_params: each kind of invalid annotation --------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "My Region", "Region:Primary", "Région", "a/b", "(x)", 'q"', "a,b", "{x}"])
def test_names_that_are_not_tokens(name: str) -> None:
    _reason(_schema(p=_prop("string", name)))


@pytest.mark.parametrize("name", ["Region\t1", "a\r\nb", "a\nb", "a\rb", "\x00", "a\x7f", "x\x1b"])
def test_names_with_control_characters(name: str) -> None:
    assert "control character" in _reason(_schema(p=_prop("string", name)))


def test_empty_name_says_so() -> None:
    assert "empty" in _reason(_schema(p=_prop("string", "")))


@pytest.mark.parametrize("name", [None, 1, True, ["A"], {"n": "A"}])
def test_non_string_names(name: Any) -> None:
    assert "not a string" in _reason(_schema(p=_prop("string", name)))


@pytest.mark.parametrize(
    "declared",
    [
        "number",
        "object",
        "array",
        "null",
        None,
        ["string", "integer"],
        ["number", "null"],
        ["null"],
        [],
        ["string", 1],
        {"type": "string"},
    ],
)
def test_types_that_cannot_carry_a_header(declared: Any) -> None:
    assert "only 'string', 'integer' or 'boolean'" in _reason(_schema(p=_prop(declared, "P")))


def test_messages_survive_huge_values() -> None:
    assert "<int>" in _reason(_schema(p=_prop(10**5000, "P")))
    assert "<list>" in _reason(_schema(p=_prop([10**5000], "P")))
    with pytest.raises(InvalidHeaderArgument, match=r"<int> is beyond"):
        header_values(_PARAMS, {"priority": 10**5000})


def test_missing_type_is_invalid_even_with_enum_or_ref() -> None:
    _reason(_schema(p={"x-mcp-header": "P"}))
    _reason(_schema(p={"enum": ["a", "b"], "x-mcp-header": "P"}))
    _reason(
        {
            "type": "object",
            "$defs": {"s": {"type": "string"}},
            "properties": {"p": {"$ref": "#/$defs/s", "x-mcp-header": "P"}},
        }
    )


@pytest.mark.parametrize(("first", "second"), [("Region", "Region"), ("MyField", "myfield"), ("A-B", "a-b")])
def test_duplicate_names_case_insensitive(first: str, second: str) -> None:
    reason = _reason(_schema(f1=_prop("string", first), f2=_prop("string", second)))
    assert "/properties/f1" in reason
    assert "/properties/f2" in reason


def test_duplicate_names_across_nesting_levels() -> None:
    schema = _schema(a=_prop("string", "X"), o={"type": "object", "properties": {"b": _prop("integer", "x")}})
    _reason(schema)


def test_annotation_on_the_root() -> None:
    assert "root" in _reason({"type": "object", "x-mcp-header": "Root", "properties": {}})


@pytest.mark.parametrize(
    "schema",
    [
        _schema(xs={"type": "array", "items": _prop("string", "X")}),
        _schema(xs={"type": "array", "items": [_prop("string", "X")]}),
        _schema(xs={"type": "array", "prefixItems": [_prop("string", "X")]}),
        _schema(xs={"type": "array", "contains": _prop("string", "X")}),
        _schema(xs={"type": "array", "items": {"type": "object", "properties": {"h": _prop("string", "X")}}}),
        {"type": "object", "additionalProperties": _prop("string", "X")},
        {"type": "object", "unevaluatedProperties": _prop("string", "X")},
        {"type": "object", "propertyNames": _prop("string", "X")},
        {"type": "object", "patternProperties": {"^a": _prop("string", "X")}},
        {"type": "object", "oneOf": [_schema(a=_prop("string", "X"))]},
        {"type": "object", "anyOf": [_schema(a=_prop("string", "X"))]},
        {"type": "object", "allOf": [_schema(a=_prop("string", "X"))]},
        {"type": "object", "not": _schema(a=_prop("string", "X"))},
        {"type": "object", "if": _schema(a=_prop("string", "X"))},
        {"type": "object", "then": _schema(a=_prop("string", "X"))},
        {"type": "object", "else": _schema(a=_prop("string", "X"))},
        {"type": "object", "$defs": {"r": _prop("string", "X")}, "properties": {"r": {"$ref": "#/$defs/r"}}},
        {"type": "object", "definitions": {"r": _prop("string", "X")}},
        {"type": "object", "dependentSchemas": {"a": _schema(b=_prop("string", "X"))}},
        {"type": "object", "dependencies": {"a": _schema(b=_prop("string", "X")), "c": ["d"]}},
        _schema(o={"type": "object", "properties": {"p": {"anyOf": [_prop("string", "X")]}}}),
    ],
)
def test_annotation_not_statically_reachable(schema: dict[str, Any]) -> None:
    assert "not reachable" in _reason(schema)


def test_reason_names_the_location() -> None:
    reason = _reason({"type": "object", "properties": {"a/b": {"type": "array", "items": _prop("string", "X")}}})
    assert "/properties/a~1b/items" in reason


def test_cyclic_python_schema_is_rejected_not_looped() -> None:
    node: dict[str, Any] = {"type": "object", "properties": {}}
    node["properties"]["self"] = node
    assert "cyclic" in _reason(node)


def test_very_deep_schema_does_not_hit_recursion_limit() -> None:
    schema: dict[str, Any] = _prop("string", "Deep")
    for _ in range(5000):
        schema = {"type": "object", "properties": {"n": schema}}
    (param,) = header_params(schema, tool="t")
    assert len(param.path) == 5000


def test_non_mapping_schema_has_no_params() -> None:
    assert header_params(True, tool="t") == ()  # type: ignore[arg-type]


# --- header_values ----------------------------------------------------------------------------------------------

_PARAMS = header_params(
    _schema(
        region=_prop("string", "Region"),
        priority=_prop("integer", "Priority"),
        verbose=_prop("boolean", "Verbose"),
        nested={"type": "object", "properties": {"tenant": _prop(["string", "null"], "Tenant")}},
        query={"type": "string"},
    ),
    tool="t",
)


def test_values_plain() -> None:
    headers = header_values(
        _PARAMS,
        {"region": "us-west1", "priority": 42, "verbose": False, "nested": {"tenant": "acme"}, "query": "SELECT 1"},
    )
    assert headers == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-Tenant": "acme",
    }


def test_values_absent_or_null_are_omitted() -> None:
    assert header_values(_PARAMS, None) == {}
    assert header_values(_PARAMS, {}) == {}
    assert header_values(_PARAMS, {"region": None, "verbose": True, "nested": None}) == {"Mcp-Param-Verbose": "true"}
    assert header_values(_PARAMS, {"nested": {"tenant": None}}) == {}
    assert header_values(_PARAMS, {"nested": {}}) == {}
    assert header_values(_PARAMS, {"nested": "not an object"}) == {}
    assert header_values((), {"region": "x"}) == {}


def test_values_integer_bounds() -> None:
    assert header_values(_PARAMS, {"priority": MAX_SAFE_INTEGER}) == {"Mcp-Param-Priority": str(2**53 - 1)}
    assert header_values(_PARAMS, {"priority": -MAX_SAFE_INTEGER}) == {"Mcp-Param-Priority": str(1 - 2**53)}
    assert header_values(_PARAMS, {"priority": 0}) == {"Mcp-Param-Priority": "0"}
    for bad in (2**53, -(2**53), 10**400):
        with pytest.raises(InvalidHeaderArgument) as caught:
            header_values(_PARAMS, {"priority": bad})
        assert caught.value.param.name == "Priority"
        assert "2**53" in str(caught.value)


def test_values_integral_float_counts_as_integer() -> None:
    assert header_values(_PARAMS, {"priority": 3.0}) == {"Mcp-Param-Priority": "3"}
    assert header_values(_PARAMS, {"priority": -0.0}) == {"Mcp-Param-Priority": "0"}
    with pytest.raises(InvalidHeaderArgument):
        header_values(_PARAMS, {"priority": 2.0**53})


@pytest.mark.parametrize(
    "arguments",
    [
        {"priority": True},
        {"priority": 3.5},
        {"priority": float("nan")},
        {"priority": float("inf")},
        {"priority": "42"},
        {"region": 1},
        {"region": ["a"]},
        {"verbose": 1},
        {"verbose": "true"},
        {"nested": {"tenant": {"x": 1}}},
    ],
)
def test_values_of_the_wrong_type_raise(arguments: dict[str, Any]) -> None:
    with pytest.raises(InvalidHeaderArgument, match=r"expected|beyond"):
        header_values(_PARAMS, arguments)


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?" + base64.b64encode(b"line1\nline2").decode() + "?="),
        ("=?base64?SGVsbG8=?=", "=?base64?" + base64.b64encode(b"=?base64?SGVsbG8=?=").decode() + "?="),
        ("us west 1", "us west 1"),
        ("", ""),
    ],
)
def test_values_are_encoded(value: str, header: str) -> None:
    assert header_values(_PARAMS, {"region": value}) == {"Mcp-Param-Region": header}


# --- filter_tools -----------------------------------------------------------------------------------------------


def test_filter_tools_keeps_valid_warns_once_per_invalid() -> None:
    tools: list[dict[str, Any]] = [
        {"name": "plain", "inputSchema": {"type": "object"}},
        {"name": "bad1", "inputSchema": _schema(s=_prop("number", "Score"))},
        {"name": "good", "inputSchema": _schema(r=_prop("string", "Region"))},
        {"name": "bad2", "inputSchema": _schema(a=_prop("string", "A"), b=_prop("string", "a"))},
    ]
    warnings: list[str] = []
    kept, params = filter_tools(tools, lambda t: t["inputSchema"], lambda t: t["name"], warnings.append)
    assert [t["name"] for t in kept] == ["plain", "good"]
    assert params == {"plain": (), "good": (HeaderParam("Region", ("r",), "string"),)}
    assert len(warnings) == 2
    assert "'bad1'" in warnings[0]
    assert "'number'" in warnings[0]
    assert "'bad2'" in warnings[1]
    assert "repeats" in warnings[1]


# --- the conformance suite's scenarios --------------------------------------------------------------------------

# http-invalid-tool-headers: tools/list as served by the scenario; only valid_tool may be called.
_INVALID_SCENARIO = [
    ("valid_tool", _schema(region={"type": "string", "x-mcp-header": "Region"})),
    ("invalid_empty_header", _schema(value={"type": "string", "x-mcp-header": ""})),
    ("invalid_object_header", _schema(data={"type": "object", "x-mcp-header": "Data"})),
    ("invalid_array_header", _schema(items={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"})),
    ("invalid_null_header", _schema(nil={"type": "null", "x-mcp-header": "Nil"})),
    ("invalid_number_header", _schema(score={"type": "number", "x-mcp-header": "Score"})),
    (
        "invalid_duplicate_same_case",
        _schema(
            field1={"type": "string", "x-mcp-header": "Region"}, field2={"type": "string", "x-mcp-header": "Region"}
        ),
    ),
    (
        "invalid_duplicate_diff_case",
        _schema(
            field1={"type": "string", "x-mcp-header": "MyField"}, field2={"type": "string", "x-mcp-header": "myfield"}
        ),
    ),
    ("invalid_space_in_name", _schema(value={"type": "string", "x-mcp-header": "My Region"})),
    ("invalid_colon_in_name", _schema(value={"type": "string", "x-mcp-header": "Region:Primary"})),
    ("invalid_non_ascii_name", _schema(value={"type": "string", "x-mcp-header": "Région"})),
    ("invalid_control_char_name", _schema(value={"type": "string", "x-mcp-header": "Region\t1"})),
]


def test_conformance_invalid_tool_headers_scenario() -> None:
    warnings: list[str] = []
    kept, params = filter_tools(_INVALID_SCENARIO, lambda t: t[1], lambda t: t[0], warnings.append)
    assert [name for name, _ in kept] == ["valid_tool"]
    assert params == {"valid_tool": (HeaderParam("Region", ("region",), "string"),)}
    assert len(warnings) == len(_INVALID_SCENARIO) - 1
    for (name, _), warning in zip(_INVALID_SCENARIO[1:], warnings, strict=True):
        assert f"{name!r}" in warning


_CUSTOM_SCHEMA = _schema(
    region={"type": "string", "x-mcp-header": "Region"},
    priority={"type": "integer", "x-mcp-header": "Priority"},
    verbose={"type": "boolean", "x-mcp-header": "Verbose"},
    debug={"type": "boolean", "x-mcp-header": "Debug"},
    empty_val={"type": "string", "x-mcp-header": "EmptyVal"},
    method_val={"type": "string", "x-mcp-header": "Method"},
    float_val={"type": "number"},
    non_ascii_val={"type": "string", "x-mcp-header": "NonAscii"},
    whitespace_val={"type": "string", "x-mcp-header": "Whitespace"},
    leading_space_val={"type": "string", "x-mcp-header": "LeadingSpace"},
    trailing_space_val={"type": "string", "x-mcp-header": "TrailingSpace"},
    internal_space_val={"type": "string", "x-mcp-header": "InternalSpace"},
    control_char_val={"type": "string", "x-mcp-header": "ControlChar"},
    crlf_val={"type": "string", "x-mcp-header": "CrLf"},
    tab_val={"type": "string", "x-mcp-header": "Tab"},
    query={"type": "string"},
)
_CUSTOM_ARGUMENTS: dict[str, Any] = {
    "region": "us-west1",
    "priority": 42,
    "verbose": False,
    "debug": True,
    "empty_val": "",
    "method_val": "test-method",
    "float_val": 3.14159,
    "non_ascii_val": "Hello, 世界",
    "whitespace_val": " padded ",
    "leading_space_val": " us-west1",
    "trailing_space_val": "us-west1 ",
    "internal_space_val": "us west 1",
    "control_char_val": "line1\nline2",
    "crlf_val": "line1\r\nline2",
    "tab_val": "\tindented",
    "query": "SELECT * FROM users",
}


def _suite_needs_base64(value: str) -> bool:
    """The suite's own test: any character outside 0x20-0x7E (tab included), or leading/trailing whitespace."""
    return any(not " " <= char <= "~" for char in value) or value != value.strip()


def test_conformance_custom_headers_scenario() -> None:
    params = header_params(_CUSTOM_SCHEMA, tool="test_custom_headers")
    headers = header_values(params, _CUSTOM_ARGUMENTS)
    names = {param.path[0]: param.header for param in params}
    assert set(headers) == set(names.values())  # nothing for float_val or query
    assert "Mcp-Param-Method" in headers
    for key, header in names.items():
        body = _CUSTOM_ARGUMENTS[key]
        expected = ("true" if body else "false") if isinstance(body, bool) else str(body)
        sent = headers[header]
        if _suite_needs_base64(expected):
            assert _SENTINEL.fullmatch(sent), (key, sent)
        assert _decode(sent) == expected


def test_conformance_custom_headers_null_scenario() -> None:
    params = header_params(
        _schema(
            region={"type": "string", "x-mcp-header": "Region"},
            priority={"type": "integer", "x-mcp-header": "Priority"},
            verbose={"type": "boolean", "x-mcp-header": "Verbose"},
            query={"type": "string"},
        ),
        tool="test_custom_headers_null",
    )
    headers = header_values(params, {"region": "us-east1", "priority": 1, "verbose": None, "query": "SELECT 1"})
    assert headers == {"Mcp-Param-Region": "us-east1", "Mcp-Param-Priority": "1"}


# --- properties -------------------------------------------------------------------------------------------------

_TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_KINDS: list[str] = ["string", "integer", "boolean"]


def _values(kind: str) -> st.SearchStrategy[Any]:
    if kind == "string":
        return st.text()
    if kind == "integer":
        return st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    return st.booleans()


@st.composite
def _annotated(draw: st.DrawFn) -> tuple[dict[str, Any], list[tuple[str, tuple[str, ...], str]], dict[str, Any]]:
    """A schema with unique annotations at distinct nested paths, what they are, and matching arguments."""
    names = draw(st.lists(st.text(_TCHAR, min_size=1, max_size=12), max_size=6, unique_by=str.lower))
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    arguments: dict[str, Any] = {}
    expected: list[tuple[str, tuple[str, ...], str]] = []
    for index, name in enumerate(names):
        path = (f"p{index}", *draw(st.lists(st.text(max_size=5), max_size=3)))
        kind = draw(st.sampled_from(_KINDS))
        declared: Any = draw(st.sampled_from([kind, [kind, "null"], ["null", kind]]))
        node, args = schema, arguments
        for key in path[:-1]:
            node = node["properties"].setdefault(key, {"type": "object", "properties": {}})
            args = args.setdefault(key, {})
        node["properties"][path[-1]] = {"type": declared, "x-mcp-header": name, "description": "d"}
        present = draw(st.sampled_from(["value", "null", "absent"]))
        if present == "value":
            args[path[-1]] = draw(_values(kind))
        elif present == "null":
            args[path[-1]] = None
        expected.append((name, path, kind))
    return schema, expected, arguments


def _field_value(value: str) -> bool:
    """An RFC 9110 field value that needs no quoting: visible ASCII, SP/HTAB only inside, or empty."""
    return all(char == "\t" or " " <= char <= "~" for char in value) and value == value.strip(" \t")


@given(_annotated())
def test_valid_params_and_matching_arguments_never_raise(
    case: tuple[dict[str, Any], list[tuple[str, tuple[str, ...], str]], dict[str, Any]],
) -> None:
    schema, expected, arguments = case
    params = header_params(schema, tool="t")
    assert [(p.name, p.path, p.type) for p in params] == expected
    headers = header_values(params, arguments)
    assert len(headers) <= len(params)
    for header, value in headers.items():
        assert header.startswith("Mcp-Param-")
        assert re.fullmatch(r"Mcp-Param-[!#$%&'*+\-.^_`|~0-9A-Za-z]+", header)
        assert _field_value(value)
    for param in params:
        node: Any = arguments
        for key in param.path:
            node = node.get(key) if isinstance(node, dict) else None
        assert (param.header in headers) == (node is not None)
        if node is not None:
            text = ("true" if node else "false") if isinstance(node, bool) else str(node)
            assert _decode(headers[param.header]) == text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.sampled_from(["string", "x-mcp-header"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "properties",
                    "items",
                    "anyOf",
                    "$defs",
                    "x-mcp-header",
                    "default",
                    "a",
                    "additionalProperties",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@given(st.dictionaries(st.sampled_from(["type", "properties", "x-mcp-header", "items", "oneOf"]), _JSON, max_size=4))
def test_arbitrary_json_schemas_only_ever_raise_invalid_tool_headers(schema: dict[str, Any]) -> None:
    reason = None
    params: tuple[HeaderParam, ...] = ()
    try:
        params = header_params(schema, tool="t")
    except InvalidToolHeaders as error:
        reason = error.reason
    assert reason is None or reason
    assert len({p.name.lower() for p in params}) == len(params)
    assert all(p.path for p in params)
