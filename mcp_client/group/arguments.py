"""What a :class:`~mcp_client.group.ClientGroup` is given, checked before anything starts: the start mode, the idle
stop, the server names, and the tool pins (per server). Each check raises a clear ``ValueError`` or ``TypeError``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcp_client.client.tool_pins import ToolPins

__all__ = ["check_idle_stop", "check_name", "check_start", "pins_by_server"]


def check_start(mode: object, where: str) -> None:
    """``mode`` is ``"eager"`` or ``"lazy"``; ``where`` names it in the error."""
    if mode not in ("eager", "lazy"):
        raise ValueError(f"{where} must be 'eager' or 'lazy', got {mode!r}")


def check_idle_stop(idle_stop: object) -> None:
    """``idle_stop`` is None or a positive number of seconds."""
    if idle_stop is None:
        return
    if isinstance(idle_stop, bool) or not isinstance(idle_stop, int | float) or not idle_stop > 0:
        raise ValueError(f"idle_stop must be a positive number of seconds or None, got {idle_stop!r}")


def check_name(name: object) -> None:
    """A server name is a non-empty string without ``/`` (tools are addressed as ``server/tool``)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a server name must be a non-empty string, got {name!r}")
    if "/" in name:
        raise ValueError(f"a server name must not contain '/' (tools are addressed as 'server/tool'): {name!r}")


def pins_by_server(given: object, names: Sequence[str]) -> dict[str, ToolPins]:
    """The ``tool_pins`` a group was given, by server name: a mapping of server names to :class:`ToolPins`, or one
    ``ToolPins`` for a group of one server. Pins are keyed by tool name, so one set shared by servers that each
    have a tool of the same name would report each server's tool as a change of the other's.

    Raises:
        TypeError: One ``ToolPins`` for several servers, or a value that is not a ``ToolPins``.
        ValueError: A name that is not a server of the group.
    """
    if given is None:
        return {}
    if isinstance(given, ToolPins):
        if len(names) != 1:
            raise TypeError(
                "a group's tool_pins are per server: give {server name: ToolPins}, since two servers may each have "
                "a tool of the same name"
            )
        return {names[0]: given}
    if not isinstance(given, Mapping):
        raise TypeError(f"tool_pins must be a mapping of server names to ToolPins, not {type(given).__name__}")
    unknown = [name for name in given if name not in names]
    if unknown:
        raise ValueError(f"tool_pins names servers the group does not have: {', '.join(map(repr, unknown))}")
    wrong = [name for name, pins in given.items() if not isinstance(pins, ToolPins)]
    if wrong:
        raise TypeError(f"tool_pins of {', '.join(map(repr, wrong))} must be ToolPins")
    return dict(given)
