"""mcp.json loading: the ecosystem's shape, our strict ``policy`` block, errors that name the key and the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_client import AllowedEnvironment, RestartPolicy, RetryPolicy, TimeoutPolicy
from mcp_client.config.load import ConfigError, load_config, parse_policy
from mcp_client.transports.http import HttpTransport
from mcp_client.transports.sse import SseTransport
from mcp_client.transports.stdio._transport import StdioTransport

FULL = {
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "search": {
            "command": "uvx",
            "args": ["search-server", "--index", "${INDEX:-main}"],
            "env": {"TOKEN": "${SEARCH_TOKEN}"},
            "cwd": "/srv",
            "type": "stdio",
            "alwaysAllow": ["query"],
            "autoApprove": [],
            "policy": {
                "timeout": {"idle": 30, "maximum": 600},
                "retry": {"attempts": 5},
                "tools": {"reindex*": {"timeout": {"idle": 300, "maximum": 3600}, "retry": None}},
                "annotations": {"readOnlyHint": {"retry": {"retry_idle_timeout": True}}},
            },
        },
        "docs": {
            "url": "https://docs.example.com/mcp",
            "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
            "transport": "streamable-http",
            "policy": {"timeout": 120},
        },
        "old": {"command": "legacy-server", "disabled": True},
    },
}
ENV = {"SEARCH_TOKEN": "s3cret", "DOCS_TOKEN": "d0cs"}


def problems(config: Any, **options: Any) -> list[str]:
    with pytest.raises(ConfigError) as error:
        load_config(config, **options)
    assert str(error.value)
    return [str(problem) for problem in error.value.problems]


def test_a_full_file_loads_with_other_hosts_keys_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(FULL))
    specs = load_config(path, environ=ENV).specs()
    assert set(specs) == {"search", "docs"}  # "old" is disabled

    search = specs["search"].transport
    assert isinstance(search, StdioTransport)
    assert (search.command, search.args, search.cwd) == ("uvx", ("search-server", "--index", "main"), "/srv")
    assert search.env == {"TOKEN": "s3cret"}
    docs = specs["docs"].transport
    assert isinstance(docs, HttpTransport)
    assert docs.url == "https://docs.example.com/mcp"
    assert docs.headers == {"Authorization": "Bearer d0cs"}

    rules = specs["search"].policies
    assert rules.server_timeout == TimeoutPolicy(idle=30, maximum=600)
    assert rules.server_retry == RetryPolicy(attempts=5)
    assert rules.resolve("reindex_all") == (TimeoutPolicy(idle=300, maximum=3600), None)
    assert specs["docs"].policies.server_timeout == TimeoutPolicy(maximum=120)  # a number is the maximum


@pytest.mark.parametrize("key", ["type", "transport"])
def test_an_sse_entry_is_the_http_sse_transport(key: str) -> None:
    """Claude Desktop's and Cursor's ``"type": "sse"`` (and ``"transport": "sse"``) name the 2024-11-05 transport."""
    entry = {"url": "https://old.example.com/sse", "headers": {"Authorization": "Bearer ${TOKEN}"}, key: "sse"}
    specs = load_config({"mcpServers": {"old": entry}}, environ={"TOKEN": "t0ken"}).specs()
    transport = specs["old"].transport
    assert isinstance(transport, SseTransport)
    assert transport.url == "https://old.example.com/sse"
    assert transport.headers == {"Authorization": "Bearer t0ken"}


def test_vs_code_servers_key_is_accepted() -> None:
    assert set(load_config({"servers": {"a": {"command": "x"}}}).servers) == {"a"}
    assert problems({"servers": {}, "mcpServers": {}}) == ["give 'mcpServers' or 'servers', not both"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ({"timeout": {"idle": -1}}, "policy.timeout.idle: must be a positive number of seconds or null, got -1"),
        ({"timeout": {"idle": 0}}, "policy.timeout.idle: must be a positive number of seconds or null, got 0"),
        (
            {"timeout": {"idle": "30"}},
            "policy.timeout.idle: must be a positive number of seconds or null, got a string",
        ),
        ({"timeout": {"maximum": True}}, "policy.timeout.maximum: must be a positive number of seconds or null"),
        ({"timeout": {"idel": 3}}, "policy.timeout.idel: unknown key; did you mean 'idle'?"),
        ({"timeout": {"pause_maximum": 1}}, "policy.timeout.pause_maximum: must be true or false, got 1"),
        ({"retry": {"attempts": 0}}, "policy.retry.attempts: must be an integer >= 1, got 0"),
        ({"retry": {"attempts": 2.5}}, "policy.retry.attempts: must be an integer >= 1, got 2.5"),
        ({"retry": {"multiplier": 0.5}}, "policy.retry.multiplier: must be a number >= 1, got 0.5"),
        ({"retry": {"max_backoff": -1}}, "policy.retry.max_backoff: must be a number of seconds >= 0, got -1"),
        ({"retry": {"backoff": 1}}, "policy.retry.backoff: unknown key"),
        ({"retries": {}}, "policy.retries: unknown key; did you mean 'retry'?"),
        ({"tools": {"x": {"timeout": "fast"}}}, "policy.tools.x.timeout: must be an object, got a string"),
        ({"tools": {"x": {"tools": {}}}}, "policy.tools.x.tools: unknown key"),
        ({"tools": {"": {}}}, 'policy.tools."": a tool name or pattern must be a non-empty string'),
        ({"annotations": {"readOnly": {}}}, 'policy.annotations.readOnly: unknown annotation "readOnly"'),
        ({"tools": []}, "policy.tools: must be an object, got a list"),
    ],
)
def test_policy_errors_name_the_key_and_the_reason(policy: dict[str, Any], expected: str) -> None:
    (problem,) = problems({"mcpServers": {"search": {"command": "x", "policy": policy}}})
    assert problem.startswith(f"mcpServers.search.{expected}")


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ({"a/b": {"command": "x"}}, "mcpServers.a/b: a server name must not contain '/'"),
        ({"": {"command": "x"}}, 'mcpServers."": a server name must be a non-empty string'),
        ({"s": {"args": []}}, "mcpServers.s: needs 'command' (a stdio server) or 'url' (an HTTP server)"),
        ({"s": {"command": "x", "url": "u"}}, "mcpServers.s: has both 'command' (stdio) and 'url' (HTTP)"),
        ({"s": {"command": ""}}, "mcpServers.s: 'command' must not be empty"),
        ({"s": {"command": "x", "args": "a b"}}, "mcpServers.s.args: must be a list, got a string"),
        ({"s": {"command": "x", "args": [1]}}, "mcpServers.s.args.0: must be a string, got 1"),
        ({"s": {"command": "x", "env": {"PORT": 80}}}, "mcpServers.s.env.PORT: must be a string, got 80"),
        ({"s": {"command": "x", "type": "sse"}}, "mcpServers.s: transport \"sse\" needs 'url'"),
        ({"s": {"url": "u", "type": "stdio"}}, "mcpServers.s: transport \"stdio\" needs 'command'"),
        ({"s": {"url": "u", "type": "ws"}}, 'mcpServers.s: unknown transport "ws"'),
        ({"s": "uvx server"}, "mcpServers.s: must be an object, got a string"),
    ],
)
def test_server_errors_name_the_key_and_the_reason(servers: dict[str, Any], expected: str) -> None:
    (problem,) = problems({"mcpServers": servers})
    assert problem.startswith(expected)


def test_every_problem_is_reported_at_once() -> None:
    config = {
        "mcpServers": {
            "a": {"command": "x", "policy": {"timeout": {"idle": -1}, "retry": {"attempts": 0}}},
            "b": {"url": 3},
        }
    }
    assert problems(config) == [
        "mcpServers.a.policy.timeout.idle: must be a positive number of seconds or null, got -1",
        "mcpServers.a.policy.retry.attempts: must be an integer >= 1, got 0",
        "mcpServers.b.url: must be a string, got 3",
    ]


def test_file_level_errors(tmp_path: Path) -> None:
    assert problems({}) == ["mcpServers: is required"]
    assert problems(tmp_path / "missing.json")[0].startswith("cannot read the file")
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {,}}')
    (problem,) = problems(broken)
    assert problem.startswith("not valid JSON")
    assert "line 1" in problem
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    assert problems(listed) == ["must be a JSON object, got list"]
    with pytest.raises(ConfigError, match=r"list\.json: must be a JSON object"):
        load_config(listed)


def test_environment_references() -> None:
    config = {"mcpServers": {"s": {"url": "${HOST:-http://localhost}/mcp", "headers": {"X": "${A}-${B:-b}"}}}}
    server = load_config(config, environ={"A": "a", "B": ""}).servers["s"]
    assert server.url == "http://localhost/mcp"
    assert server.headers == {"X": "a-b"}  # as in a shell, ":-" also replaces an empty value
    assert problems(config, environ={}) == ["mcpServers.s.headers.X: environment variable 'A' is not set"]
    assert load_config({"mcpServers": {"s": {"command": "$HOME/x"}}}, environ={}).servers["s"].command == "$HOME/x"


def test_null_means_no_limits_and_no_retries() -> None:
    rules = parse_policy({"timeout": None, "retry": None, "tools": {"t": {"timeout": {"idle": None}}}})
    assert rules.server_timeout == TimeoutPolicy.unlimited()
    assert rules.server_retry is None
    assert rules.resolve("t")[0] == TimeoutPolicy.unlimited()
    partial = parse_policy({"timeout": {"idle": None}})
    assert partial.server_timeout == TimeoutPolicy(idle=None)


def test_parse_policy_errors_use_the_given_path() -> None:
    with pytest.raises(ConfigError, match=r"^servers\.x\.policy\.timeout\.idle: must be a positive number"):
        parse_policy({"timeout": {"idle": -2}}, path="servers.x.policy")


def test_annotation_keys_accept_mcp_and_python_names() -> None:
    rules = parse_policy({"annotations": {"readOnlyHint": {"timeout": {"idle": 1}}, "destructive": {}}})
    assert list(rules.annotations) == ["read_only", "destructive"]


def test_the_documented_example_loads() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    block = text.split("```json\n", 1)[1].split("```", 1)[0]
    specs = load_config(json.loads(block), environ={"SEARCH_API_KEY": "k", "DOCS_TOKEN": "t"}).specs()
    assert len(specs) == 3


def test_unset_variables_are_reported_with_the_other_problems() -> None:
    servers = {
        "search": {
            "command": "${SEARCH_BIN}",
            "args": ["--index", "${SEARCH_INDEX:-main}"],
            "env": {"KEY": "${SEARCH_KEY}"},
            "policy": {"timeout": {"idle": -1}},
        },
        "docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
        "off": {"command": "${NEVER_SET}", "disabled": True},
    }
    with pytest.raises(ConfigError) as caught:
        load_config({"mcpServers": servers}, environ={})

    paths = [problem.path for problem in caught.value.problems]
    assert "mcpServers.search.policy.timeout.idle" in paths
    assert {
        "mcpServers.search.command": "environment variable 'SEARCH_BIN' is not set",
        "mcpServers.search.env.KEY": "environment variable 'SEARCH_KEY' is not set",
        "mcpServers.docs.headers.Authorization": "environment variable 'DOCS_TOKEN' is not set",
    }.items() <= {problem.path: problem.reason for problem in caught.value.problems}.items()
    assert len(paths) == 4  # the default and the disabled server are no problem


def test_a_stdio_server_may_have_a_restart_policy() -> None:
    config = load_config(
        {
            "mcpServers": {
                "kept": {"command": "x", "restart": {"max_restarts": 2, "window": 30, "initial_backoff": 0.5}},
                "defaults": {"command": "y", "restart": {}},
                "plain": {"command": "z"},
            }
        }
    )
    kept = config.servers["kept"].transport_spec()
    assert isinstance(kept, StdioTransport)
    assert kept.restart == RestartPolicy(max_restarts=2, window=30, initial_backoff=0.5)
    defaults = config.servers["defaults"].transport_spec()
    assert isinstance(defaults, StdioTransport)
    assert defaults.restart == RestartPolicy()
    plain = config.servers["plain"].transport_spec()
    assert isinstance(plain, StdioTransport)
    assert plain.restart is None


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ({"url": "u", "restart": {}}, "mcpServers.s: 'restart' applies to stdio servers (with 'command') only"),
        ({"command": "x", "restart": {"max_restart": 2}}, "mcpServers.s.restart.max_restart: unknown key; did you"),
        ({"command": "x", "restart": {"max_restarts": -1}}, "mcpServers.s.restart.max_restarts: "),
        ({"command": "x", "restart": {"window": -1}}, "mcpServers.s.restart.window: must be a number of seconds"),
    ],
)
def test_restart_errors_name_the_key(server: dict[str, Any], expected: str) -> None:
    (problem,) = problems({"mcpServers": {"s": server}})
    assert problem.startswith(expected)


def test_an_allow_list_of_variables_for_files_the_host_did_not_write() -> None:
    environ = {"TOKEN": "t-1", "AWS_SECRET_ACCESS_KEY": "aws-secret", "HOME": "/home/u"}
    untrusted = {
        "mcpServers": {
            "s": {
                "url": "https://mcp.example/mcp?leak=${AWS_SECRET_ACCESS_KEY}",
                "headers": {"Authorization": "Bearer ${TOKEN}", "X-Home": "${HOME:-/nowhere}"},
            }
        }
    }
    allowed = AllowedEnvironment({"TOKEN"}, environ)
    with pytest.raises(ConfigError) as caught:
        load_config(untrusted, environ=allowed)
    reported = sorted(str(problem) for problem in caught.value.problems)
    assert reported == [
        "mcpServers.s.headers.X-Home: environment variable 'HOME' is not allowed",
        "mcpServers.s.url: environment variable 'AWS_SECRET_ACCESS_KEY' is not allowed",
    ]
    assert "aws-secret" not in str(caught.value)
    assert "aws-secret" not in repr(allowed)
    tidy = {"mcpServers": {"s": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}
    assert load_config(tidy, environ=allowed).servers["s"].headers == {"Authorization": "Bearer t-1"}
    assert dict(allowed) == {"TOKEN": "t-1"}
    assert load_config(untrusted, environ=environ).servers["s"].headers["X-Home"] == "/home/u"  # no list: trusted


def test_parse_policy_refuses_a_limit_of_calls_in_flight_it_would_drop() -> None:
    assert parse_policy({"max_in_flight": None, "timeout": {"idle": 5}}).server.timeout.idle == 5  # null: none
    with pytest.raises(ConfigError) as caught:
        parse_policy({"max_in_flight": 4, "timeout": {"idle": 5}})
    [problem] = caught.value.problems
    assert problem.path == "policy.max_in_flight"
    assert "ServerSpec" in problem.reason
