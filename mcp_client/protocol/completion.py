"""Argument completion (``completion/complete``): what may be completed, and the request's params. Pure.

A host asks the server for the values an argument of a prompt (``PromptReference``) or of a resource template
(``ResourceTemplateReference``) may take, given what the user typed so far and, optionally, the arguments already
filled in. The answer is an ``mcp_types.Completion`` (at most 100 values, ``total``, ``has_more``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import mcp_types

__all__ = ["CompletionRef", "completion_params"]

CompletionRef: TypeAlias = mcp_types.PromptReference | mcp_types.ResourceTemplateReference
"""What an argument belongs to: a prompt (by name) or a resource template (by URI template)."""


def completion_params(
    ref: CompletionRef, argument_name: str, value: str, context: Mapping[str, str] | None
) -> dict[str, Any]:
    """The params of a ``completion/complete`` request.

    Raises:
        TypeError: ``ref`` is not a prompt or resource template reference, or the strings are not strings.
    """
    if not isinstance(ref, mcp_types.PromptReference | mcp_types.ResourceTemplateReference):
        raise TypeError(f"ref must be an mcp_types.PromptReference or ResourceTemplateReference, not {ref!r}")
    if not isinstance(argument_name, str) or not isinstance(value, str):
        raise TypeError("argument_name and value must be strings")
    params: dict[str, Any] = {
        "ref": ref.model_dump(by_alias=True, exclude_none=True, mode="json"),
        "argument": {"name": argument_name, "value": value},
    }
    if context is not None:
        arguments = dict(context)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in arguments.items()):
            raise TypeError("context must map argument names to string values")
        params["context"] = {"arguments": arguments}
    return params
