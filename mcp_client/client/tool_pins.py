"""Tool definitions pinned against silent change: what a client first saw of each tool, and what changed since.

A server can change a tool's description or schema between two listings (a "rug pull": the tool a host reviewed
is not the tool the model now calls). :class:`ToolPins` remembers each tool's definition from the first listing
that showed it, and compares every later listing with it. A definition that differs is reported once per new form
(a :class:`~mcp_client.ToolDefinitionChanged` event); with ``Client(pin_tools=True)`` a call to that tool raises
:class:`~mcp_client.ToolChanged` before anything is sent, until the host accepts the change. A tool first seen later
is new, not changed (unless the pins are *strict*, below); a tool that goes back to its pinned form is no longer
changed.

The definition is every field of the tool the client keeps (:data:`PINNED_FIELDS`): what a model is told (name,
title, description, schemas, annotations), what a host shows (icons, ``_meta``, which can name a UI to render) and
what changes how a call runs (``execution``). Pinning less would leave a field a server could change unseen.

A listing that names one tool twice is refused whole (:class:`DuplicateToolName`): two forms of one tool leave the
host unable to tell which it reviewed and which the server runs, so nothing of that listing is pinned, cleared or
accepted. Strict pins (``ToolPins.load(saved, strict=True)``) are the host's reviewed set: a tool they do not name
is not pinned when first listed but reported (a change from nothing), and with ``pin_tools=True`` a call to it
raises :class:`ToolNotReviewed` until the host accepts it.

Pins survive restarts as JSON (:meth:`ToolPins.export` / :meth:`ToolPins.load`), a stable form::

    {"version": 2,
     "tools": {"search": {"fingerprint": "sha256:<64 hex digits>",
                          "definition": {"name": "search", "description": "...", "inputSchema": {...}}}}}

The fingerprint is the SHA-256 of the definition's canonical JSON (keys sorted, no spaces, UTF-8); the definition
is kept beside it so a change can be shown field by field. Version 1 files (written when only
:data:`VERSION_1_FIELDS` were pinned) still load: each pin covers what was reviewed then, so a tool that now shows a
field those pins never covered (a title, icons...) is a change the host must review; a tool that shows nothing more
is unchanged. Pure: no I/O; touches the errors, events and mcp-types.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types

from mcp_client.errors import ProtocolError, ToolChanged
from mcp_client.events import ToolDefinitionChanged

__all__ = [
    "PINNED_FIELDS",
    "VERSION_1_FIELDS",
    "DuplicateToolName",
    "ToolNotReviewed",
    "ToolPins",
    "fingerprint",
    "tool_definition",
]

PINNED_FIELDS: tuple[str, ...] = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
    "icons",
    "_meta",
)
"""The fields of a tool that are pinned, in their wire spelling: every field of ``mcp_types.Tool``."""

VERSION_1_FIELDS: tuple[str, ...] = ("name", "description", "inputSchema", "outputSchema", "annotations")
"""The fields a version 1 pin file covers (``title``, ``icons``, ``_meta`` and ``execution`` were not pinned)."""

_FORMAT_VERSION = 2
_SHOWN_NAMES = 5
_SHOWN_NAME_LENGTH = 100


class DuplicateToolName(ProtocolError):
    """A ``tools/list`` listing names one tool more than once: it is refused whole, and the pins stay as they were
    (nothing pinned, no change cleared)."""

    def __init__(self, message: str, *, names: tuple[str, ...], **context: Any) -> None:
        super().__init__(message, **context)
        self.names = names
        """The names listed more than once."""


class ToolNotReviewed(ToolChanged):
    """Strict pins (``ToolPins.load(saved, strict=True)``) and ``pin_tools=True``: the tool is not among the
    reviewed pins, so the call was refused before anything was sent; it goes through once the host accepts it
    (``client.accept_tool_change(name)``)."""

    outcome = "tool_not_reviewed"


def tool_definition(tool: mcp_types.Tool) -> dict[str, Any]:
    """The pinned part of ``tool`` as plain JSON, in its wire spelling; fields the server left out are absent."""
    wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {key: wire[key] for key in PINNED_FIELDS if key in wire}


def fingerprint(definition: Mapping[str, Any]) -> str:
    """``sha256:`` and the hex SHA-256 of ``definition``'s canonical JSON (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()  # (a lone surrogate too)


def _differing(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(key for key in PINNED_FIELDS if before.get(key) != after.get(key))


def _shown(names: Iterable[str]) -> str:
    """A few server-chosen names for an error's text: quoted (control characters escaped), each cut short."""
    listed = list(names)
    shown = ", ".join(repr(name[:_SHOWN_NAME_LENGTH]) for name in listed[:_SHOWN_NAMES])
    return shown + (f" and {len(listed) - _SHOWN_NAMES} more" if len(listed) > _SHOWN_NAMES else "")


class ToolPins:
    """The pinned definition of each tool of one server, and the tools whose listing now differs from it.

    ``client.tool_pins`` is one; give ``Client(tool_pins=ToolPins.load(saved))`` the pins a host reviewed.

    Args:
        strict: The pins are the whole reviewed set: a tool they do not name is not pinned when first listed, but
            reported as a change from nothing, and with ``pin_tools=True`` calls to it raise
            :class:`ToolNotReviewed` until the host accepts it.
    """

    def __init__(self, *, strict: bool = False) -> None:
        if not isinstance(strict, bool):
            raise TypeError(f"strict must be True or False, not {type(strict).__name__}")
        self.strict = strict
        self._pinned: dict[str, tuple[str, dict[str, Any]]] = {}
        self._changed: dict[str, tuple[str, dict[str, Any]]] = {}  # the listed form that differs from the pin
        self._version_1: set[str] = set()  # pins loaded from a version 1 file and not accepted since

    # -- what a listing shows ---------------------------------------------------------------------------------

    def observe(self, tools: Iterable[mcp_types.Tool]) -> list[ToolDefinitionChanged]:
        """Compare a listing with the pins: pin new tools (unless strict); return a change for each tool whose
        definition differs from its pin in a form not reported before (a tool back in its pinned form is no longer
        changed).

        Raises:
            DuplicateToolName: The listing names a tool twice; nothing of it was taken.
        """
        listed = list(tools)
        twice = [name for name, count in Counter(tool.name for tool in listed).items() if count > 1]
        if twice:
            raise DuplicateToolName(
                f"the server's tool listing names {_shown(twice)} more than once: it was refused, and the tool "
                "pins stay as they were",
                names=tuple(twice),
                method="tools/list",
            )
        changes: list[ToolDefinitionChanged] = []
        for tool in listed:
            definition = tool_definition(tool)
            digest = fingerprint(definition)
            pinned = self._pinned.get(tool.name)
            if pinned is None and not self.strict:
                self._pinned[tool.name] = (digest, definition)
                continue
            if pinned is not None and pinned[0] == digest:
                self._changed.pop(tool.name, None)
                continue
            reported = self._changed.get(tool.name)
            if reported is not None and reported[0] == digest:
                continue
            self._changed[tool.name] = (digest, definition)
            before, before_digest = pinned[1] if pinned else {}, pinned[0] if pinned else ""
            changed = _differing(before, definition)
            changes.append(ToolDefinitionChanged(tool.name, changed, before, definition, before_digest, digest))
        return changes

    def check(self, name: str) -> None:
        """Raise :class:`~mcp_client.ToolChanged` if ``name``'s listed definition differs from its pin, and
        :class:`ToolNotReviewed` (a ``ToolChanged``) if the pins are strict and do not name it."""
        changed = self._changed.get(name)
        pinned = self._pinned.get(name)
        if pinned is None and self.strict:
            fields = _differing({}, changed[1]) if changed is not None else ()
            raise ToolNotReviewed(
                f"the tool {name!r} is not among the reviewed tool pins (strict): the host must review and accept "
                "it before it is called",
                name=name,
                changed=fields,
            )
        if changed is None or pinned is None:
            return
        fields = _differing(pinned[1], changed[1])
        unpinned_then = [key for key in fields if key not in VERSION_1_FIELDS]
        note = (
            f"; its pin was saved by an earlier version that did not pin {', '.join(unpinned_then)}, so the tool "
            "needs a new review"
            if name in self._version_1 and unpinned_then
            else ""
        )
        raise ToolChanged(
            f"the definition of the tool {name!r} changed since it was pinned ({', '.join(fields)}){note}; "
            "the host must accept the change before it is called",
            name=name,
            changed=fields,
        )

    def accept(self, name: str) -> None:
        """Pin ``name``'s definition as last listed: calls to it go through again.

        Raises:
            KeyError: no listing showed a tool of that name.
        """
        if name not in self._pinned and name not in self._changed:
            raise KeyError(f"no tool {name!r} has been listed, so there is no change of it to accept")
        changed = self._changed.pop(name, None)
        if changed is not None:
            self._pinned[name] = changed
            self._version_1.discard(name)

    # -- queries ----------------------------------------------------------------------------------------------

    @property
    def changed(self) -> tuple[str, ...]:
        """The tools whose listed definition differs from their pin (or, strict, that no pin names) and was not
        accepted, in the order seen."""
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
    def load(cls, data: Mapping[str, Any] | str, *, strict: bool = False) -> ToolPins:
        """Pins from :meth:`export`'s form (the data, or its JSON text), version 2 or 1.

        Args:
            strict: Refuse tools these pins do not name (see :class:`ToolPins`).

        Raises:
            ValueError: not that form, an unknown version, or a fingerprint that does not match its definition.
        """
        if isinstance(data, str):
            data = json.loads(data)
        version = data.get("version") if isinstance(data, Mapping) else None
        if not isinstance(data, Mapping) or version not in (1, _FORMAT_VERSION) or isinstance(version, bool):
            raise ValueError(f"tool pins must be an object with 'version': {_FORMAT_VERSION} (or 1) and 'tools'")
        tools = data.get("tools")
        if not isinstance(tools, Mapping):
            raise ValueError("tool pins: 'tools' must be an object of tool name to pin")
        pins = cls(strict=strict)
        for name, pin in tools.items():
            definition = pin.get("definition") if isinstance(pin, Mapping) else None
            if not isinstance(definition, Mapping) or definition.get("name") != name:
                raise ValueError(f"tool pins: {name!r} needs a 'definition' object whose 'name' is {name!r}")
            if version == 1:  # (its fingerprint covers only the fields pinned then)
                definition = {key: definition[key] for key in VERSION_1_FIELDS if key in definition}
            if pin.get("fingerprint") != fingerprint(definition):
                raise ValueError(f"tool pins: the fingerprint of {name!r} does not match its definition")
            # Fields this version does not pin (a later one may) are left out: no listing here can show them.
            kept = {key: definition[key] for key in PINNED_FIELDS if key in definition}
            pins._pinned[name] = (fingerprint(kept), json.loads(json.dumps(kept)))
            if version == 1:
                pins._version_1.add(name)
        return pins
