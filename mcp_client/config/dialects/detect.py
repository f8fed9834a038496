"""Reading a host's file (JSON, JSON with comments, TOML or YAML) and telling which dialect it is.

The dialect is the one the host names, else the file's name says it, else its shape:

* by name: ``*.toml`` Codex; ``*.yaml``/``*.yml``: ``extensions`` Goose, ``mcpServers`` LibreChat;
  ``claude_desktop_config.json`` Claude Desktop; ``.mcp.json`` Claude Code; ``mcp.json`` in ``.vscode/`` VS Code,
  in ``.cursor/`` Cursor; ``settings.json`` (in ``.gemini/``) Gemini CLI;
* by shape: ``mcp_servers`` Codex; ``extensions`` Goose; ``servers`` VS Code (ours when an entry has ``policy``);
  then by the entries' keys: ``policy`` ours, ``httpUrl``/``includeTools``/``excludeTools``/``trust`` Gemini CLI,
  ``initTimeout``/``serverInstructions`` LibreChat; else ours (``mcp_client``). A bare number ``timeout`` tells
  nothing (milliseconds in Claude Code, seconds in Cline and Roo): in ours it is reported, never guessed.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp_client.config.dialects.rules import DIALECT_NAMES, DIALECTS
from mcp_client.config.problems import ConfigError, ConfigProblem

__all__ = ["MAX_FILE_BYTES", "MAX_YAML_NODES", "choose", "read"]

_COMMENT_OR_STRING = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r'("(?:\\.|[^"\\])*")|,(?=\s*[}\]])')
_YAML = (".yaml", ".yml")


MAX_FILE_BYTES = 10 * 1024 * 1024
"""The largest configuration file read (a host's file is a few kilobytes; a larger one is not a configuration)."""
MAX_YAML_NODES = 100_000
"""The most values a YAML file may hold once its aliases are expanded (a "billion laughs" file holds billions)."""


def read(path: Path, *, dialect: str | None, source: str) -> Any:
    """The parsed content of the file at ``path``: TOML by its suffix, YAML by its, else JSON (with comments when
    its dialect reads them). Whatever the file holds, the outcome is its content or a :class:`ConfigError`."""
    text = _text(path, source)
    try:
        if path.suffix == ".toml" or dialect == "codex":
            return _toml(text, source)
        if path.suffix in _YAML or dialect in ("librechat", "goose"):
            return _yaml(text, source)
        return _json(text, path, dialect, source)
    except RecursionError:
        kind = "TOML" if path.suffix == ".toml" or dialect == "codex" else "YAML" if path.suffix in _YAML else "JSON"
        raise ConfigError([ConfigProblem("", f"not valid {kind}: nested too deeply")], source=source) from None


def _text(path: Path, source: str) -> str:
    try:
        with path.open("rb") as file:  # (at most one byte past the limit: /dev/zero is a file too)
            raw = file.read(MAX_FILE_BYTES + 1)
        text = raw.decode("utf-8-sig") if len(raw) <= MAX_FILE_BYTES else None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # (ValueError: a NUL in the path)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError([ConfigProblem("", f"cannot read the file: {reason}")], source=source) from None
    if text is None:
        reason = f"the file is too large for a configuration (over {MAX_FILE_BYTES // (1024 * 1024)} MiB)"
        raise ConfigError([ConfigProblem("", reason)], source=source)
    return text


def _toml(text: str, source: str) -> Any:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise ConfigError([ConfigProblem("", f"not valid TOML: {exc}")], source=source) from None


def _yaml(text: str, source: str) -> Any:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is None:
            return None
        if _expanded_size(node, MAX_YAML_NODES) > MAX_YAML_NODES:
            reason = f"too large once its aliases are expanded (over {MAX_YAML_NODES:,} values)"
            raise ConfigError([ConfigProblem("", reason)], source=source)
        return yaml.SafeLoader("").construct_document(node)
    except (yaml.YAMLError, ValueError) as exc:  # (ValueError: an integer of thousands of digits)
        raise ConfigError([ConfigProblem("", f"not valid YAML: {exc}")], source=source) from None


def _expanded_size(root: Any, limit: int) -> int:
    """How many values the YAML node graph ``root`` holds with every alias expanded (counting stops past
    ``limit``; a graph that holds itself counts as past it)."""
    sizes: dict[int, int] = {}  # (by id: every node is held by the graph for the whole count)
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            return limit + 1
        open_nodes.add(key)
        total = 1
        children = node.value if isinstance(node.value, list) else []
        for child in children:
            for part in child if isinstance(child, tuple) else (child,):
                total += size(part)
                if total > limit:
                    break
            if total > limit:
                break
        open_nodes.discard(key)
        sizes[key] = total
        return total

    return size(root)


def _json(text: str, path: Path, dialect: str | None, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        named = DIALECTS.get(dialect or _by_name(path) or "")
        if named is not None and named.comments:
            try:
                return json.loads(_TRAILING_COMMA.sub(_keep_string, _COMMENT_OR_STRING.sub(_keep_string, text)))
            except json.JSONDecodeError:
                pass
            except (ValueError, RecursionError) as inner:
                raise ConfigError([ConfigProblem("", f"not valid JSON: {_short(inner)}")], source=source) from None
        reason = f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        raise ConfigError([ConfigProblem("", reason)], source=source) from None
    except (ValueError, RecursionError) as exc:  # digits past Python's limit; nesting past the recursion limit
        raise ConfigError([ConfigProblem("", f"not valid JSON: {_short(exc)}")], source=source) from None


def _short(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split(";")[0]


def _keep_string(match: re.Match[str]) -> str:
    return match.group(1) or ""


def choose(dialect: str | None, path: Path | None, data: Mapping[str, Any], *, source: str | None) -> str:
    """The dialect of ``data``: ``dialect`` when the host names one, else detected (see the module's docstring).

    Raises:
        ConfigError: ``dialect`` is not one of :data:`~.rules.DIALECT_NAMES`.
    """
    if dialect is not None:
        if dialect not in DIALECT_NAMES:
            reason = f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECT_NAMES)}"
            raise ConfigError([ConfigProblem("", reason)], source=source)
        return dialect
    return (_by_name(path, data) if path is not None else None) or _by_shape(data)


def _by_name(path: Path, data: Mapping[str, Any] | None = None) -> str | None:
    name, folder = path.name, path.parent.name
    if path.suffix == ".toml":
        return "codex"
    if path.suffix in _YAML:
        if data is not None and "extensions" in data and "mcpServers" not in data:
            return "goose"
        return "librechat" if data is None or "mcpServers" in data else None
    if name == "claude_desktop_config.json":
        return "claude_desktop"
    if name == ".mcp.json":
        return "claude_code"
    if name == "mcp.json" and folder in (".vscode", ".cursor"):
        return "vscode" if folder == ".vscode" else "cursor"
    if name == "settings.json" and (folder == ".gemini" or (data is not None and "mcpServers" in data)):
        return "gemini"
    return None


def _by_shape(data: Mapping[str, Any]) -> str:
    if "mcpServers" not in data:
        for section, dialect in (("mcp_servers", "codex"), ("extensions", "goose"), ("servers", "vscode")):
            if section in data and not (section == "servers" and _has(data[section], {"policy"})):
                return dialect
        return "mcp_client"
    servers = data["mcpServers"]
    if _has(servers, {"policy"}):
        return "mcp_client"
    if _has(servers, {"httpUrl", "includeTools", "excludeTools", "trust"}):
        return "gemini"
    if _has(servers, {"initTimeout", "serverInstructions"}):
        return "librechat"
    return "mcp_client"


def _has(servers: object, keys: set[str]) -> bool:
    """Whether some entry of a server table holds one of ``keys``."""
    if not isinstance(servers, Mapping):
        return False
    return any(isinstance(entry, Mapping) and not keys.isdisjoint(entry) for entry in servers.values())
