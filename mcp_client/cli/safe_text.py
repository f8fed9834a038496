"""Server text on a terminal: printed as text, never as rich markup, with control characters made visible.

Anything a server says (tool names and descriptions, results, progress messages, error messages, its name, the
lines it writes to stderr) may carry rich markup (``[link=…]``, a bare ``[/]`` that would crash the print) or
terminal escapes. :func:`visible` is the package's one escape (:mod:`mcp_client._visible`); :func:`plain` wraps
its result in a rich ``Text``, which is never parsed as markup; :func:`markup` makes it a piece of the CLI's own
markup (escaped, so a ``[`` stays text); :func:`json_text` makes the ``--json`` output as
safe while it stays the same JSON.

rich is imported inside :func:`plain` only, so the CLI can say it is missing instead of failing at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_client._visible import json_text, visible

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["json_text", "markup", "plain", "visible"]


def plain(text: str, style: str = "") -> Text:
    """``text`` made :func:`visible`, as a rich ``Text`` (no markup, no highlighting)."""
    from rich.text import Text

    return Text(visible(text), style=style)


def markup(text: str) -> str:
    """``text`` made :func:`visible` and escaped for rich markup: server text inside the CLI's own markup."""
    from rich.markup import escape

    return escape(visible(text))
