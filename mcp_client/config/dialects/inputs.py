"""The references hosts write in values, turned into ours (``${VAR}``) or filled in, before our own expansion.

* ``"vscode"`` (VS Code, Cursor): ``${env:VAR}`` → ``${VAR}``; ``${userHome}``; ``${workspaceFolder}`` (the folder
  holding ``.vscode/`` or ``.cursor/``: the file must be loaded from its path); ``${input:ID}``: the value of an
  input the file declares under ``inputs``, asked of the host's ``inputs`` callback once per id (a file that needs
  one, loaded without a callback, is refused: the host must ask its user, this library never does).
* ``"dollar"`` (Gemini CLI): ``$VAR`` → ``${VAR}`` too.
* ``"braces"``: ``${VAR}`` and ``${VAR:-default}``, ours, left for :mod:`mcp_client.config.env`.
* ``"literal"`` (Codex): none; :mod:`.translate` keeps the host's ``${`` literal.

An answer may not itself hold ``${``: it would be expanded from the environment afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_client.config.dialects.rules import Dialect
from mcp_client.config.problems import ConfigProblem

__all__ = ["ConfigInput", "HostVariables", "InputAnswer"]


@dataclass(frozen=True, slots=True)
class ConfigInput:
    """An input a VS Code ``mcp.json`` declares (``inputs: [{"id": ..., "type": "promptString", ...}]``)."""

    id: str
    type: str
    description: str
    password: bool = False
    """The answer is a secret: ask without echo."""
    options: tuple[str, ...] = ()
    """The choices of a ``pickString`` input."""
    default: str | None = None


InputAnswer = Callable[[ConfigInput], str]
"""``load_config(..., inputs=...)``: asks the user for one input and returns the answer."""

_VSCODE = re.compile(r"\$\{(env|input):([^}]*)\}|\$\{(userHome|workspaceFolder)\}|\$\{([A-Za-z]+:[^}]*)\}")
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_FIELDS = ("command", "cwd", "url")
_TABLES = ("env", "headers")


class HostVariables:
    """Fills in (or rewrites) the host's references in the strings of translated entries."""

    def __init__(
        self,
        dialect: Dialect,
        data: Mapping[str, Any],
        *,
        path: Path | None,
        inputs: InputAnswer | None,
        problems: list[ConfigProblem],
    ) -> None:
        self._style = dialect.variables
        self._dialect = dialect
        self._path = path
        self._ask = inputs
        self._problems = problems
        self._answers: dict[str, str] = {}
        self._declared = _declared(data.get("inputs"), problems) if dialect.variables == "vscode" else {}

    def resolve(self, entry: dict[str, Any], where: str) -> dict[str, Any]:
        """``entry`` with the references of its strings rewritten or filled in."""
        if self._style in ("braces", "literal"):
            return entry
        out = dict(entry)
        for key in _FIELDS:
            if isinstance(out.get(key), str):
                out[key] = self._one(out[key], f"{where}.{key}")
        if isinstance(out.get("args"), list):
            out["args"] = [self._text(arg, f"{where}.args.{i}") for i, arg in enumerate(out["args"])]
        for table in _TABLES:
            if isinstance(out.get(table), Mapping):
                out[table] = {k: self._text(v, f"{where}.{table}.{k}") for k, v in out[table].items()}
        return out

    def _text(self, value: object, path: str) -> object:
        return self._one(value, path) if isinstance(value, str) else value

    def _one(self, value: str, path: str) -> str:
        if self._style == "dollar":
            return _DOLLAR.sub(r"${\1}", value)

        def substitute(match: re.Match[str]) -> str:
            kind, name, builtin, other = match.groups()
            if kind == "env":
                return f"${{{name}}}"
            if kind == "input":
                return self._input(name, path)
            if builtin == "userHome":
                return str(Path.home())
            if builtin == "workspaceFolder":
                return self._workspace(path)
            self._problems.append(
                ConfigProblem(path, f"the {self._dialect.host} variable ${{{other}}} is not supported")
            )
            return ""

        return _VSCODE.sub(substitute, value)

    def _workspace(self, path: str) -> str:
        if self._path is not None and self._path.parent.name in (".vscode", ".cursor"):
            return str(self._path.resolve().parent.parent)
        reason = "${workspaceFolder} needs the file loaded from its path inside the workspace's .vscode or .cursor"
        self._problems.append(ConfigProblem(path, reason))
        return ""

    def _input(self, name: str, path: str) -> str:
        if name in self._answers:
            return self._answers[name]
        declared = self._declared.get(name)
        if declared is None:
            self._problems.append(ConfigProblem(path, f"${{input:{name}}} names no input of the file's 'inputs'"))
            return ""
        if self._ask is None:
            reason = (
                f"needs the input {name!r} ({declared.description or 'no description'}): "
                "pass load_config(..., inputs=callable) to ask the user for it"
            )
            self._problems.append(ConfigProblem(path, reason))
            return ""
        answer = self._ask(declared)
        if not isinstance(answer, str) or "${" in answer:
            got = "holds '${'" if isinstance(answer, str) else f"is {type(answer).__name__}"
            self._problems.append(
                ConfigProblem(path, f"the answer to input {name!r} must be a string without '${{', it {got}")
            )
            answer = ""
        self._answers[name] = answer
        return answer


def _declared(inputs: object, problems: list[ConfigProblem]) -> dict[str, ConfigInput]:
    if inputs is None:
        return {}
    if not isinstance(inputs, list):
        problems.append(ConfigProblem("inputs", f"must be a list, got {type(inputs).__name__}"))
        return {}
    declared: dict[str, ConfigInput] = {}
    for i, item in enumerate(inputs):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str) or not item["id"]:
            problems.append(ConfigProblem(f"inputs.{i}", "must be an object with a non-empty string 'id'"))
            continue
        options = item.get("options", [])
        default = item.get("default")
        declared[item["id"]] = ConfigInput(
            id=item["id"],
            type=str(item.get("type", "promptString")),
            description=str(item.get("description", "")),
            password=item.get("password") is True,
            options=tuple(str(o) for o in options) if isinstance(options, list) else (),
            default=default if isinstance(default, str) else None,
        )
    return declared
