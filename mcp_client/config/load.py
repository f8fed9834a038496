"""Load a host's ``mcp.json``: the servers to start, and our ``policy`` block of timeout and retry rules.

The file has the shape the MCP ecosystem uses (Claude Desktop, Claude Code, Cursor...)::

    {"mcpServers": {
        "search": {"command": "uvx", "args": ["search-server"], "env": {"TOKEN": "${SEARCH_TOKEN}"},
                   "policy": {"timeout": {"idle": 30, "maximum": 600},
                              "tools": {"reindex*": {"timeout": {"idle": 300, "maximum": 3600}}}}},
        "docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
    }}

* A key of a server entry that nothing reads is reported (a :class:`ConfigWarning` naming the file and key); other
  hosts' keys we know of (``alwaysAllow``...) are ignored; inside ``policy`` an unknown key is an error (a typo
  such as ``"idel"`` would otherwise silently leave a limit at its default). Other hosts' files (Claude Code, VS
  Code, Gemini CLI, Codex, LibreChat, Goose...) are read by their own rules: :mod:`mcp_client.config.dialects`.
* ``include_tools``/``exclude_tools`` (names or globs) choose the tools a group offers of the server.
* ``"disabled": true`` on a server (Cline's and Roo's convention) leaves it out.
* ``servers`` is accepted in place of ``mcpServers`` (VS Code's ``.vscode/mcp.json``).
* ``${VAR}`` and ``${VAR:-default}`` are replaced from the environment in ``command``, ``args``, ``env``, ``cwd``,
  ``url`` and ``headers`` when the file is loaded; an unset variable without a default is an error.
* Durations are numbers of seconds, or ``null`` for "no limit of this kind".
* ``"restart": {"max_restarts": 5, "window": 60}`` on a stdio server starts it again when it dies (the fields of
  :class:`~mcp_client.RestartPolicy`; ``{}`` for its defaults).

Every problem is reported at once, each with its JSON path and the reason, in a :class:`ConfigError`::

    mcpServers.search.policy.timeout.idle: must be a positive number of seconds or null, got -1
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from mcp_client.config import env as config_env
from mcp_client.config.dialects import detect
from mcp_client.config.dialects.inputs import InputAnswer
from mcp_client.config.dialects.rules import DIALECTS, MCP_CLIENT_IGNORED
from mcp_client.config.dialects.translate import translate
from mcp_client.config.problems import ConfigError, ConfigProblem, ConfigWarning, segment, warn_keys
from mcp_client.config.tool_filter import ALL_TOOLS, ToolFilter
from mcp_client.config.transports import check_kind, url_transport
from mcp_client.config.values import (
    Attempts,
    Duration,
    Flag,
    FlagOrNull,
    MaxInFlight,
    Multiplier,
    NonNegative,
    Text,
    is_number,
    named,
    problem,
    shown,
)
from mcp_client.policy.registry import (
    NO_LIMITS,
    AnnotationKey,
    PartialRetry,
    PartialTimeout,
    PolicyLayer,
    PolicyRegistry,
)
from mcp_client.policy.restart import RestartPolicy
from mcp_client.transports.base import Transport
from mcp_client.transports.stdio import stdio

__all__ = [
    "ConfigError",
    "ConfigProblem",
    "ConfigWarning",
    "GroupConfig",
    "PolicyConfig",
    "RetryConfig",
    "ServerConfig",
    "ServerSpec",
    "TimeoutConfig",
    "load_config",
    "parse_policy",
]

# -- the policy block (strict: unknown keys are errors) ---------------------------------------------------------

_STRICT = ConfigDict(extra="forbid", frozen=True)
_TOLERANT = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class TimeoutConfig(BaseModel):
    """``policy.timeout``: the fields of :class:`~mcp_client.TimeoutPolicy`; the ones left out are inherited."""

    model_config = _STRICT

    idle: Duration = None
    maximum: Duration = None
    connect: Duration = None
    notify_after: Duration = None
    reset_on_any_message: Flag = False
    pause_maximum: Flag = False
    reset_on_log: Flag = True

    def partial(self) -> PartialTimeout:
        """The fields given in the file, as a partial policy."""
        return PartialTimeout(**{name: getattr(self, name) for name in self.model_fields_set})


class RetryConfig(BaseModel):
    """``policy.retry``: the fields of :class:`~mcp_client.RetryPolicy`; the ones left out are inherited."""

    model_config = _STRICT

    attempts: Attempts = 3
    initial_backoff: NonNegative = 0.1
    max_backoff: NonNegative = 5.0
    multiplier: Multiplier = 2.0
    retry_idle_timeout: Flag = False
    idempotent: FlagOrNull = None

    def partial(self) -> PartialRetry:
        """The fields given in the file, as a partial policy."""
        return PartialRetry(**{name: getattr(self, name) for name in self.model_fields_set})


class RestartConfig(BaseModel):
    """A stdio server's ``restart``: the fields of :class:`~mcp_client.RestartPolicy` (``{}``: its defaults)."""

    model_config = _STRICT

    max_restarts: Annotated[int, Field(ge=0, strict=True)] = 5
    window: NonNegative = 60.0
    initial_backoff: NonNegative = 0.1
    max_backoff: NonNegative = 10.0
    multiplier: Multiplier = 2.0

    def policy(self) -> RestartPolicy:
        """The restart policy this block describes."""
        return RestartPolicy(**{name: getattr(self, name) for name in type(self).model_fields})


def _timeout_shorthand(data: Any) -> Any:
    """``"timeout": 30`` is short for ``"timeout": {"maximum": 30}`` (as ``timeout=30`` is for a call)."""
    if isinstance(data, dict) and is_number(data.get("timeout")):
        return {**data, "timeout": {"maximum": data["timeout"]}}
    return data


class RuleConfig(BaseModel):
    """A rule for some tools: ``timeout`` and/or ``retry``. ``null`` means no limits / no retries."""

    model_config = _STRICT

    timeout: TimeoutConfig | None = None
    retry: RetryConfig | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return _timeout_shorthand(data)

    def layer(self) -> PolicyLayer:
        """This rule as a registry layer (keys left out set nothing)."""
        timeout = PartialTimeout()
        if "timeout" in self.model_fields_set:
            timeout = self.timeout.partial() if self.timeout is not None else NO_LIMITS
        retry: PartialRetry | None = PartialRetry()
        if "retry" in self.model_fields_set:
            retry = self.retry.partial() if self.retry is not None else None
        return PolicyLayer(timeout=timeout, retry=retry)


_ANNOTATION_ALIASES: dict[str, AnnotationKey] = {
    "readOnlyHint": "read_only",
    "idempotentHint": "idempotent",
    "destructiveHint": "destructive",
    "openWorldHint": "open_world",
    "read_only": "read_only",
    "idempotent": "idempotent",
    "destructive": "destructive",
    "open_world": "open_world",
}


def _tool_pattern(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise problem("a tool name or pattern must be a non-empty string")
    return value


def _annotation(value: object) -> str:
    if value not in _ANNOTATION_ALIASES:
        raise problem(
            "unknown annotation {key}; expected readOnlyHint, idempotentHint, destructiveHint or openWorldHint",
            key=named(value),
        )
    return str(value)


class PolicyConfig(RuleConfig):
    """A server's ``policy`` block: its own rule, plus rules by tool name (or glob) and by tool annotation."""

    tools: dict[Annotated[str, BeforeValidator(_tool_pattern)], RuleConfig] = Field(default_factory=dict)
    annotations: dict[Annotated[str, BeforeValidator(_annotation)], RuleConfig] = Field(default_factory=dict)
    max_in_flight: MaxInFlight = None  # (the server's limit of calls in flight: ServerSpec, not the registry)

    def registry(self) -> PolicyRegistry:
        """The rules as a :class:`~mcp_client.policy.registry.PolicyRegistry` over the library's client defaults."""
        annotations: dict[AnnotationKey, PolicyLayer] = {}
        for key, rule in self.annotations.items():
            annotations.setdefault(_ANNOTATION_ALIASES[key], rule.layer())
        return PolicyRegistry(
            server=self.layer(),
            tools={pattern: rule.layer() for pattern, rule in self.tools.items()},
            annotations=annotations,
        )


# -- servers and the file (tolerant: other hosts' keys are ignored) ---------------------------------------------


class ServerConfig(BaseModel):
    """One ``mcpServers`` entry: ``command``/``args``/``env``/``cwd`` (stdio) or ``url``/``headers`` (HTTP)."""

    model_config = _TOLERANT

    command: Text | None = None
    args: list[Text] = Field(default_factory=list)
    env: dict[str, Text] = Field(default_factory=dict)
    cwd: Text | None = None
    url: Text | None = None
    headers: dict[str, Text] = Field(default_factory=dict)
    type: Text | None = None
    transport: Text | None = None
    disabled: Flag = False
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    restart: RestartConfig | None = None
    include_tools: list[Text] | None = None
    exclude_tools: list[Text] = Field(default_factory=list)
    start: Literal["eager", "lazy"] | None = None  # (None: the group's choice)

    @model_validator(mode="after")
    def _check_transport(self) -> ServerConfig:
        kind = self.type or self.transport
        if self.command is not None and self.url is not None:
            raise problem("has both 'command' (stdio) and 'url' (HTTP); give one")
        if self.command is None and self.url is None:
            raise problem("needs 'command' (a stdio server) or 'url' (an HTTP server)")
        check_kind(kind, has_command=self.command is not None)
        if self.command is not None and not self.command:
            raise problem("'command' must not be empty")
        if self.restart is not None and self.command is None:
            raise problem("'restart' applies to stdio servers (with 'command') only")
        return self

    def transport_spec(self) -> Transport:
        """The transport this entry describes (environment references already expanded by :func:`load_config`)."""
        if self.command is not None:
            restart = self.restart.policy() if self.restart is not None else None
            return stdio(self.command, self.args, env=self.env or None, cwd=self.cwd, restart=restart)
        assert self.url is not None
        return url_transport(self.type or self.transport, self.url, self.headers)

    def tool_filter(self) -> ToolFilter:
        """The tools of this server a group lists and calls."""
        if self.include_tools is None and not self.exclude_tools:
            return ALL_TOOLS
        include = tuple(self.include_tools) if self.include_tools is not None else None
        return ToolFilter(include, tuple(self.exclude_tools))


def _server_name(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise problem("a server name must be a non-empty string")
    if "/" in value:
        raise problem("a server name must not contain '/' (tools are addressed as 'server/tool')")
    return value


class GroupConfig(BaseModel):
    """A whole ``mcp.json``: the servers by name (disabled ones left out)."""

    model_config = _TOLERANT

    servers: dict[Annotated[str, BeforeValidator(_server_name)], ServerConfig] = Field(alias="mcpServers")

    @model_validator(mode="before")
    @classmethod
    def _servers_key(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "mcpServers" in data and "servers" in data:
            raise problem("give 'mcpServers' or 'servers', not both")
        if "mcpServers" not in data and "servers" in data:
            return {**data, "mcpServers": data["servers"]}
        return data

    def specs(self) -> dict[str, ServerSpec]:
        """What :class:`~mcp_client.group.ClientGroup` starts: each enabled server's transport and rules."""
        return {
            name: ServerSpec(
                server.transport_spec(),
                server.policy.registry(),
                server.policy.max_in_flight,
                server.tool_filter(),
                server.start,
            )
            for name, server in self.servers.items()
            if not server.disabled
        }


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one server and the rules its calls run under.

    Args:
        transport: Any :class:`~mcp_client.Transport` (``stdio(...)``, ``http(...)``, ``memory(...)`` in tests).
        policies: Its timeout and retry rules; their client default is replaced by the group's client options.
        max_in_flight: Most calls in flight to it at once (``policy.max_in_flight``; None: the group's option).
        tool_filter: The tools a group lists and calls (``include_tools``/``exclude_tools``; default: all).
        start: ``"eager"`` or ``"lazy"`` (``"start"`` in ``mcp.json``; None: the group's ``start``).
    """

    transport: Transport
    policies: PolicyRegistry = field(default_factory=PolicyRegistry)
    max_in_flight: int | None = None
    tool_filter: ToolFilter = ALL_TOOLS
    start: Literal["eager", "lazy"] | None = None


# -- loading ------------------------------------------------------------------------------------------------


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    dialect: str | None = None,
    inputs: InputAnswer | None = None,
) -> GroupConfig:
    """Read and check an ``mcp.json``, or another host's configuration (a path, or the already parsed object).

    Args:
        source: A path to the file, or its content as a mapping.
        environ: Where ``${VAR}`` references are looked up (default: ``os.environ``); a
            :class:`~mcp_client.config.env.AllowedEnvironment` for a file the host did not write.
        dialect: The file's format: ``"mcp_client"`` (ours), ``"claude_code"``, ``"claude_desktop"``, ``"vscode"``,
            ``"cursor"``, ``"gemini"``, ``"codex"``, ``"librechat"`` or ``"goose"`` (None: told from the file's
            name and shape; see :mod:`mcp_client.config.dialects.detect`).
        inputs: Asks the user for a VS Code ``${input:ID}`` (a :class:`~mcp_client.config.dialects.inputs.ConfigInput`
            in, the answer out); without it, a file that needs one is refused.

    A key of a server entry that is not understood is reported as a
    :class:`~mcp_client.config.problems.ConfigWarning` naming the file and the key's path, and has no effect.

    Raises:
        ConfigError: The file cannot be read or parsed, the dialect is unknown, or the configuration is not valid;
            every problem is listed with its path.
    """
    name: str | None = None
    path: Path | None = None
    if isinstance(source, Mapping):
        data: Any = dict(source)
    else:
        name, path = os.fspath(source), Path(source)
        data = detect.read(path, dialect=dialect, source=name)
    if not isinstance(data, dict):
        raise ConfigError([ConfigProblem("", f"must be a JSON object, got {type(data).__name__}")], source=name)
    chosen = detect.choose(dialect, path, data, source=name)
    notes: list[tuple[str, str]] = []
    root, keys = "mcpServers", None
    if chosen != "mcp_client":
        translation = translate(DIALECTS[chosen], data, path=path, inputs=inputs, source=name)
        data, notes, root, keys = translation.data, translation.notes, DIALECTS[chosen].section, translation.keys
    environ = os.environ if environ is None else environ
    try:
        config = GroupConfig.model_validate(data)
    except ValidationError as exc:
        # Every problem at once: the unset variables too, found in the raw entries since the model is not there.
        raise ConfigError(
            _problems(exc, root=root, keys=keys) + config_env.unset_variables(data, environ, root), source=name
        ) from None
    problems: list[ConfigProblem] = []
    expanded = _expand_environment(config, environ, problems, root)
    if problems:
        raise ConfigError(problems, source=name)
    warn_keys(notes + _not_understood(config), source=name)
    return expanded


_HINTS = {"timeout": " (another host's? name it: load_config(..., dialect='claude_code'), milliseconds)"}


def _not_understood(config: GroupConfig) -> list[tuple[str, str]]:
    """The keys of our own entries that nothing reads (other hosts' keys we know of are listed as ignored)."""
    return [
        (
            f"mcpServers.{segment(name)}.{segment(key)}",
            f"not understood (dialect mcp_client); ignored{_HINTS.get(key, '')}",
        )
        for name, server in config.servers.items()
        for key in server.model_extra or {}
        if key not in MCP_CLIENT_IGNORED
    ]


def parse_policy(policy: Mapping[str, Any], *, path: str = "policy") -> PolicyRegistry:
    """A ``policy`` block (as in ``mcp.json``) as a :class:`~mcp_client.policy.registry.PolicyRegistry`.

    For servers that are not in a file (an in-memory server in tests, one built by the host)::

        ServerSpec(memory(serve), parse_policy({"timeout": {"idle": 5}}))
    """
    try:
        config = PolicyConfig.model_validate(dict(policy))
    except ValidationError as exc:
        raise ConfigError(_problems(exc, prefix=path)) from None
    if config.max_in_flight is not None:  # a limit dropped here would be a limit the host believes it has
        reason = "parse_policy returns rules only: give the limit to ServerSpec(..., max_in_flight=...)"
        raise ConfigError([ConfigProblem(f"{path}.max_in_flight", reason)])
    return config.registry()


def _problems(
    exc: ValidationError, *, prefix: str = "", root: str = "mcpServers", keys: Mapping[str, str] | None = None
) -> list[ConfigProblem]:
    """Each error with its path in the file's own words: ``root`` its server section, ``keys`` its entry keys."""
    problems = []
    for error in exc.errors(include_url=False):
        location = [segment(part) for part in error["loc"] if part != "[key]"]
        if location[:1] in (["servers"], ["mcpServers"]):
            location[0] = root
            if keys and len(location) > 2:
                location[2] = keys.get(location[2], location[2])
        path = ".".join([prefix, *location] if prefix else location)
        problems.append(ConfigProblem(path, _reason(error, location)))
    return problems


def _reason(error: Any, location: list[str]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        key = location[-1] if location else "?"
        known = _known_keys(location)
        hint = difflib.get_close_matches(key, known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else f"; expected one of {', '.join(known)}"
        return f"unknown key{suggestion}"
    if kind == "missing":
        return "is required"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"must be an object, got {shown(error.get('input'))}"
    if kind == "list_type":
        return f"must be a list, got {shown(error.get('input'))}"
    message: str = error["msg"]
    return message.removeprefix("Value error, ")


def _known_keys(location: list[str]) -> list[str]:
    """The keys allowed where an unknown one was found (for the error message)."""
    parent = location[-2] if len(location) >= 2 else ""
    if parent == "timeout":
        return list(TimeoutConfig.model_fields)
    if parent == "retry":
        return list(RetryConfig.model_fields)
    if parent == "policy":
        return list(PolicyConfig.model_fields)
    if parent == "restart":
        return list(RestartConfig.model_fields)
    return list(RuleConfig.model_fields)


def _expand_environment(
    config: GroupConfig, environ: Mapping[str, str], problems: list[ConfigProblem], root: str
) -> GroupConfig:
    def expand(value: str, path: str) -> str:
        return config_env.expand_into(value, path, environ, problems)

    servers: dict[str, ServerConfig] = {}
    for name, server in config.servers.items():
        if server.disabled:
            servers[name] = server
            continue
        base = f"{root}.{segment(name)}"
        changes: dict[str, Any] = {
            "args": [expand(arg, f"{base}.args.{i}") for i, arg in enumerate(server.args)],
            "env": {key: expand(value, f"{base}.env.{key}") for key, value in server.env.items()},
            "headers": {key: expand(value, f"{base}.headers.{key}") for key, value in server.headers.items()},
        }
        for key in ("command", "cwd", "url"):
            value = getattr(server, key)
            if value is not None:
                changes[key] = expand(value, f"{base}.{key}")
        servers[name] = server.model_copy(update=changes)
    return config.model_copy(update={"servers": servers})
