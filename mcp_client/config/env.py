"""``${VAR}`` and ``${VAR:-default}`` in an ``mcp.json``: replaced from the environment, unset ones collected
(``$${`` writes a literal ``${``).

Used by :mod:`mcp_client.config.load` on the validated entries (to expand them) and on the raw entries of a file that
did not validate (so that one report lists every problem, unset variables included). Imports only
:mod:`mcp_client.config.problems` of the package.

An ``mcp.json`` is trusted code: its ``command`` runs programs, and a reference can put any variable of the
environment into a URL or a header sent to a server. A host loading configurations it did not write passes
``load_config(path, environ=AllowedEnvironment({"GITHUB_TOKEN"}))``: references to any other variable are refused
(a :class:`~mcp_client.config.load.ConfigError`, with or without a ``:-default``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from mcp_client.config.problems import ConfigProblem, segment

__all__ = [
    "EXPANDED_FIELDS",
    "AllowedEnvironment",
    "expand",
    "expand_checked",
    "expand_into",
    "raw_values",
    "unset_variables",
]

_REFERENCE = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

EXPANDED_FIELDS = ("command", "args", "env", "cwd", "url", "headers")
"""The fields of a server entry whose strings are expanded."""


class AllowedEnvironment(Mapping[str, str]):
    """The variables of ``environ`` (default: ``os.environ``) named in ``allowed``, and no other: pass it as
    ``load_config(..., environ=...)`` and a reference to any other variable is a configuration problem."""

    def __init__(self, allowed: Iterable[str], environ: Mapping[str, str] | None = None) -> None:
        self.allowed = frozenset(allowed)
        self._environ = os.environ if environ is None else environ

    def __repr__(self) -> str:
        return f"AllowedEnvironment({sorted(self.allowed)!r})"  # names only: the values may be secrets

    def __getitem__(self, name: str) -> str:
        if name not in self.allowed:
            raise KeyError(name)
        return self._environ[name]

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._environ if name in self.allowed)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def expand(value: str, environ: Mapping[str, str], unset: list[str], refused: list[str] | None = None) -> str:
    """``value`` with its references replaced; the name of each one without a value is appended to ``unset``,
    and (``environ`` being an :class:`AllowedEnvironment`) of each one not allowed to ``refused`` (else ``unset``).

    ``${VAR:-default}`` takes ``default`` when ``VAR`` is unset or empty; ``${VAR}`` takes ``VAR`` even if empty;
    ``$${`` is a literal ``${`` (how a host's text that is not a reference is carried through, see
    :mod:`mcp_client.config.dialects.translate`).
    """

    def substitute(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        if variable is None:
            return "${"
        if isinstance(environ, AllowedEnvironment) and variable not in environ.allowed:
            (refused if refused is not None else unset).append(variable)
            return ""
        found = environ.get(variable)
        if found is not None and (found or default is None):
            return found
        if default is not None:
            return default
        unset.append(variable)
        return ""

    return _REFERENCE.sub(substitute, value)


def expand_checked(value: str, environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """``value`` expanded, and what is wrong with its references (one sentence each; empty when nothing is)."""
    unset: list[str] = []
    refused: list[str] = []
    expanded = expand(value, environ, unset, refused)
    reasons = [f"environment variable {variable!r} is not set" for variable in unset]
    reasons += [f"environment variable {variable!r} is not allowed" for variable in refused]
    return expanded, reasons


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


def unset_variables(
    data: Mapping[str, Any], environ: Mapping[str, str], root: str = "mcpServers"
) -> list[ConfigProblem]:
    """The ``${VAR}`` references without a value in the entries of a file that did not validate (as JSON)."""
    servers = data.get("mcpServers" if "mcpServers" in data else "servers")
    if not isinstance(servers, Mapping):
        return []
    problems: list[ConfigProblem] = []
    for name, entry in servers.items():
        if isinstance(entry, Mapping) and entry.get("disabled") is not True:
            for where, value in raw_values(entry):
                expand_into(value, f"{root}.{segment(name)}.{where}", environ, problems)
    return problems


def expand_into(value: str, path: str, environ: Mapping[str, str], problems: list[ConfigProblem]) -> str:
    """``value`` expanded; what is wrong with its references appended to ``problems`` at ``path``."""
    expanded, reasons = expand_checked(value, environ)
    problems += [ConfigProblem(path, reason) for reason in reasons]
    return expanded
