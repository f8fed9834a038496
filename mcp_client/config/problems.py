"""What is wrong with a configuration: :class:`ConfigError` (refused) and :class:`ConfigWarning` (loaded, but a key
was not understood). Imports nothing of the package; every module of :mod:`mcp_client.config` raises these."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass

__all__ = ["ConfigError", "ConfigProblem", "ConfigWarning", "segment", "warn_keys"]


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One thing wrong with a configuration: where (a dotted JSON path) and why."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class ConfigError(ValueError):
    """The configuration is not valid. ``problems`` lists every problem found, each with its JSON path.

    The message is one line per problem, e.g. ``mcpServers.search.policy.timeout.idle: must be a positive number
    of seconds or null, got -1``.
    """

    def __init__(self, problems: list[ConfigProblem], *, source: str | None = None) -> None:
        self.problems = problems
        self.source = source
        """The file the configuration came from, when it came from one."""
        where = f"{source}: " if source else ""
        if len(problems) == 1:
            message = f"{where}{problems[0]}"
        else:
            message = f"{where}{len(problems)} problems:\n" + "\n".join(f"  {p}" for p in problems)
        super().__init__(message)


class ConfigWarning(UserWarning):
    """A configuration loaded, but holds a key this library does not understand (so it has no effect here).

    The message names the file and the key's path, e.g. ``.mcp.json: mcpServers.search.autoStart: not understood
    (dialect claude_code); ignored``. Filter them with ``warnings.filterwarnings("error", category=ConfigWarning)``
    to refuse such files instead.
    """


def warn_keys(notes: list[tuple[str, str]], *, source: str | None) -> None:
    """One :class:`ConfigWarning` per ``(key path, what of it is not understood)``."""
    where = f"{source}: " if source else ""
    for path, note in notes:
        warnings.warn(f"{where}{path}: {note}", ConfigWarning, stacklevel=3)


def segment(part: object) -> str:
    """One step of a key path: a key as is, or quoted when it is empty or holds a dot or a space."""
    text = str(part)
    return json.dumps(text) if not text or any(c in text for c in '. "') else text
