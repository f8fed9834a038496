"""Hostile and malformed host files: every one a ConfigError with a path, bounded in CPU, and no secret echoed;
a host's literal text kept literal."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from mcp_client.config import ConfigWarning
from mcp_client.config.load import ConfigError, load_config
from mcp_client.transports.stdio._transport import StdioTransport

SECRET = "sk-live-0123456789abcdef"


def refused(source: Any, **options: Any) -> ConfigError:
    with pytest.raises(ConfigError) as error:
        load_config(source, environ={}, **options)
    return error.value


def test_a_yaml_alias_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    lines += ["mcpServers:", "  s:", "    command: x", "    args: *a8"]  # 9**9 strings once expanded
    path = tmp_path / "librechat.yaml"
    path.write_text("\n".join(lines) + "\n")
    error = refused(path)
    [problem] = error.problems
    assert "too large" in problem.reason
    assert len(str(error)) < 500


def test_a_yaml_anchor_reused_a_few_times_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "librechat.yaml"
    path.write_text("base: &b {command: x, timeout: 5000}\nmcpServers:\n  s1: *b\n  s2:\n    <<: *b\n")
    specs = load_config(path, environ={}).specs()
    assert [spec.policies.server_timeout.maximum for spec in specs.values()] == [5.0, 5.0]


def test_a_file_larger_than_any_configuration_is_refused(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {}, "pad": "' + "x" * (11 * 1024 * 1024) + '"}')
    [problem] = refused(path).problems
    assert problem.reason.startswith("the file is too large")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".mcp.json", '{"mcpServers": {"s": {"command": "x", "timeout": 1' + "0" * 5000 + "}}}"),
        (".mcp.json", '{"mcpServers": {"s": {"command": "x", "x": ' + "[" * 100_000 + "]" * 100_000 + "}}}"),
        (".vscode/mcp.json", '// c\n{"servers": {"s": {"command": "x", "x": ' + "[" * 100_000 + "]" * 100_000 + "}}}"),
    ],
    ids=["int-of-5000-digits", "nested-100k", "nested-100k-jsonc"],
)
def test_json_the_parser_cannot_hold_is_a_config_error(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    [problem] = refused(path).problems
    assert problem.path == ""
    assert "not valid JSON" in problem.reason


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs a /dev/zero (an endless file)")
def test_an_endless_file_is_read_only_up_to_the_limit() -> None:
    [problem] = refused("/dev/zero").problems
    assert problem.reason.startswith("the file is too large")


def test_a_nul_in_the_path_is_a_config_error() -> None:
    [problem] = refused("bad\0name.json").problems
    assert "cannot read" in problem.reason


@pytest.mark.parametrize(
    ("name", "text", "path"),
    [
        ("librechat.yaml", "mcpServers:\n  s:\n    command: x\n    args: [2001-12-14]\n", "mcpServers.s.args.0"),
        ("librechat.yaml", "mcpServers:\n  s:\n    command: !!binary aGVsbG8=\n", "mcpServers.s.command"),
        ("config.toml", "[mcp_servers.s]\ncommand = 'x'\nargs = [1979-05-27]\n", "mcp_servers.s.args.0"),
        ("config.toml", "[mcp_servers.s]\ncommand = 'x'\nenv = {A = 1979-05-27T07:32:00Z}\n", "mcp_servers.s.env.A"),
    ],
    ids=["yaml-date", "yaml-binary", "toml-date", "toml-datetime"],
)
def test_values_json_has_no_word_for_are_config_errors(tmp_path: Path, name: str, text: str, path: str) -> None:
    file = tmp_path / name
    file.write_text(text)
    [problem] = refused(file).problems
    assert problem.path == path
    assert "must be a string" in problem.reason


@pytest.mark.parametrize(
    "data",
    [
        {"mcpServers": {"s": {"command": "x", "timeout": 10**400}}},
        {"mcpServers": {"s": {"command": "x", "policy": {"timeout": {"idle": 10**400}}}}},
        {"mcpServers": {"s": {"command": "x", "policy": {"retry": {"max_backoff": 10**400}}}}},
    ],
    ids=["host-ms", "ours-duration", "ours-non-negative"],
)
def test_an_integer_too_large_for_a_float_is_a_config_error(data: dict[str, Any]) -> None:
    dialect = "claude_code" if "timeout" in data["mcpServers"]["s"] else None
    [problem] = refused(data, dialect=dialect).problems
    assert problem.path.startswith("mcpServers.s.")
    assert "must be a positive number" in problem.reason or "must be a number" in problem.reason


@pytest.mark.parametrize(
    "entry",
    [
        {"command": "x", "env": {"TOKEN": [SECRET]}},
        {"command": [SECRET]},
        {"command": "x", "args": f"--token {SECRET}"},
        {"url": "https://h.example/mcp", "headers": [f"Authorization: Bearer {SECRET}"]},
        {"url": "https://h.example/mcp", "headers": {"Authorization": {"value": SECRET}}},
        {"command": "x", "policy": {"timeout": {"idle": SECRET}}},
    ],
    ids=["env-list", "command-list", "args-string", "headers-list", "header-object", "duration-string"],
)
def test_a_value_of_the_wrong_kind_is_named_by_its_kind_not_shown(entry: dict[str, Any]) -> None:
    error = refused({"mcpServers": {"s": entry}})
    assert SECRET not in str(error)
    assert all(SECRET not in problem.reason for problem in error.problems)


@pytest.mark.parametrize(
    ("data", "dialect"),
    [
        ({"mcp_servers": {"s": {"command": "x", "env": {"A": [SECRET]}}}}, "codex"),
        ({"mcp_servers": {"s": {"command": "x", "tool_timeout_sec": SECRET}}}, "codex"),
        ({"extensions": {"s": {"type": "stdio", "cmd": "x", "envs": [SECRET]}}}, "goose"),
        ({"mcpServers": {"s": {"httpUrl": "https://h.example/", "headers": [SECRET]}}}, "gemini"),
    ],
    ids=["codex-env", "codex-timeout", "goose-envs", "gemini-headers"],
)
def test_a_hosts_value_of_the_wrong_kind_is_not_shown(data: dict[str, Any], dialect: str) -> None:
    error = refused(data, dialect=dialect)
    assert SECRET not in str(error)


def test_codex_keeps_a_literal_dollar_brace_literal_as_codex_does() -> None:
    """Codex passes ``args``/``env`` as written (it expands no ``${VAR}``); only the keys that name a variable
    (``bearer_token_env_var``, ``env_http_headers``, ``env_vars``) read the environment."""
    data = {"mcp_servers": {"s": {"command": "sh", "args": ["-c", "echo ${HOME}"], "env": {"P": "$${X}"}}}}
    spec = load_config(data, environ={"HOME": "/home/someone", "X": "x"}).specs()["s"]
    assert isinstance(spec.transport, StdioTransport)
    assert spec.transport.args == ("-c", "echo ${HOME}")
    assert spec.transport.env == {"P": "$${X}"}


def test_codex_env_vars_forwards_the_named_variables() -> None:
    data = {"mcp_servers": {"s": {"command": "x", "env_vars": ["API_KEY2", {"name": "LOCAL", "source": "local"}]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)
        spec = load_config(data, environ={"API_KEY2": "k2", "LOCAL": "l"}).specs()["s"]
    assert isinstance(spec.transport, StdioTransport)
    assert spec.transport.env == {"API_KEY2": "k2", "LOCAL": "l"}


def test_codex_documented_approval_keys_are_understood() -> None:
    entry = {"command": "x", "default_tools_approval_mode": "prompt", "tools": {"open": {"approval_mode": "approve"}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)
        load_config({"mcp_servers": {"s": entry}}, environ={})


def test_a_server_name_that_is_not_a_string_is_a_problem_not_a_renamed_server(tmp_path: Path) -> None:
    path = tmp_path / "librechat.yaml"
    path.write_text("mcpServers:\n  ~:\n    command: x\n")
    [problem] = refused(path).problems
    assert "server name" in problem.reason


def test_claude_desktop_keeps_a_literal_dollar_brace_literal_as_claude_desktop_does() -> None:
    """Claude Desktop expands no ``${VAR}`` in ``claude_desktop_config.json`` (its documented keys are ``command``,
    ``args`` and ``env``, passed as written: https://github.com/modelcontextprotocol/servers/issues/1039)."""
    data = {"mcpServers": {"s": {"command": "sh", "args": ["-c", "echo ${HOME}"], "env": {"T": "${SECRET_TOKEN}"}}}}
    spec = load_config(data, environ={"HOME": "/home/someone"}, dialect="claude_desktop").specs()["s"]
    assert isinstance(spec.transport, StdioTransport)
    assert spec.transport.args == ("-c", "echo ${HOME}")
    assert spec.transport.env == {"T": "${SECRET_TOKEN}"}


def test_librechat_per_user_placeholders_are_reported_not_sent_silently() -> None:
    """LibreChat fills ``{{LIBRECHAT_USER_ID}}`` and the like per user in ``headers``, ``url`` and ``env``
    (https://www.librechat.ai/docs/configuration/librechat_yaml/object_structure/mcp_servers): not done here."""
    entry = {"type": "sse", "url": "https://h.example/sse", "headers": {"X-User-ID": "{{LIBRECHAT_USER_ID}}"}}
    with pytest.warns(ConfigWarning, match=r"mcpServers\.s\.headers\.X-User-ID: .*\{\{LIBRECHAT_USER_ID\}\}"):
        load_config({"mcpServers": {"s": entry}}, environ={}, dialect="librechat")
