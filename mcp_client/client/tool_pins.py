"""Tool definitions pinned against silent change: what a client first saw of each tool, and what changed since.

A server can change a tool's description or schema between two listings (a "rug pull": the tool a host reviewed
is not the tool the model now calls). :class:`ToolPins` remembers each tool's definition (name, description,
input and output schema, annotations) from the first listing that showed it, and compares every later listing
with it. A definition that differs is reported once per new form (a :class:`~mcp_client.ToolDefinitionChanged`
event); with ``Client(pin_tools=True)`` a call to that tool raises :class:`~mcp_client.ToolChanged` before
anything is sent, until the host accepts the change. A tool first seen later is new, not changed; a tool that goes
back to its pinned form is no longer changed.

Pins survive restarts as JSON (:meth:`ToolPins.export` / :meth:`ToolPins.load`), a stable form::

    {"version": 1,
     "tools": {"search": {"fingerprint": "sha256:<64 hex digits>",
                          "definition": {"name": "search", "description": "...", "inputSchema": {...}}}}}

The fingerprint is the SHA-256 of the definition's canonical JSON (keys sorted, no spaces, UTF-8); the definition
is kept beside it so a change can be shown field by field. Pure: no I/O; touches the errors, events and mcp-types.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types

from mcp_client.errors import ToolChanged
from mcp_client.events import ToolDefinitionChanged

__all__ = ["PINNED_FIELDS", "ToolPins", "fingerprint", "tool_definition"]

PINNED_FIELDS: tuple[str, ...] = ("name", "description", "inputSchema", "outputSchema", "annotations")
"""The fields of a tool that are pinned, in their wire spelling. Others (``title``, ``icons``, ``_meta``) are not."""

_FORMAT_VERSION = 1


def tool_definition(tool: mcp_types.Tool) -> dict[str, Any]:
    """The pinned part of ``tool`` as plain JSON, in its wire spelling; fields the server left out are absent."""
    wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {key: wire[key] for key in PINNED_FIELDS if key in wire}


def fingerprint(definition: Mapping[str, Any]) -> str:
    """``sha256:`` and the hex SHA-256 of ``definition``'s canonical JSON (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ToolPins:
    """The pinned definition of each tool of one server, and the tools whose listing now differs from it.

    ``client.tool_pins`` is one; give ``Client(tool_pins=ToolPins.load(saved))`` the pins a host reviewed.
    """

    def __init__(self) -> None:
        self._pinned: dict[str, tuple[str, dict[str, Any]]] = {}
        self._changed: dict[str, tuple[str, dict[str, Any]]] = {}  # the listed form that differs from the pin

    # -- what a listing shows ---------------------------------------------------------------------------------

    def observe(self, tools: Iterable[mcp_types.Tool]) -> list[ToolDefinitionChanged]:
        """Compare a listing with the pins: pin new tools; return a change for each tool whose definition differs
        from its pin in a form not reported before (a tool back in its pinned form is no longer changed)."""
        changes: list[ToolDefinitionChanged] = []
        for tool in tools:
            definition = tool_definition(tool)
            digest = fingerprint(definition)
            pinned = self._pinned.get(tool.name)
            if pinned is None:
                self._pinned[tool.name] = (digest, definition)
                continue
            if pinned[0] == digest:
                self._changed.pop(tool.name, None)
                continue
            reported = self._changed.get(tool.name)
            if reported is not None and reported[0] == digest:
                continue
            self._changed[tool.name] = (digest, definition)
            fields = tuple(key for key in PINNED_FIELDS if pinned[1].get(key) != definition.get(key))
            changes.append(ToolDefinitionChanged(tool.name, fields, pinned[1], definition, pinned[0], digest))
        return changes

    def check(self, name: str) -> None:
        """Raise :class:`~mcp_client.ToolChanged` if ``name``'s listed definition differs from its pin."""
        changed = self._changed.get(name)
        if changed is None:
            return
        pinned = self._pinned[name][1]
        fields = tuple(key for key in PINNED_FIELDS if pinned.get(key) != changed[1].get(key))
        raise ToolChanged(
            f"the definition of the tool {name!r} changed since it was pinned ({', '.join(fields)}); "
            "the host must accept the change before it is called",
            name=name,
            changed=fields,
        )

    def accept(self, name: str) -> None:
        """Pin ``name``'s definition as last listed: calls to it go through again.

        Raises:
            KeyError: no listing showed a tool of that name.
        """
        if name not in self._pinned:
            raise KeyError(f"no tool {name!r} has been listed, so there is no change of it to accept")
        changed = self._changed.pop(name, None)
        if changed is not None:
            self._pinned[name] = changed

    # -- queries ----------------------------------------------------------------------------------------------

    @property
    def changed(self) -> tuple[str, ...]:
        """The tools whose listed definition differs from their pin and was not accepted, in the order seen."""
        return tuple(self._changed)

    def pinned(self, name: str) -> dict[str, Any] | None:
        """A copy of the pinned definition of ``name`` (None if no listing showed it)."""
        pinned = self._pinned.get(name)
        return json.loads(json.dumps(pinned[1])) if pinned is not None else None

    def __contains__(self, name: object) -> bool:
        return name in self._pinned

    def __len__(self) -> int:
        return len(self._pinned)

    # -- across restarts --------------------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """The pins as JSON data (``json.dumps`` it), in the stable form of this module's documentation."""
        tools = {name: {"fingerprint": pin[0], "definition": pin[1]} for name, pin in self._pinned.items()}
        exported: dict[str, Any] = json.loads(json.dumps({"version": _FORMAT_VERSION, "tools": tools}))  # (a copy)
        return exported

    @classmethod
    def load(cls, data: Mapping[str, Any] | str) -> ToolPins:
        """Pins from :meth:`export`'s form (the data, or its JSON text).

        Raises:
            ValueError: not that form, an unknown version, or a fingerprint that does not match its definition.
        """
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, Mapping) or data.get("version") != _FORMAT_VERSION:
            raise ValueError(f"tool pins must be an object with 'version': {_FORMAT_VERSION} and 'tools'")
        tools = data.get("tools")
        if not isinstance(tools, Mapping):
            raise ValueError("tool pins: 'tools' must be an object of tool name to pin")
        pins = cls()
        for name, pin in tools.items():
            definition = pin.get("definition") if isinstance(pin, Mapping) else None
            if not isinstance(definition, Mapping) or definition.get("name") != name:
                raise ValueError(f"tool pins: {name!r} needs a 'definition' object whose 'name' is {name!r}")
            definition = {key: definition[key] for key in PINNED_FIELDS if key in definition}
            digest = fingerprint(definition)
            if pin.get("fingerprint") != digest:
                raise ValueError(f"tool pins: the fingerprint of {name!r} does not match its definition")
            pins._pinned[name] = (digest, json.loads(json.dumps(definition)))
        return pins
