"""``${VAR}`` and ``${VAR:-default}`` in an ``mcp.json``: replaced from the environment, unset ones collected.

Used by :mod:`mcp_client.config` on the validated entries (to expand them) and on the raw entries of a file that
did not validate (so that one report lists every problem, unset variables included). Imports nothing of the
package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

__all__ = ["EXPANDED_FIELDS", "expand", "raw_values"]

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

EXPANDED_FIELDS = ("command", "args", "env", "cwd", "url", "headers")
"""The fields of a server entry whose strings are expanded."""


def expand(value: str, environ: Mapping[str, str], unset: list[str]) -> str:
    """``value`` with its references replaced; the name of each one without a value is appended to ``unset``.

    ``${VAR:-default}`` takes ``default`` when ``VAR`` is unset or empty; ``${VAR}`` takes ``VAR`` even if empty.
    """

    def substitute(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        found = environ.get(variable)
        if found is not None and (found or default is None):
            return found
        if default is not None:
            return default
        unset.append(variable)
        return ""

    return _REFERENCE.sub(substitute, value)


def raw_values(entry: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    """The expandable strings of a raw (not validated) server entry, as ``(path within the entry, value)``."""
    for key in ("command", "cwd", "url"):
        value = entry.get(key)
        if isinstance(value, str):
            yield key, value
    args = entry.get("args")
    if isinstance(args, list):
        yield from ((f"args.{i}", arg) for i, arg in enumerate(args) if isinstance(arg, str))
    for table in ("env", "headers"):
        mapping = entry.get(table)
        if isinstance(mapping, Mapping):
            yield from ((f"{table}.{key}", value) for key, value in mapping.items() if isinstance(value, str))
