"""Structured output checked against the tool's ``outputSchema``, at a bounded cost. No I/O.

The spec: a tool with an ``outputSchema`` must return ``structuredContent`` that conforms, and clients SHOULD
validate it. Schemas are JSON Schema, 2020-12 unless their ``$schema`` names another dialect, and a client MUST
NOT dereference a ``$ref`` that points at the network: ours resolve only within the schema itself (a registry
that retrieves nothing), so such a ``$ref`` is reported as an unusable schema, never fetched.

Cost: each (tool, schema) is checked and compiled once and kept (least recently used out past
:data:`CACHE_LIMIT`); a result is validated until its first error, not for every error it has. Format keywords
are annotations, as 2020-12 says, so no format checker runs. Results with ``isError`` are not checked.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Final

import jsonschema
import jsonschema.exceptions
import mcp_types
import referencing
import referencing.exceptions
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from mcp_client.errors import StructuredOutputError

__all__ = ["CACHE_LIMIT", "OutputValidator"]

CACHE_LIMIT: Final = 256
"""Compiled validators kept per client."""


def _retrieve_nothing(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]  # (an attrs class)


_LOCAL_ONLY: Final = referencing.Registry(retrieve=_retrieve_nothing)  # type: ignore[call-arg]  # (attrs)


class OutputValidator:
    """The compiled validators of one client, by tool and schema."""

    def __init__(self, limit: int = CACHE_LIMIT) -> None:
        self._validators: OrderedDict[tuple[str, str], Validator | StructuredOutputError] = OrderedDict()
        self._limit = limit
        self.compiled = 0
        """How many schemas have been compiled (a cached one is not compiled again)."""

    def check(self, tool: str, schema: dict[str, Any] | None, result: mcp_types.CallToolResult) -> None:
        """Raise :class:`StructuredOutputError` unless ``result`` conforms to ``schema`` (``None``: no check)."""
        if schema is None or result.is_error:
            return
        if result.structured_content is None:
            raise StructuredOutputError(
                f"tool {tool!r} declares an outputSchema but returned no structuredContent",
                result=result,
                tool=tool,
                method="tools/call",
            )
        validator = self._validator(tool, schema)
        if isinstance(validator, StructuredOutputError):
            raise StructuredOutputError(validator.message, result=result, tool=tool, method="tools/call")
        try:
            error = next(iter(validator.iter_errors(result.structured_content)), None)
        except referencing.exceptions.Unresolvable as exc:
            raise StructuredOutputError(
                f"tool {tool!r}: its outputSchema has a $ref that does not resolve within it ({exc}); "
                "references to the network are never fetched",
                result=result,
                tool=tool,
                method="tools/call",
            ) from None
        if error is not None:
            path = tuple(error.absolute_path)
            where = "/".join(str(part) for part in path) or "the top"
            raise StructuredOutputError(
                f"tool {tool!r}: structuredContent does not match its outputSchema at {where}: {error.message}",
                result=result,
                tool=tool,
                path=path,
                method="tools/call",
            )

    def _validator(self, tool: str, schema: dict[str, Any]) -> Validator | StructuredOutputError:
        key = (tool, json.dumps(schema, sort_keys=True, default=str))
        found = self._validators.get(key)
        if found is not None:
            self._validators.move_to_end(key)
            return found
        self.compiled += 1
        compiled: Validator | StructuredOutputError
        try:
            cls = validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            compiled = cls(schema, registry=_LOCAL_ONLY)
        except jsonschema.exceptions.SchemaError as exc:
            compiled = StructuredOutputError(
                f"tool {tool!r}: its outputSchema is not a valid JSON Schema: {exc.message}", result=None, tool=tool
            )
        self._validators[key] = compiled
        if len(self._validators) > self._limit:
            self._validators.popitem(last=False)
        return compiled
