"""The import-rule check of CI (.ci/check_layers.py): it fails on each kind of violation, and passes a clean tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "check_layers.py"

CLEAN = {
    "mcp_client/__init__.py": "from mcp_client.client import Client\n",
    "mcp_client/errors.py": "class MCPClientError(Exception): ...\n",
    "mcp_client/policy/__init__.py": "from mcp_client.policy.timeout import Deadline\n",
    "mcp_client/policy/timeout.py": "import math\n\nimport tenacity\n\nfrom mcp_client.errors import MCPClientError\n",
    "mcp_client/session.py": "import anyio\nfrom mcp_client import policy\nfrom mcp_client.transports.base import C\n",
    "mcp_client/calls/__init__.py": "from mcp_client.session import Session\n",
    "mcp_client/client.py": "from mcp_client.calls import runner\nfrom mcp_client.transports.http import http\n",
    "mcp_client/protocol/__init__.py": "",
    "mcp_client/protocol/negotiate.py": "from mcp_client.protocol.era import Era\n",
    "mcp_client/transports/__init__.py": "",
    "mcp_client/transports/base.py": "from mcp_client.errors import MCPClientError\n",
    "mcp_client/transports/http.py": "from . import _sse\nfrom mcp_client.protocol.era import Era\n",
    "mcp_client/testing/peer.py": "import anyio\n" * 600,  # testing/ may be as long as it likes
    "mcp_client/cli.py": "x = 1\n" * 900,  # so may the command line interface
    "mcp_client/_cli_demo.py": "x = 1\n" * 600,
    "mcp_client/transports/stdio.py": "x = 1\n" * 10,
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True, timeout=60, check=False
    )


def test_a_tree_that_keeps_every_rule_passes(tmp_path: Path) -> None:
    result = _check(_tree(tmp_path, CLEAN))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == f"check_layers: {len(CLEAN)} modules, every import rule holds"


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("mcp_client/policy/retry.py", "import anyio\n", "mcp_client.policy.retry imports anyio"),
        ("mcp_client/policy/retry.py", "def f():\n    import httpx.codes\n", "imports httpx.codes"),
        ("mcp_client/policy/retry.py", "from mcp_client.events import Slow\n", "imports mcp_client.events.Slow"),
        ("mcp_client/policy/retry.py", "from .. import client\n", "imports mcp_client.client"),
        ("mcp_client/session.py", "from mcp_client.calls.runner import CallRunner\n", "imports mcp_client.calls"),
        ("mcp_client/session.py", "from mcp_client.call import Call\n", "imports mcp_client.call.Call"),
        ("mcp_client/session.py", "from mcp_client.transports.http import H\n", "imports mcp_client.transports.http"),
        ("mcp_client/server_requests.py", "import mcp_client.client\n", "imports mcp_client.client"),
        ("mcp_client/protocol/negotiate.py", "from mcp_client.session import Session\n", "imports mcp_client.session"),
        ("mcp_client/protocol/x.py", "from mcp_client.transports._json import dumps\n", "transports._json"),
        ("mcp_client/transports/http.py", "from ..protocol.negotiate import ERA_CACHE\n", "protocol.negotiate"),
        ("mcp_client/transports/http.py", "from mcp_client.session import Session\n", "imports mcp_client.session"),
        ("mcp_client/transports/stdio.py", "from mcp_client.calls import runner\n", "imports mcp_client.calls"),
        ("mcp_client/big.py", "x = 1\n" * 501, "501 lines: a module may have at most 500"),
        ("mcp_client/transports/http/exchange.py", "x = 1\n" * 501, "501 lines"),
        ("mcp_client/transports/http.py", "x = 1\n" * 501, "501 lines"),
    ],
)
def test_each_kind_of_violation_fails_the_check(tmp_path: Path, name: str, text: str, expected: str) -> None:
    result = _check(_tree(tmp_path, {**CLEAN, name: text}))
    assert result.returncode == 1, result.stdout + result.stderr
    (line,) = result.stdout.splitlines()  # exactly the violation planted, nothing else
    assert line.startswith(f"{name}:")
    assert expected in line


def test_a_root_without_the_package_is_an_error(tmp_path: Path) -> None:
    result = _check(tmp_path)
    assert result.returncode == 2
    assert "no mcp_client/ package" in result.stderr


def test_the_package_itself_keeps_every_rule() -> None:
    result = _check(SCRIPT.parents[1])
    assert result.returncode == 0, result.stdout + result.stderr
