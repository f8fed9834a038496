"""``x-mcp-header``: tool arguments mirrored into ``Mcp-Param-*`` headers (2026-07-28, Streamable HTTP).

A tool's ``inputSchema`` may annotate a property with ``"x-mcp-header": "<Name>"``. On ``tools/call`` over
Streamable HTTP the client then sends ``Mcp-Param-<Name>: <encoded value>`` for each annotated property whose
argument is present and not null, so that gateways can route on it without parsing the body.

This module is pure: :func:`header_params` validates a schema's annotations once (per ``tools/list``) and
precomputes where each value lives; :func:`header_values` runs per call; :func:`filter_tools` applies the spec's
"the client **MUST** exclude the invalid tool from the result of ``tools/list``" rule to a listing.

Rules applied (a tool breaking any of them is invalid as a whole):

* The annotation value is a string, non-empty, free of control characters (CR, LF, TAB, ...), and an RFC 9110
  token (``1*tchar``: letters, digits and ``!#$%&'*+-.^_`|~``).
* Names are unique within the schema, compared case-insensitively.
* The annotated property declares ``"type"`` itself, as one of ``"string"``, ``"integer"``, ``"boolean"``. A list
  of types is accepted only when it is exactly one of those three plus, optionally, ``"null"`` (e.g.
  ``["string", "null"]``); ``"number"``, ``"object"``, ``"array"``, ``"null"`` alone, a missing ``"type"``
  (the type is not inferred from ``enum``/``const`` nor looked up through ``$ref``) are all invalid.
* The annotated property is *statically reachable*: reached from the root through ``properties`` keys only.
  An annotation on the root itself, or in any subschema reached through another applicator (``items``,
  ``prefixItems``, ``additionalProperties``, ``patternProperties``, ``allOf``/``anyOf``/``oneOf``/``not``,
  ``if``/``then``/``else``, ``$defs``/``definitions``, ``dependentSchemas``, ...), makes the tool invalid.
  ``$ref`` is never followed (its target, when local, is found by walking ``$defs``). Instance data
  (``default``, ``examples``, ``const``, ``enum``) and unknown keywords are not schema positions and are not
  searched, so e.g. a ``default`` object containing an ``"x-mcp-header"`` key is not an annotation.

Values: the argument at the property's exact path (absent, null, or under a non-object → no header); strings as
is, integers in decimal (``-(2**53-1)`` to ``2**53-1``; an integral float such as ``3.0`` counts as an integer, as
in JSON Schema), booleans ``true``/``false``; then :func:`encode_header_value` (``=?base64?...?=`` when needed).
An argument whose type does not match the annotated type, or an integer out of range, raises
:class:`InvalidHeaderArgument`: the call does not match the tool's schema and no correct header exists for it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias, TypeVar

from mcp_client.protocol.header_values import encode_header_value

__all__ = [
    "ANNOTATION",
    "HEADER_PREFIX",
    "MAX_SAFE_INTEGER",
    "HeaderParam",
    "InvalidHeaderArgument",
    "InvalidToolHeaders",
    "filter_tools",
    "header_params",
    "header_values",
]

T = TypeVar("T")
HeaderType = Literal["string", "integer", "boolean"]
_Link: TypeAlias = "tuple[_Link, str] | None"
"""A key path as a linked list (parent, last key), so walking a deep schema costs O(depth), not O(depth**2)."""

ANNOTATION: Final = "x-mcp-header"
"""The JSON Schema annotation keyword naming the header."""
HEADER_PREFIX: Final = "Mcp-Param-"
"""Prefix of every header built from an annotation."""
MAX_SAFE_INTEGER: Final = 2**53 - 1
"""Largest integer magnitude an annotated integer argument may have (exact in IEEE 754 doubles)."""

_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_TYPES: Final[frozenset[str]] = frozenset({"string", "integer", "boolean"})

# JSON Schema applicators whose values are schema positions, by value shape. ``properties`` is the only one that
# keeps the static chain; crossing any of these ends it. ``items`` may also be a list (draft-07 tuple form) and
# ``dependencies`` (draft-07) maps to schemas or to lists of names; non-object entries are simply not schemas.
_SINGLE: Final[frozenset[str]] = frozenset(
    {
        "items",
        "additionalItems",
        "contains",
        "unevaluatedItems",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_LIST: Final[frozenset[str]] = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP: Final[frozenset[str]] = frozenset(
    {"patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
)


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """One valid ``x-mcp-header`` annotation of a tool.

    ``name`` is the annotation value as declared (case kept), ``path`` the chain of ``properties`` keys from the
    schema root to the property (never empty), ``type`` the property's JSON type.
    """

    name: str
    path: tuple[str, ...]
    type: HeaderType
    header: str = field(init=False, repr=False, compare=False)
    """``Mcp-Param-<name>``, precomputed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "header", HEADER_PREFIX + self.name)


class InvalidToolHeaders(ValueError):
    """A tool's ``x-mcp-header`` annotations break the spec's rules; the tool must be left out of ``tools/list``."""

    tool: str
    reason: str

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"tool {tool!r} has an invalid x-mcp-header annotation: {reason}")
        self.tool = tool
        self.reason = reason


class InvalidHeaderArgument(ValueError):
    """An argument mirrored into an ``Mcp-Param-*`` header has no valid header form (wrong type, out of range).

    The call does not match the tool's ``inputSchema``; callers turn this into a local error instead of sending.
    """

    param: HeaderParam
    reason: str

    def __init__(self, param: HeaderParam, reason: str) -> None:
        super().__init__(f"argument {'.'.join(param.path)!r} (header {param.header}): {reason}")
        self.param = param
        self.reason = reason


def header_params(input_schema: Mapping[str, Any], *, tool: str) -> tuple[HeaderParam, ...]:
    """The ``x-mcp-header`` annotations of ``input_schema``, in schema order; raises :class:`InvalidToolHeaders`.

    ``tool`` only names the tool in the exception. A schema that is not a mapping has no annotations.
    """
    if not isinstance(input_schema, Mapping):
        return ()
    found: list[HeaderParam] = []
    seen: dict[str, str] = {}  # lower-cased name -> location of its first use
    ancestors: set[int] = set()
    # Depth-first, iterative (no recursion limit), in document order. An entry is either a schema position to
    # enter, (node, location from the root, chain), or None: leave the innermost position entered. The chain is the
    # `properties` keys from the root boxed in a 1-tuple (the root's is `(None,)`), or None once the position is
    # not statically reachable.
    stack: list[tuple[Any, _Link, tuple[_Link] | None] | None] = [(input_schema, None, (None,))]
    entered: list[int] = []
    while stack:
        entry = stack.pop()
        if entry is None:
            ancestors.discard(entered.pop())
            continue
        node, location, chain = entry
        if not isinstance(node, Mapping):
            continue
        if id(node) in ancestors:
            raise InvalidToolHeaders(tool, f"the schema is cyclic at {_pointer(location)}")
        ancestors.add(id(node))
        entered.append(id(node))
        stack.append(None)
        if ANNOTATION in node:
            param = _check(node, location, chain, tool)
            first = seen.get(param.name.lower())
            if first is not None:
                raise InvalidToolHeaders(
                    tool, f"{ANNOTATION} {param.name!r} at {_pointer(location)} repeats the name used at {first}"
                )
            seen[param.name.lower()] = _pointer(location)
            found.append(param)
        children: list[tuple[Any, _Link, tuple[_Link] | None]] = []
        for key, value in node.items():
            here = (location, key)
            if key == "properties" and isinstance(value, Mapping):
                for name, sub in value.items():
                    children.append((sub, (here, name), None if chain is None else ((chain[0], name),)))
            elif key in _SINGLE:
                if isinstance(value, list):
                    children.extend((sub, (here, str(i)), None) for i, sub in enumerate(value))
                else:
                    children.append((value, here, None))
            elif key in _LIST and isinstance(value, list):
                children.extend((sub, (here, str(i)), None) for i, sub in enumerate(value))
            elif key in _MAP and isinstance(value, Mapping):
                children.extend((sub, (here, name), None) for name, sub in value.items())
        stack.extend(reversed(children))
    return tuple(found)


def header_values(params: tuple[HeaderParam, ...], arguments: Mapping[str, Any] | None) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers of one ``tools/call``: ``{"Mcp-Param-Region": "us-west1", ...}``.

    Values are encoded (:func:`encode_header_value`); a header is left out when its argument is absent or null.
    Raises :class:`InvalidHeaderArgument` when an argument's type does not match its annotation or an integer is
    beyond +/-(2**53-1).
    """
    headers: dict[str, str] = {}
    if not params or not isinstance(arguments, Mapping):
        return headers
    for param in params:
        value: Any = arguments
        for key in param.path:
            if not isinstance(value, Mapping):
                value = None
                break
            value = value.get(key)
        if value is None:
            continue
        headers[param.header] = _render(param, value)
    return headers


def filter_tools(
    tools: Sequence[T],
    schema_of: Callable[[T], Mapping[str, Any]],
    name_of: Callable[[T], str],
    warn: Callable[[str], None],
) -> tuple[list[T], dict[str, tuple[HeaderParam, ...]]]:
    """Split a ``tools/list`` page: the valid tools (order kept) and the header params of each, by tool name.

    Each invalid tool is left out and ``warn`` is called once for it with a message naming the tool and the
    reason. Every kept tool has an entry in the mapping (an empty tuple when it has no annotations).
    """
    kept: list[T] = []
    params: dict[str, tuple[HeaderParam, ...]] = {}
    for tool in tools:
        name = name_of(tool)
        try:
            found = header_params(schema_of(tool), tool=name)
        except InvalidToolHeaders as error:
            warn(f"excluding tool {name!r} from tools/list: invalid {ANNOTATION}: {error.reason}")
            continue
        kept.append(tool)
        params[name] = found
    return kept, params


def _check(node: Mapping[str, Any], location: _Link, chain: tuple[_Link] | None, tool: str) -> HeaderParam:
    """The annotation at ``node`` as a :class:`HeaderParam`, or :class:`InvalidToolHeaders` saying why not."""
    where = _pointer(location)
    name = node[ANNOTATION]
    if not isinstance(name, str):
        raise InvalidToolHeaders(tool, f"{ANNOTATION} at {where} is a {type(name).__name__}, not a string")
    if not name:
        raise InvalidToolHeaders(tool, f"{ANNOTATION} at {where} is empty")
    if _CONTROL.search(name):
        raise InvalidToolHeaders(tool, f"{ANNOTATION} {name!r} at {where} contains a control character")
    if _TOKEN.fullmatch(name) is None:
        raise InvalidToolHeaders(tool, f"{ANNOTATION} {name!r} at {where} is not an RFC 9110 token")
    path = None if chain is None else _keys(chain[0])
    if not path:
        raise InvalidToolHeaders(
            tool,
            f"{ANNOTATION} {name!r} at {where} is on the schema root"
            if path is not None
            else f"{ANNOTATION} {name!r} at {where} is not reachable from the root through 'properties' alone",
        )
    kind = _header_type(node.get("type"))
    if kind is None:
        raise InvalidToolHeaders(
            tool,
            f"{ANNOTATION} {name!r} at {where} is on a property of type {_show(node.get('type'))}; "
            "only 'string', 'integer' or 'boolean' (optionally with 'null') may carry it",
        )
    return HeaderParam(name, path, kind)


def _header_type(declared: Any) -> HeaderType | None:
    """``declared`` (a schema's ``"type"``) as a header type: one of the three, alone or with ``"null"``."""
    if isinstance(declared, list):
        if not all(isinstance(item, str) for item in declared):
            return None
        others = [item for item in declared if item != "null"]
        if len(others) != 1:
            return None
        declared = others[0]
    if declared == "string":
        return "string"
    if declared == "integer":
        return "integer"
    if declared == "boolean":
        return "boolean"
    return None


def _render(param: HeaderParam, value: Any) -> str:
    """``value`` as the header value for ``param``, encoded.

    Only strings go through :func:`encode_header_value`: a decimal integer or ``true``/``false`` is always a safe
    plain value (visible ASCII, no whitespace, not sentinel-shaped), and skipping the check keeps calls cheap.
    """
    if param.type == "string":
        if isinstance(value, str):
            return encode_header_value(value)
    elif param.type == "boolean":
        if isinstance(value, bool):
            return "true" if value else "false"
    elif isinstance(value, int) and not isinstance(value, bool):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return str(value)
        raise InvalidHeaderArgument(param, f"integer {_show(value)} is beyond +/-(2**53-1)")
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return str(int(value))
        raise InvalidHeaderArgument(param, f"integer {value!r} is beyond +/-(2**53-1)")
    raise InvalidHeaderArgument(param, f"expected {param.type}, got {type(value).__name__}")


def _show(value: Any) -> str:
    """A short ``repr`` for messages; total (a huge ``int`` has no ``repr`` past ``sys.get_int_max_str_digits``)."""
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__}>"
    return text if len(text) <= 40 else text[:37] + "..."


def _keys(link: _Link) -> tuple[str, ...]:
    """The keys of ``link``, from the root."""
    keys: list[str] = []
    while link is not None:
        link, key = link
        keys.append(key)
    return tuple(reversed(keys))


def _pointer(location: _Link) -> str:
    """``location`` as a JSON Pointer (``/properties/a``), for messages; ``/`` for the root."""
    keys = _keys(location)
    if not keys:
        return "/"
    return "".join("/" + str(key).replace("~", "~0").replace("/", "~1") for key in keys)
