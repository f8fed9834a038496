"""Other hosts' configuration files: each loads with its limits in force, in the host's own units and meaning.

The files under ``configs/`` are written from each host's published documentation (each cites its page).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from mcp_client.config import ConfigInput, ConfigWarning, ToolFilter
from mcp_client.config.load import ConfigError, ServerSpec, load_config
from mcp_client.transports.http import HttpTransport
from mcp_client.transports.sse import SseTransport
from mcp_client.transports.stdio._transport import StdioTransport

CONFIGS = Path(__file__).parent / "configs"
ENV = {
    "GITHUB_TOKEN": "gh-token",
    "SEARCH_API_KEY": "search-key",
    "REMOTE_TOKEN": "remote-token",
    "DB_CONNECTION_STRING": "postgres://db",
    "EXTERNAL_API_KEY": "external-key",
    "FIGMA_OAUTH_TOKEN": "figma-token",
    "FIGMA_API_KEY": "figma-key",
    "SOME_API_KEY": "some-key",
    "GITHUB_PERSONAL_ACCESS_TOKEN": "gh-pat",
}


def load(path: Path, **options: Any) -> tuple[dict[str, ServerSpec], list[str]]:
    """The specs of a file, and the warnings its loading gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        specs = load_config(path, environ=ENV, **options).specs()
    return specs, [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]


def stdio_of(spec: ServerSpec) -> StdioTransport:
    assert isinstance(spec.transport, StdioTransport)
    return spec.transport


def test_claude_code_timeout_in_ms_is_the_maximum_and_type_names_the_transport() -> None:
    specs, warned = load(CONFIGS / "claude_code" / ".mcp.json")
    assert warned == []
    github = specs["github"]
    assert isinstance(github.transport, HttpTransport)
    assert github.transport.headers == {"Authorization": "Bearer gh-token"}
    assert github.policies.server_timeout.maximum == 5.0  # "timeout": 5000 ms: a wall-clock 5 s
    assert github.policies.server_timeout.idle == 60  # progress does not extend it; the idle default stays
    assert isinstance(specs["asana"].transport, SseTransport)
    airtable = stdio_of(specs["airtable"])
    assert (airtable.command, airtable.args) == ("npx", ("-y", "airtable-mcp-server"))
    assert airtable.env == {"AIRTABLE_API_KEY": "unset"}  # ${VAR:-default}, as Claude Code expands it
    assert specs["airtable"].policies.server_timeout.maximum == 600  # no timeout key: our default


def test_claude_desktop_stdio_servers_load() -> None:
    specs, warned = load(CONFIGS / "claude_desktop" / "claude_desktop_config.json")
    assert warned == []  # top-level settings (globalShortcut) are the host's own, not server keys
    files = stdio_of(specs["filesystem"])
    assert files.command == "npx"
    assert files.args[-1] == "/Users/username/Downloads"


def test_vscode_servers_inputs_and_variables() -> None:
    path = CONFIGS / "vscode" / ".vscode" / "mcp.json"
    asked: list[ConfigInput] = []

    def answer(prompt: ConfigInput) -> str:
        asked.append(prompt)
        return "pplx-secret"

    specs, warned = load(path, inputs=answer)
    assert [(p.id, p.password, p.description) for p in asked] == [("perplexity-key", True, "Perplexity API Key")]
    assert stdio_of(specs["Perplexity"]).env == {"PERPLEXITY_API_KEY": "pplx-secret"}
    workspace = str(path.resolve().parent.parent)
    assert stdio_of(specs["fetch"]).args == ("mcp-server-fetch", "--root", workspace)
    github = specs["github"].transport
    assert isinstance(github, HttpTransport)
    assert github.headers == {"X-Token": "gh-token"}  # ${env:GITHUB_TOKEN}
    assert len(warned) == 1
    assert "servers.fetch.envFile" in warned[0]
    assert str(path) in warned[0]


def test_vscode_inputs_without_a_callback_are_refused_clearly() -> None:
    path = CONFIGS / "vscode" / ".vscode" / "mcp.json"
    with pytest.raises(ConfigError) as error:
        load_config(path, environ=ENV)
    [problem] = error.value.problems
    assert problem.path == "servers.Perplexity.env.PERPLEXITY_API_KEY"
    assert "'perplexity-key' (Perplexity API Key)" in problem.reason
    assert "inputs=" in problem.reason


def test_an_input_answer_is_not_expanded_from_the_environment() -> None:
    data = {
        "inputs": [{"type": "promptString", "id": "k", "description": "key"}],
        "servers": {"s": {"command": "srv", "env": {"KEY": "${input:k}"}}},
    }
    with pytest.raises(ConfigError, match="without"):
        load_config(data, environ=ENV, inputs=lambda _: "${GITHUB_TOKEN}")
    with pytest.raises(ConfigError, match="names no input"):
        load_config({"servers": {"s": {"command": "srv", "args": ["${input:nope}"]}}}, inputs=lambda _: "x")


def test_cursor_env_references() -> None:
    specs, warned = load(CONFIGS / "cursor" / ".cursor" / "mcp.json")
    assert warned == []
    assert stdio_of(specs["web-search"]).env == {"API_KEY": "search-key"}
    remote = specs["remote"].transport
    assert isinstance(remote, HttpTransport)
    assert remote.headers == {"Authorization": "Bearer remote-token"}


def test_gemini_http_url_is_streamable_http_url_is_sse_and_timeout_is_ms() -> None:
    specs, warned = load(CONFIGS / "gemini" / ".gemini" / "settings.json")
    assert warned == []  # trust and description are understood and have no effect on calls
    tools = specs["pythonTools"]
    assert tools.policies.server_timeout.maximum == 15.0
    assert tools.tool_filter == ToolFilter(("safe_tool", "file_reader"), ("dangerous_tool",))
    assert not tools.tool_filter.allows("dangerous_tool")
    assert tools.tool_filter.allows("safe_tool")
    assert not tools.tool_filter.allows("other")
    python = stdio_of(tools)
    assert python.cwd == "./mcp-servers/python"
    assert python.env == {"DATABASE_URL": "postgres://db", "API_KEY": "external-key"}  # $VAR and ${VAR}
    assert isinstance(specs["httpServer"].transport, HttpTransport)
    assert specs["httpServer"].policies.server_timeout.maximum == 5.0
    assert isinstance(specs["sseServer"].transport, SseTransport)
    assert specs["sseServer"].policies.server_timeout.maximum == 600.0  # Gemini's default, 600,000 ms


def test_codex_seconds_defaults_filters_and_headers() -> None:
    specs, warned = load(CONFIGS / "codex" / "config.toml")
    assert warned == []
    assert set(specs) == {"context7", "figma"}  # enabled = false leaves "old" out
    context7 = specs["context7"]
    assert (context7.policies.server_timeout.connect, context7.policies.server_timeout.maximum) == (20, 120)
    assert stdio_of(context7).env == {"MY_ENV_VAR": "MY_ENV_VALUE"}
    assert context7.tool_filter.allows("resolve-library-id")
    assert not context7.tool_filter.allows("get-library-docs")  # disabled_tools wins over enabled_tools
    figma = specs["figma"]
    assert isinstance(figma.transport, HttpTransport)
    assert figma.transport.headers == {
        "Authorization": "Bearer figma-token",
        "X-Figma-Region": "us-east-1",
        "X-Api-Key": "figma-key",
    }
    # Codex's own defaults where the file says nothing: 10 s to start, 60 s per tool call
    assert (figma.policies.server_timeout.connect, figma.policies.server_timeout.maximum) == (10, 60)


def test_librechat_ms_limits_default_sse_and_websocket_left_out_with_a_warning() -> None:
    specs, warned = load(CONFIGS / "librechat" / "librechat.yaml")
    assert set(specs) == {"everything", "puppeteer", "streamable-http-server"}
    assert isinstance(specs["everything"].transport, SseTransport)  # a url without type is SSE in LibreChat
    assert specs["everything"].policies.server_timeout.maximum == 60.0
    assert specs["puppeteer"].policies.server_timeout.connect == 15.0  # initTimeout, ms
    remote = specs["streamable-http-server"].transport
    assert isinstance(remote, HttpTransport)
    assert remote.headers == {"X-API-Key": "some-key"}
    [left_out] = warned
    assert "mcpServers.realtime.type" in left_out
    assert "WebSocket" in left_out


def test_goose_timeout_in_seconds_builtins_left_out() -> None:
    specs, warned = load(CONFIGS / "goose" / "config.yaml")
    assert set(specs) == {"github", "remote"}  # developer is a builtin; sse-tools is not enabled
    github = specs["github"]
    assert github.policies.server_timeout.maximum == 120.0  # seconds, not ms
    assert stdio_of(github).env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "gh-pat"}  # env_keys
    assert isinstance(specs["remote"].transport, HttpTransport)
    assert specs["remote"].policies.server_timeout.maximum == 300.0  # Goose's default timeout
    [builtin] = warned
    assert "extensions.developer.type" in builtin


@pytest.mark.parametrize(
    ("data", "dialect"),
    [
        ({"mcp_servers": {"s": {"command": "x"}}}, "codex"),
        ({"extensions": {"s": {"cmd": "x", "type": "stdio"}}}, "goose"),
        ({"servers": {"s": {"command": "x", "type": "stdio"}}}, "vscode"),
        ({"mcpServers": {"s": {"httpUrl": "https://h.example/mcp"}}}, "gemini"),
        ({"mcpServers": {"s": {"command": "x", "initTimeout": 1000}}}, "librechat"),
        ({"mcpServers": {"s": {"command": "x", "timeout": 60}}}, "mcp_client"),  # ms or s? never guessed
        ({"mcpServers": {"s": {"command": "x", "policy": {"timeout": 5}}}}, "mcp_client"),
        ({"servers": {"s": {"command": "x", "policy": {"timeout": 5}}}}, "mcp_client"),
    ],
)
def test_the_dialect_is_told_from_the_shape(data: dict[str, Any], dialect: str) -> None:
    from mcp_client.config.dialects.detect import choose

    assert choose(None, None, data, source=None) == dialect


def test_a_named_dialect_wins_and_an_unknown_name_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "timeout": 3}}}))
    with pytest.warns(ConfigWarning, match=r"mcpServers\.s\.timeout: not understood \(dialect mcp_client\).*dialect="):
        ours = load_config(path).specs()["s"]  # detected: ours, where a bare timeout is not understood
    assert ours.policies.server_timeout.maximum == 600
    assert load_config(path, dialect="claude_code").specs()["s"].policies.server_timeout.maximum == 0.003  # named
    with pytest.raises(ConfigError, match="unknown dialect 'claude'; expected one of mcp_client, claude_code"):
        load_config(path, dialect="claude")


def test_an_unknown_key_is_reported_with_the_file_and_key_path(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "autoStart": True, "alwaysOn": 1}}}))
    with pytest.warns(ConfigWarning) as caught:
        load_config(path)
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        f"{path}: mcpServers.s.alwaysOn: not understood (dialect claude_code); ignored",
        f"{path}: mcpServers.s.autoStart: not understood (dialect claude_code); ignored",
    ]


def test_our_own_dialect_reports_unknown_entry_keys_and_lists_known_foreign_ones_as_ignored() -> None:
    data = {"mcpServers": {"s": {"command": "x", "alwaysAllow": ["q"], "policy": {}, "timeout_ms": 5}}}
    with pytest.warns(ConfigWarning, match=r"mcpServers\.s\.timeout_ms: not understood \(dialect mcp_client\)"):
        load_config(data)


def test_a_host_value_in_the_wrong_unit_or_kind_is_a_problem_at_the_hosts_path() -> None:
    data = {"mcp_servers": {"s": {"command": "x", "tool_timeout_sec": -1, "enabled": "yes"}}}
    with pytest.raises(ConfigError) as error:
        load_config(data)
    assert [str(p) for p in error.value.problems] == [
        "mcp_servers.s.tool_timeout_sec: must be a positive number of seconds, got -1",
        "mcp_servers.s.enabled: must be true or false, got a string",  # (a string is named, never shown)
    ]
    with pytest.raises(ConfigError, match=r"mcpServers\.s\.type: unknown transport \"ws\""):
        load_config({"mcpServers": {"s": {"url": "ws://x", "type": "ws"}}}, dialect="librechat")


def test_our_policy_block_wins_over_the_hosts_limits_field_by_field() -> None:
    entry = {"command": "x", "tool_timeout_sec": 30, "policy": {"timeout": {"maximum": 90, "idle": 5}}}
    timeout = load_config({"mcp_servers": {"s": entry}}).specs()["s"].policies.server_timeout
    assert (timeout.connect, timeout.maximum, timeout.idle) == (10, 90, 5)


def test_a_yaml_or_toml_file_that_does_not_parse_is_a_config_error(tmp_path: Path) -> None:
    bad_toml = tmp_path / "config.toml"
    bad_toml.write_text("[mcp_servers.s\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad_toml)
    bad_yaml = tmp_path / "librechat.yaml"
    bad_yaml.write_text("mcpServers: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad_yaml)


def test_include_and_exclude_tools_in_our_own_dialect() -> None:
    data = {"mcpServers": {"s": {"command": "x", "include_tools": ["read_*"], "exclude_tools": ["read_secret"]}}}
    spec = load_config(data).specs()["s"]
    assert spec.tool_filter.allows("read_file")
    assert not spec.tool_filter.allows("read_secret")
    assert not spec.tool_filter.allows("write_file")


def test_host_references_obey_the_allowed_environment() -> None:
    from mcp_client import AllowedEnvironment

    allowed = AllowedEnvironment({"FIGMA_OAUTH_TOKEN"}, ENV)
    data = {"mcp_servers": {"figma": {"url": "https://mcp.figma.com/mcp", "bearer_token_env_var": "AWS_SECRET"}}}
    with pytest.raises(ConfigError, match=r"mcp_servers\.figma\.headers\.Authorization: .*'AWS_SECRET' is not allowed"):
        load_config(data, environ=allowed)
    cursor = {"mcpServers": {"s": {"command": "x", "env": {"K": "${env:AWS_SECRET}"}}}}
    with pytest.raises(ConfigError, match="'AWS_SECRET' is not allowed"):
        load_config(cursor, environ=allowed, dialect="cursor")


def test_the_docs_table_names_every_key_of_every_dialect() -> None:
    from mcp_client.config.dialects.rules import DIALECTS

    text = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    rows = {line.split("`")[1]: line for line in text.splitlines() if line.startswith("| ") and "(`" in line}
    for name, dialect in DIALECTS.items():
        row = next(line for line in rows.values() if f"(`{name}`)" in line)
        assert dialect.doc in row
        missing = [key for key in dialect.keys if key != "policy" and f"`{key}`" not in row]
        assert missing == [], f"{name}: {missing}"


def test_a_problem_found_after_translation_names_the_hosts_own_key() -> None:
    data = {"extensions": {"g": {"type": "stdio", "cmd": 5, "args": "not-a-list"}}}
    with pytest.raises(ConfigError) as error:
        load_config(data)
    assert sorted(p.path for p in error.value.problems) == ["extensions.g.args", "extensions.g.cmd"]
    with pytest.raises(ConfigError, match=r"mcpServers\.s\.includeTools: must be a list"):
        load_config({"mcpServers": {"s": {"command": "x", "includeTools": "echo"}}}, dialect="gemini")


def test_a_token_written_where_a_variable_name_belongs_is_not_shown() -> None:
    secret = "sk-live-0123456789"
    entry = {"url": "https://h.example/mcp", "bearer_token_env_var": secret, "http_headers": {"A": secret, "B": 1}}
    with pytest.raises(ConfigError) as error:
        load_config({"mcp_servers": {"s": entry}})
    assert secret not in str(error.value)
    assert [p.path for p in error.value.problems] == [
        "mcp_servers.s.bearer_token_env_var",
        "mcp_servers.s.http_headers",
    ]
