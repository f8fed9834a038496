"""The configuration dialects of MCP hosts, as data: for each host, where its servers are and what each key of a
server entry means to us, in the host's own units.

A rule says what one key of a host's server entry becomes in our ``mcp.json`` shape (see
:mod:`mcp_client.config.load`); :mod:`.translate` applies them. A key no rule names is reported as not
understood; a key :class:`Ignore`\\ d is understood and has no effect on calls (the reason is the data, and the
docs' table); a key :class:`Unsupported` would matter and is reported with the reason. Pure data: imports
nothing of the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "DIALECTS",
    "DIALECT_NAMES",
    "MCP_CLIENT_IGNORED",
    "BearerEnv",
    "Copy",
    "Dialect",
    "Enabled",
    "EnvHeaders",
    "EnvKeys",
    "Ignore",
    "Kind",
    "Limit",
    "Merge",
    "Rule",
    "Unsupported",
    "UrlOf",
]


@dataclass(frozen=True, slots=True)
class Copy:
    """The value is our key ``to`` as it stands (``cmd`` → ``command``)."""

    to: str
    nonempty: bool = False
    """Only a non-empty list is copied (an empty one means "no filter", as Goose's ``available_tools``)."""


@dataclass(frozen=True, slots=True)
class Merge:
    """A table merged into our table ``to`` (Codex's ``http_headers`` → ``headers``)."""

    to: str


@dataclass(frozen=True, slots=True)
class Limit:
    """A time limit in the host's unit, set as our ``policy.timeout.<field>`` in seconds."""

    field: str
    unit: str
    """``"ms"`` or ``"s"``."""


@dataclass(frozen=True, slots=True)
class Kind:
    """The transport key: host value → our ``type``; ``left_out``: values we cannot run (the entry is left out,
    reported, with the reason)."""

    kinds: Mapping[str, str]
    left_out: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UrlOf:
    """An endpoint key whose name says the transport (Gemini CLI: ``httpUrl`` Streamable HTTP, ``url`` HTTP+SSE);
    an explicit ``type`` wins."""

    kind: str


@dataclass(frozen=True, slots=True)
class Enabled:
    """``enabled: false`` leaves the server out (our ``disabled``)."""


@dataclass(frozen=True, slots=True)
class BearerEnv:
    """The name of a variable holding a bearer token: ``Authorization: Bearer ${NAME}`` (Codex)."""


@dataclass(frozen=True, slots=True)
class EnvHeaders:
    """Headers whose values are variable names: ``{header: "${NAME}"}`` (Codex's ``env_http_headers``)."""


@dataclass(frozen=True, slots=True)
class EnvKeys:
    """Names of variables passed to the server from the environment: ``env[NAME] = "${NAME}"`` (Goose's
    ``env_keys``; Codex's ``env_vars``, whose items may also be ``{name = "X", source = "local"}``)."""


@dataclass(frozen=True, slots=True)
class Ignore:
    """Understood, and of no effect on calls here: the reason says why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Unsupported:
    """Understood, and it would matter, but this library does not do it: reported with the reason."""

    reason: str


Rule = Copy | Merge | Limit | Kind | UrlOf | Enabled | BearerEnv | EnvHeaders | EnvKeys | Ignore | Unsupported


@dataclass(frozen=True, slots=True)
class Dialect:
    """One host's configuration format."""

    name: str
    host: str
    """The host, as its users name it."""
    section: str
    """The key of the server table."""
    keys: Mapping[str, Rule]
    doc: str
    """Where the host publishes the format."""
    variables: str = "braces"
    """How the host writes references in values: ``"braces"`` (``${VAR}``, ``${VAR:-default}``: ours), ``"vscode"``
    (``${env:VAR}``, ``${input:ID}``, ``${userHome}``, ``${workspaceFolder}``), ``"dollar"`` (``$VAR`` too) or
    ``"literal"`` (none: the host passes ``${HOME}`` as written; only keys that name a variable read one)."""
    defaults: Mapping[str, float] = field(default_factory=dict)
    """``policy.timeout`` fields (seconds) the host applies to an entry that does not set them."""
    url_kind: str = "http"
    """Our ``type`` for an entry with a URL and no transport key."""
    comments: bool = False
    """The host reads JSON with comments and trailing commas (JSONC)."""
    placeholders: str | None = None
    """The host's own per-user ``{{NAME}}`` placeholders (LibreChat): not filled in here, so each is reported."""


_STDIO = {"command": Copy("command"), "args": Copy("args"), "env": Copy("env")}
_REMOTE = {"url": Copy("url"), "headers": Copy("headers")}
_OURS = {"policy": Copy("policy")}  # our own block, accepted in every dialect; it wins over the host's keys
_TYPES = Kind({"stdio": "stdio", "http": "http", "sse": "sse"})
_ENV_FILE = Unsupported("an env file is not read here: its variables are not set (put them under 'env')")
_SHOWN = "shown to people; no effect on calls"
_APPROVAL = "tool approval is the host's business, not the client's"

_CLAUDE_CODE = Dialect(
    name="claude_code",
    host="Claude Code (.mcp.json)",
    section="mcpServers",
    keys={**_STDIO, **_REMOTE, **_OURS, "type": _TYPES, "timeout": Limit("maximum", "ms")},
    doc="https://docs.claude.com/en/docs/claude-code/mcp",
)
_CLAUDE_DESKTOP = Dialect(
    name="claude_desktop",
    host="Claude Desktop (claude_desktop_config.json)",
    section="mcpServers",
    keys={**_STDIO, **_OURS},
    doc="https://modelcontextprotocol.io/docs/develop/connect-local-servers",
    variables="literal",  # Claude Desktop passes args and env as written
)
_VSCODE = Dialect(
    name="vscode",
    host="VS Code (.vscode/mcp.json)",
    section="servers",
    keys={
        **_STDIO,
        **_REMOTE,
        **_OURS,
        "type": _TYPES,
        "envFile": _ENV_FILE,
        "dev": Ignore("VS Code's watch and debug settings for developing the server"),
    },
    doc="https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
    variables="vscode",
    comments=True,
)
_CURSOR = Dialect(
    name="cursor",
    host="Cursor (.cursor/mcp.json)",
    section="mcpServers",
    keys={**_STDIO, **_REMOTE, **_OURS, "type": _TYPES, "envFile": _ENV_FILE},
    doc="https://cursor.com/docs/context/mcp",
    variables="vscode",
    comments=True,
)
_GEMINI = Dialect(
    name="gemini",
    host="Gemini CLI (settings.json)",
    section="mcpServers",
    keys={
        **_STDIO,
        **_OURS,
        "cwd": Copy("cwd"),
        "httpUrl": UrlOf("http"),
        "url": UrlOf("sse"),
        "headers": Copy("headers"),
        "type": _TYPES,
        "timeout": Limit("maximum", "ms"),
        "includeTools": Copy("include_tools"),
        "excludeTools": Copy("exclude_tools"),
        "trust": Ignore(f"skips Gemini CLI's confirmations; {_APPROVAL}"),
        "description": Ignore(_SHOWN),
        "oauth": Unsupported("Gemini CLI's OAuth settings are not read: give the client an auth= provider"),
        "authProviderType": Unsupported("Gemini CLI's auth providers are not read: give the client an auth= provider"),
    },
    doc="https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md",
    variables="dollar",
    defaults={"maximum": 600.0},  # 600,000 ms
    comments=True,
)
_CODEX = Dialect(
    name="codex",
    host="Codex (~/.codex/config.toml)",
    section="mcp_servers",
    keys={
        **_STDIO,
        **_OURS,
        "cwd": Copy("cwd"),
        "url": Copy("url"),
        "bearer_token_env_var": BearerEnv(),
        "http_headers": Merge("headers"),
        "env_http_headers": EnvHeaders(),
        "startup_timeout_sec": Limit("connect", "s"),
        "startup_timeout_ms": Limit("connect", "ms"),
        "tool_timeout_sec": Limit("maximum", "s"),
        "enabled": Enabled(),
        "enabled_tools": Copy("include_tools"),
        "disabled_tools": Copy("exclude_tools"),
        "env_vars": EnvKeys(),
        "required": Ignore("Codex refuses to start without it; a group records the failure in group.failures"),
        "default_tools_approval_mode": Ignore(_APPROVAL),
        "tools": Ignore(f"per-tool approval_mode; {_APPROVAL}"),
        "experimental_environment": Unsupported("a remote executor is Codex's own: the server is started here"),
        "oauth": Unsupported("Codex's OAuth settings are not read: give the client an auth= provider"),
    },
    doc="https://github.com/openai/codex/blob/main/docs/config.md#mcp_servers",
    variables="literal",
    defaults={"connect": 10.0, "maximum": 60.0},
)
_LIBRECHAT = Dialect(
    name="librechat",
    host="LibreChat (librechat.yaml)",
    section="mcpServers",
    keys={
        **_STDIO,
        **_REMOTE,
        **_OURS,
        "type": Kind(
            {"stdio": "stdio", "sse": "sse", "streamable-http": "http", "http": "http"},
            left_out={"websocket": "the WebSocket transport is not one this library speaks"},
        ),
        "timeout": Limit("maximum", "ms"),
        "initTimeout": Limit("connect", "ms"),
        "serverInstructions": Ignore("what LibreChat adds to the model's prompt; no effect on calls"),
        "iconPath": Ignore(_SHOWN),
        "title": Ignore(_SHOWN),
        "description": Ignore(_SHOWN),
        "chatMenu": Ignore("whether LibreChat's chat menu lists the server; no effect on calls"),
        "startup": Ignore("whether LibreChat connects when it starts; the group decides when servers start"),
        "stderr": Ignore("where LibreChat sends the server's stderr; stdio() handles it"),
        "customUserVars": Unsupported("per-user {{VARS}} are LibreChat's; they are not filled in here"),
        "requiresOAuth": Unsupported("LibreChat's OAuth flow is not run: give the client an auth= provider"),
        "oauth": Unsupported("LibreChat's OAuth settings are not read: give the client an auth= provider"),
    },
    doc="https://www.librechat.ai/docs/configuration/librechat_yaml/object_structure/mcp_servers",
    placeholders="LibreChat fills it per user; not filled in here, sent as written",
    url_kind="sse",  # LibreChat: a url without a type is SSE
)
_GOOSE = Dialect(
    name="goose",
    host="Goose (~/.config/goose/config.yaml)",
    section="extensions",
    keys={
        **_OURS,
        "type": Kind(
            {"stdio": "stdio", "sse": "sse", "streamable_http": "http"},
            left_out={
                kind: "a Goose extension that runs inside Goose, not an MCP server to start"
                for kind in ("builtin", "platform", "frontend", "inline_python")
            },
        ),
        "cmd": Copy("command"),
        "args": Copy("args"),
        "envs": Copy("env"),
        "env_keys": EnvKeys(),
        "uri": Copy("url"),
        "headers": Copy("headers"),
        "timeout": Limit("maximum", "s"),
        "enabled": Enabled(),
        "available_tools": Copy("include_tools", nonempty=True),
        "name": Ignore(_SHOWN),
        "display_name": Ignore(_SHOWN),
        "description": Ignore(_SHOWN),
        "bundled": Ignore("whether Goose ships the extension; no effect on calls"),
    },
    doc="https://block.github.io/goose/docs/guides/config-files",
    defaults={"maximum": 300.0},
)

DIALECTS: Mapping[str, Dialect] = MappingProxyType(
    {
        dialect.name: dialect
        for dialect in (_CLAUDE_CODE, _CLAUDE_DESKTOP, _VSCODE, _CURSOR, _GEMINI, _CODEX, _LIBRECHAT, _GOOSE)
    }
)
"""Every host dialect by its name (``mcp_client``, our own, is read by :mod:`mcp_client.config.load` as is)."""

DIALECT_NAMES = ("mcp_client", *DIALECTS)

MCP_CLIENT_IGNORED: Mapping[str, str] = MappingProxyType(
    {
        "alwaysAllow": _APPROVAL,
        "autoApprove": _APPROVAL,
        "description": _SHOWN,
        "name": _SHOWN,
        "title": _SHOWN,
    }
)
"""Keys of other hosts' entries an ``mcp.json`` of ours may hold: understood, no effect on calls."""
