"""Client extensions: what ``Client(extensions=...)`` declares, and the extensions with first-class support.

An extension is named by an identifier (``"io.modelcontextprotocol/skills"``) and carries a settings object.
Declared extensions go into the client's capabilities under ``extensions``: in every request's
``_meta["io.modelcontextprotocol/clientCapabilities"]`` at 2026-07-28, in the ``initialize`` request at
2025-11-25. This module only checks and builds that object; it sends nothing.

* :mod:`mcp_client.extensions.skills`: the skills extension (SEP-2640), reached through ``client.skills``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any, TypeAlias

__all__ = ["SKILLS", "ExtensionsArg", "with_extensions"]

SKILLS = "io.modelcontextprotocol/skills"
"""The identifier of the skills extension (SEP-2640)."""

ExtensionsArg: TypeAlias = Mapping[str, Mapping[str, Any]]
"""What ``Client(extensions=...)`` takes: extension identifier -> its settings (``{}`` for none)."""

# The _meta key grammar of the spec: an optional prefix of dot-separated labels ending in "/", then a name.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_IDENTIFIER = re.compile(rf"^(?:{_LABEL}(?:\.{_LABEL})*/)?{_NAME}$")


def with_extensions(capabilities: Mapping[str, Any], extensions: ExtensionsArg | None) -> dict[str, Any]:
    """``capabilities`` with ``extensions`` declared under ``"extensions"`` (a new dict; the inputs are not touched).

    Raises:
        TypeError: an identifier is not a string, or its settings are not a JSON object.
        ValueError: an identifier does not follow the spec's ``prefix/name`` grammar, or the settings are not JSON.
    """
    declared = dict(capabilities)
    if not extensions:
        return declared
    checked: dict[str, Any] = {}
    for identifier, settings in extensions.items():
        if not isinstance(identifier, str):
            raise TypeError(f"an extension identifier must be a string, not {type(identifier).__name__}")
        if not _IDENTIFIER.match(identifier):
            raise ValueError(f"{identifier!r} is not a valid extension identifier, e.g. {SKILLS!r}")
        if not isinstance(settings, Mapping):
            raise TypeError(f"the settings of extension {identifier!r} must be a mapping (a JSON object), e.g. {{}}")
        try:
            json.dumps(settings, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the settings of extension {identifier!r} are not JSON: {exc}") from None
        checked[identifier] = copy.deepcopy(dict(settings))
    existing = declared.get("extensions")
    declared["extensions"] = {**(existing if isinstance(existing, dict) else {}), **checked}
    return declared
