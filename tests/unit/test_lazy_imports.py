"""What ``import mcp_client`` loads: its public names resolve on first use, and what a program does not use (the
HTTP stack, OAuth, OpenTelemetry, rich, the config models) is not loaded. Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mcp_client

NEVER_WITH_STDIO = ("httpx2", "httpx", "httpcore2", "mcp_client.auth", "opentelemetry", "rich", "joserfc")


def _loaded(code: str, watched: tuple[str, ...]) -> list[str]:
    program = f"import sys\n{code}\nimport json\nprint(json.dumps([m for m in {list(watched)!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_every_public_name_resolves_to_its_module() -> None:
    assert set(mcp_client._LAZY) == set(mcp_client.__all__) - {"__version__"}
    for name in mcp_client.__all__:
        value = getattr(mcp_client, name)
        assert value is not None
        if name != "__version__" and hasattr(value, "__module__") and not name.isupper():
            assert name in dir(mcp_client)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = mcp_client.nope


def test_importing_the_package_loads_no_model_and_no_http() -> None:
    watched = ("pydantic", "mcp_types", "anyio", "tenacity", "mcp_client.client", *NEVER_WITH_STDIO)
    assert _loaded("import mcp_client", watched) == []


def test_a_stdio_program_loads_no_http_stack_no_auth_and_no_config() -> None:
    watched = ("mcp_client.config", "mcp_client.group", "mcp_client.transports.http", *NEVER_WITH_STDIO)
    assert _loaded("from mcp_client import Client, TimeoutPolicy, stdio", watched) == []


def test_the_http_stack_loads_with_http() -> None:
    assert _loaded("from mcp_client import http", ("httpx2", "mcp_client.transports.http")) == [
        "httpx2",
        "mcp_client.transports.http",
    ]
