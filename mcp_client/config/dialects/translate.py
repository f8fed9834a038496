"""A host's configuration turned into our ``mcp.json`` shape by the rules of its dialect (:mod:`.rules`).

:func:`translate` returns the ``{"mcpServers": {...}}`` mapping :mod:`mcp_client.config.load` checks as its own,
and the notes to report (key paths not understood, or understood and not supported). A value of the wrong kind for
its rule (a timeout that is not a positive number...) is a problem with the host's own key path; every problem is
raised at once in a :class:`~mcp_client.config.problems.ConfigError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_client.config.dialects.inputs import HostVariables, InputAnswer
from mcp_client.config.dialects.rules import (
    BearerEnv,
    Copy,
    Dialect,
    Enabled,
    EnvHeaders,
    EnvKeys,
    Ignore,
    Kind,
    Limit,
    Merge,
    Rule,
    Unsupported,
    UrlOf,
)
from mcp_client.config.env import raw_values
from mcp_client.config.problems import ConfigError, ConfigProblem, segment
from mcp_client.config.tool_filter import exact
from mcp_client.config.values import finite, named, shown

__all__ = ["Translation", "translate"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0}
_UNIT_WORDS = {"ms": "milliseconds", "s": "seconds"}


@dataclass(frozen=True, slots=True)
class Translation:
    """A host's file in our shape, and what to report of it."""

    data: dict[str, Any]
    notes: list[tuple[str, str]]
    """``(key path, note)``: each key not understood, or understood and not done here."""
    keys: dict[str, str]
    """Our entry keys → the host's (``command`` → ``cmd``), to word a later problem's path in the host's keys."""


def translate(
    dialect: Dialect,
    data: Mapping[str, Any],
    *,
    path: Path | None = None,
    inputs: InputAnswer | None = None,
    source: str | None = None,
) -> Translation:
    """``data`` (a host's whole file, parsed) as our ``mcp.json`` mapping, by ``dialect``'s rules.

    Raises:
        ConfigError: The server section is missing or not a table, or a value does not fit its key's rule.
    """
    problems: list[ConfigProblem] = []
    notes: list[tuple[str, str]] = []
    section = data.get(dialect.section)
    if not isinstance(section, Mapping):
        found = "missing" if section is None else f"must be a table of servers, got {type(section).__name__}"
        raise ConfigError(
            [ConfigProblem(dialect.section, f"{found} (the {dialect.host} server section)")], source=source
        )
    variables = HostVariables(dialect, data, path=path, inputs=inputs, problems=problems)
    servers: dict[str, Any] = {}
    for name, entry in section.items():
        where = f"{dialect.section}.{segment(name)}"
        if not isinstance(name, str) or not name:  # (a YAML ~ or 1 key would otherwise become "None" or "1")
            problems.append(ConfigProblem(where, f"a server name must be a non-empty string, got {shown(name)}"))
            continue
        if not isinstance(entry, Mapping):
            problems.append(ConfigProblem(where, f"must be a table, got {type(entry).__name__}"))
            continue
        converted = _entry(dialect, entry, where, problems, notes)
        if converted is not None and dialect.placeholders is not None:
            notes += _placeholders(converted, where, dialect.placeholders, dialect.keys)
        if converted is not None:
            servers[str(name)] = variables.resolve(converted, where)
    if problems:
        raise ConfigError(problems, source=source)
    keys = {rule.to: key for key, rule in dialect.keys.items() if isinstance(rule, Copy) and rule.to != key}
    return Translation({"mcpServers": servers}, notes, keys)


def _entry(
    dialect: Dialect,
    entry: Mapping[str, Any],
    where: str,
    problems: list[ConfigProblem],
    notes: list[tuple[str, str]],
) -> dict[str, Any] | None:
    """One server entry in our shape; None when it is left out (a transport we cannot run: reported)."""
    ours: dict[str, Any] = {}
    timeout: dict[str, float] = {}
    url_kind: str | None = None
    for key, value in entry.items():
        path = f"{where}.{segment(key)}"
        rule = dialect.keys.get(key)
        if dialect.variables == "literal" and isinstance(rule, Copy | Merge | UrlOf) and _expanded(rule):
            value = _as_written(value)
        if rule is None:
            notes.append((path, f"not understood (dialect {dialect.name}); ignored"))
        elif isinstance(rule, Copy):
            if isinstance(ours.get(rule.to), dict) and isinstance(value, Mapping):
                ours[rule.to] = {**ours[rule.to], **value}  # (a table another key began: env_keys, a bearer)
            elif not (rule.nonempty and value == []):
                ours[rule.to] = _exact_names(value) if rule.to in _TOOL_LISTS else value
        elif isinstance(rule, Merge):
            if _is_table(value, path, problems):
                ours[rule.to] = {**ours.get(rule.to, {}), **value}
        elif isinstance(rule, Limit):
            seconds = _seconds(value, rule.unit, path, problems)
            if seconds is not None:
                timeout[rule.field] = seconds
        elif isinstance(rule, Kind):
            if isinstance(value, str) and value in rule.left_out:
                notes.append((path, f"{named(value)}: {rule.left_out[value]}; the server is left out"))
                return None
            if not isinstance(value, str) or value not in rule.kinds:
                expected = ", ".join(json.dumps(kind) for kind in [*rule.kinds, *rule.left_out])
                problems.append(ConfigProblem(path, f"unknown transport {named(value)}; expected {expected}"))
            else:
                ours["type"] = rule.kinds[value]
        elif isinstance(rule, UrlOf):
            ours["url"], url_kind = value, rule.kind
        elif isinstance(rule, Enabled):
            if not isinstance(value, bool):
                problems.append(ConfigProblem(path, f"must be true or false, got {shown(value)}"))
            else:
                ours["disabled"] = not value
        elif isinstance(rule, BearerEnv):
            if _is_name(value, path, problems):
                ours.setdefault("headers", {})["Authorization"] = f"Bearer ${{{value}}}"
        elif isinstance(rule, EnvHeaders):
            if _is_table(value, path, problems):
                for header, variable in value.items():
                    if _is_name(variable, f"{path}.{segment(header)}", problems):
                        ours.setdefault("headers", {})[header] = f"${{{variable}}}"
        elif isinstance(rule, EnvKeys):
            names = value if isinstance(value, list) else [value]
            for i, variable in enumerate(names):
                if isinstance(variable, Mapping):  # Codex: {name = "X", source = "local" | "remote"}
                    if variable.get("source", "local") != "local":
                        notes.append((f"{path}.{i}", "a variable of Codex's remote executor is not read; ignored"))
                        continue
                    variable = variable.get("name")
                if _is_name(variable, f"{path}.{i}", problems):
                    ours.setdefault("env", {})[variable] = f"${{{variable}}}"
        elif isinstance(rule, Unsupported):
            notes.append((path, f"{rule.reason}; ignored"))
        else:
            assert isinstance(rule, Ignore)  # understood, no effect on calls (the reason is in the rules' table)
    if "url" in ours and "type" not in ours:
        ours["type"] = url_kind or dialect.url_kind
    return _with_limits(ours, {**dialect.defaults, **timeout})


_PLACEHOLDER = re.compile(r"\{\{[A-Za-z0-9_]+\}\}")


def _placeholders(entry: Mapping[str, Any], where: str, note: str, keys: Mapping[str, Rule]) -> list[tuple[str, str]]:
    """A note for each of the host's per-user ``{{NAME}}`` placeholders in the strings we send or pass on."""
    host = {rule.to: key for key, rule in keys.items() if isinstance(rule, Copy)}
    found: list[tuple[str, str]] = []
    for inner, value in raw_values(entry):
        for name in dict.fromkeys(_PLACEHOLDER.findall(value)):
            first, dot, rest = inner.partition(".")
            path = f"{where}.{host.get(first, first)}{dot}{rest}"
            found.append((path, f"{name}: {note}"))
    return found


_TOOL_LISTS = frozenset({"include_tools", "exclude_tools"})


def _exact_names(value: object) -> object:
    """A host's tool list: names compared as written (Gemini CLI, Codex, Goose), so our globs are made literal."""
    if isinstance(value, list):
        return [exact(name) if isinstance(name, str) else name for name in value]
    return value


_EXPANDED_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers"})


def _expanded(rule: Copy | Merge | UrlOf) -> bool:
    """Whether the key's value lands where our ``${VAR}`` expansion reads (see :mod:`mcp_client.config.env`)."""
    return isinstance(rule, UrlOf) or rule.to in _EXPANDED_KEYS


def _as_written(value: object) -> object:
    """A host's value that holds no references, kept literal through our expansion (``${`` written ``$${``)."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [_as_written(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _as_written(item) for key, item in value.items()}
    return value


def _with_limits(ours: dict[str, Any], timeout: dict[str, float]) -> dict[str, Any]:
    """The host's limits as our ``policy.timeout``; a ``policy`` block of ours in the entry wins field by field."""
    if not timeout:
        return ours
    policy = ours.get("policy", {})
    if not isinstance(policy, Mapping):
        return ours  # not a block: load's checks report it
    own = policy.get("timeout", {})
    if "timeout" in policy and not isinstance(own, Mapping):
        return ours  # a number or null of ours replaces the host's limits
    return {**ours, "policy": {**policy, "timeout": {**timeout, **own}}}


def _seconds(value: object, unit: str, path: str, problems: list[ConfigProblem]) -> float | None:
    number = finite(value)
    if number is None or number <= 0:
        words = _UNIT_WORDS[unit]
        problems.append(ConfigProblem(path, f"must be a positive number of {words}, got {shown(value)}"))
        return None
    return number * _UNIT_SECONDS[unit]


def _is_table(value: object, path: str, problems: list[ConfigProblem]) -> bool:
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        return True
    # (the value is not shown: a header table holds tokens)
    wrong = type(value).__name__ if not isinstance(value, Mapping) else "a value that is not a string"
    problems.append(ConfigProblem(path, f"must be a table of strings, got {wrong}"))
    return False


def _is_name(value: object, path: str, problems: list[ConfigProblem]) -> bool:
    if isinstance(value, str) and _NAME.fullmatch(value):
        return True
    # (the value is not shown: a token written where its variable's name belongs would land in logs)
    problems.append(ConfigProblem(path, f"must be the name of an environment variable, got {type(value).__name__}"))
    return False
