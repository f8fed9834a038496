"""Turning what a server answered into mcp-types models: results, pages of a listing, and a tool call's params.

The client runs each call; these read its result (``resultType`` checked, the model validated; anything off is a
:class:`~mcp_client.ProtocolError`); the cursor walk of a listing is :func:`mcp_client.cache.requests.walk`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import mcp_types
from pydantic import BaseModel, ValidationError

from mcp_client._types import JSONObject
from mcp_client.errors import ProtocolError, ToolError

__all__ = ["idempotent_hint", "parse_result", "tool_params", "tool_result"]

ModelT = TypeVar("ModelT", bound=BaseModel)


def idempotent_hint(hints: mcp_types.ToolAnnotations | None) -> bool:
    """What ``tools/list`` said: True for a tool annotated ``idempotentHint`` or ``readOnlyHint``."""
    return hints is not None and bool(hints.idempotent_hint or hints.read_only_hint)


def tool_params(name: str, arguments: Mapping[str, Any] | None) -> JSONObject:
    """The params of a ``tools/call``: a fresh dict the client owns (hooks may add to it)."""
    params: JSONObject = {"name": name}
    if arguments is not None:
        params["arguments"] = dict(arguments)
    return params


def tool_result(name: str, result: JSONObject, raise_on_error: bool) -> mcp_types.CallToolResult:
    """A ``tools/call`` result as a model; with ``raise_on_error``, an ``isError`` result raises :class:`ToolError`."""
    parsed = _text_result(result) or parse_result("tools/call", result, mcp_types.CallToolResult)
    if raise_on_error and parsed.is_error:
        text = " ".join(block.text for block in parsed.content if isinstance(block, mcp_types.TextContent))
        raise ToolError(f"tool {name!r} failed: {text or 'no details'}", result=parsed, method="tools/call")
    return parsed


_validate_result = mcp_types.CallToolResult.__pydantic_validator__.validate_python
_validate_text = mcp_types.TextContent.__pydantic_validator__.validate_python


def _text_result(result: JSONObject) -> mcp_types.CallToolResult | None:
    """The common result whose content is text blocks only, as the same model :func:`parse_result` makes, at about
    half its cost: each block validated as ``TextContent`` (the one member of the content union a ``"text"`` block
    can be) instead of trying the union's five members. None for anything else, or anything that does not
    validate, so the full path reads it and raises its error."""
    content = result.get("content")
    if type(content) is not list or result.get("resultType") not in (None, "complete"):
        return None
    try:
        blocks: list[mcp_types.ContentBlock] = [
            _validate_text(block) for block in content if type(block) is dict and block.get("type") == "text"
        ]
        if len(blocks) != len(content):
            return None
        parsed: mcp_types.CallToolResult = _validate_result({**result, "content": []})
    except ValidationError:
        return None
    parsed.content = blocks
    return parsed


def parse_result(method: str, result: JSONObject, model: type[ModelT]) -> ModelT:
    """Check ``resultType`` and validate ``result`` as ``model``; anything off is a :class:`ProtocolError`."""
    result_type = result.get("resultType")
    if result_type not in (None, "complete"):  # input rounds were answered by the call runner before this point
        raise ProtocolError(f"{method}: unknown resultType {result_type!r}", method=method)
    try:
        return model.model_validate(result)
    except ValidationError as exc:
        raise ProtocolError(f"{method}: the result is not a valid {model.__name__}: {exc}", method=method) from None
