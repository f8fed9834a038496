"""The import-rule check of CI (.ci/check_layers.py): it fails on each kind of violation, warns on a private name
imported across folders, and passes a clean tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "check_layers.py"

CLEAN = {
    "mcp_client/__init__.py": "from mcp_client.client.client import Client\nfrom mcp_client._lazy import lazy_face\n",
    "mcp_client/_lazy.py": "import importlib\n",
    "mcp_client/_types.py": "JSONObject = dict\n",
    "mcp_client/_backends/__init__.py": "",
    "mcp_client/_backends/base.py": "import asyncio\n",
    "mcp_client/_backends/asyncio.py": "from mcp_client._backends.base import Backend\n",
    "mcp_client/errors.py": "from mcp_client.outcomes import for_model\n",
    "mcp_client/outcomes.py": "import enum\n",
    "mcp_client/events.py": "from mcp_client.errors import MCPClientError\nfrom mcp_client.policy.timeout import T\n",
    "mcp_client/group/group.py": "from mcp_client.client.client import Client\nfrom mcp_client.config import load\n",
    "mcp_client/otel.py": "from mcp_client import events\n",
    "mcp_client/config/__init__.py": "",
    "mcp_client/config/load.py": "from mcp_client.transports.stdio import stdio\n",
    "mcp_client/policy/__init__.py": "import math\n",  # (run by each import of a policy module)
    "mcp_client/policy/backoff.py": "import math\n",
    "mcp_client/policy/timeout.py": "import math\n\nimport tenacity\n\nfrom mcp_client.errors import MCPClientError\n",
    "mcp_client/protocol/__init__.py": "",
    "mcp_client/protocol/era.py": "from mcp_client._types import JSONObject\n",
    "mcp_client/protocol/negotiate.py": "from mcp_client.protocol.era import Era\n",
    "mcp_client/transports/__init__.py": "",
    "mcp_client/transports/base.py": "from mcp_client.errors import MCPClientError\n",
    "mcp_client/transports/_sse.py": "",
    "mcp_client/transports/http.py": "from . import _sse\nfrom mcp_client.protocol.era import Era\n",
    "mcp_client/transports/stdio/__init__.py": "from mcp_client.transports.stdio._transport import stdio\n",
    "mcp_client/transports/stdio/_transport.py": "from mcp_client.transports._sse import decode\n" * 10,
    "mcp_client/auth/__init__.py": "from mcp_client.transports.base import C\n",
    "mcp_client/session/__init__.py": "",
    "mcp_client/session/session.py": (
        "import anyio\nfrom mcp_client import policy\nfrom mcp_client.transports.base import C\n"
    ),
    "mcp_client/calls/__init__.py": "from mcp_client.session.session import Session\n",
    "mcp_client/cache/__init__.py": "from mcp_client.calls import runner\n",
    "mcp_client/subscriptions/__init__.py": "from mcp_client.session.session import Session\n",
    "mcp_client/extensions/__init__.py": "",
    "mcp_client/extensions/skills.py": "from mcp_client.protocol.era import Era\n",
    "mcp_client/client/__init__.py": "",
    "mcp_client/client/client.py": (
        "from mcp_client.calls import runner\nfrom mcp_client.transports.http import http\n"
        "from mcp_client.client import tools\nfrom mcp_client.cache import C\n"
        "from mcp_client.extensions import skills\n"
    ),
    "mcp_client/client/tools.py": "from mcp_client.errors import ToolError\n",
    "mcp_client/sync/__init__.py": "from mcp_client import Client\nfrom mcp_client.group import ClientGroup\n",
    "mcp_client/testing/peer.py": "import anyio\n" * 600,  # testing/ may be as long as it likes
    "mcp_client/cli/__init__.py": "from mcp_client.sync import run\n" + "x = 1\n" * 900,  # so may the command line
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
    assert result.stdout.splitlines() == [
        f"check_layers: {len(CLEAN)} modules (6 top-level), 6 of 6 rules held, 0 circle(s), 0 upward import(s), "
        "0 across the wings, 0 private-name warning(s)"
    ]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        # the table: up a row, up a rank inside a row, across the wings, a module in no row
        ("mcp_client/protocol/era.py", "from mcp_client.session.session import S\n", "wire (session/) sits above"),
        ("mcp_client/_types.py", "from mcp_client.outcomes import Ran\n", "in core, outcomes.py sits above _types.py"),
        ("mcp_client/outcomes.py", "from mcp_client.policy.backoff import B\n", "policy/ sits above outcomes.py"),
        ("mcp_client/config/env.py", "from mcp_client.group.group import G\n", "in host, group/ sits above config/"),
        ("mcp_client/group/group.py", "from mcp_client import Client\n", "imports mcp_client.Client: in host"),
        ("mcp_client/cache/store.py", "from mcp_client.client.client import C\n", "client (client/) sits above"),
        ("mcp_client/cache/__init__.py", "from mcp_client.subscriptions import S\n", "the wings never import each"),
        ("mcp_client/extensions/skills.py", "from ..cache import walk\n", "the wings never import each other"),
        ("mcp_client/transports/memory.py", "from mcp_client.auth import A\n", None),  # one row: no violation
        ("mcp_client/_types.py", "from mcp_client.errors import E\n", "in core, errors.py sits above _types.py"),
        ("mcp_client/scratch.py", "x = 1\n", "mcp_client.scratch is in no row of the layer table"),
        # every import counts: under TYPE_CHECKING, inside a function
        (
            "mcp_client/policy/retry.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mcp_client.events import Slow\n",
            "imports mcp_client.events.Slow: in core",
        ),
        ("mcp_client/transports/base.py", "def f():\n    from mcp_client.session import s\n", "sits above transport"),
        # the rules beside the table
        ("mcp_client/policy/retry.py", "import anyio\n", "mcp_client.policy.retry imports anyio (policy/ is pure"),
        ("mcp_client/policy/retry.py", "def f():\n    import httpx.codes\n", "imports httpx.codes"),
        ("mcp_client/session/x.py", "from mcp_client.transports.http import H\n", "through base.py only"),
        ("mcp_client/transports/http.py", "from ..protocol.negotiate import ERA_CACHE\n", "protocol.negotiate"),
        # size
        ("mcp_client/group/group.py", "x = 1\n" * 501, "501 lines: a module may have at most 500"),
        ("mcp_client/transports/http/exchange.py", "x = 1\n" * 501, "501 lines"),
    ],
)
def test_each_kind_of_violation_fails_the_check(tmp_path: Path, name: str, text: str, expected: str | None) -> None:
    result = _check(_tree(tmp_path, {**CLEAN, name: text}))
    *found, summary = result.stdout.splitlines()
    if expected is None:
        assert result.returncode == 0, result.stdout
        return
    assert result.returncode == 1, result.stdout + result.stderr
    (line,) = found  # exactly the violation planted, nothing else
    assert line.startswith(f"{name}:")
    assert expected in line
    assert "5 of 6 rules held" in summary


def test_an_upward_import_is_counted(tmp_path: Path) -> None:
    result = _check(_tree(tmp_path, {**CLEAN, "mcp_client/protocol/era.py": "from mcp_client.calls import r\n"}))
    assert result.returncode == 1
    assert ", 1 upward import(s), 0 across the wings," in result.stdout.splitlines()[-1]


def test_a_circle_of_two_files_fails_once_with_both(tmp_path: Path) -> None:
    planted = {  # inside one folder, so the table allows each import: only the circle check sees it
        "mcp_client/client/tools.py": "from mcp_client.client.client import Client\n",
    }
    result = _check(_tree(tmp_path, {**CLEAN, **planted}))
    assert result.returncode == 1
    *found, summary = result.stdout.splitlines()
    assert found == ["mcp_client/client/client.py:3: circle of 2 files: client/client.py, client/tools.py"]
    assert "5 of 6 rules held, 1 circle(s), 0 upward import(s)" in summary


def test_a_circle_of_three_files_fails_once_with_all_three(tmp_path: Path) -> None:
    planted = {
        "mcp_client/client/tools.py": "from mcp_client.client import pins\n",
        "mcp_client/client/pins.py": "def f():\n    from mcp_client.client.client import Client\n",
    }
    result = _check(_tree(tmp_path, {**CLEAN, **planted}))
    assert result.returncode == 1
    *found, summary = result.stdout.splitlines()
    assert found == [
        "mcp_client/client/client.py:3: circle of 3 files: client/client.py, client/pins.py, client/tools.py"
    ]
    assert "1 circle(s)" in summary


def test_two_circles_are_two_findings(tmp_path: Path) -> None:
    planted = {
        "mcp_client/client/tools.py": "from mcp_client.client.client import Client\n",
        "mcp_client/policy/backoff.py": "import math\n",
        "mcp_client/policy/__init__.py": "from mcp_client.policy.timeout import Deadline\n",
        "mcp_client/policy/timeout.py": "from mcp_client.policy import Deadline\n",
    }
    result = _check(_tree(tmp_path, {**CLEAN, **planted}))
    assert result.returncode == 1
    assert "2 circle(s)" in result.stdout.splitlines()[-1]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "mcp_client/config/load.py",
            "from mcp_client.transports.stdio._transport import stdio\n",
            "imports the private module mcp_client.transports.stdio._transport, private to transports/",
        ),
        (
            "mcp_client/client/tools.py",
            "from mcp_client.errors import _detail\n",
            "imports the private name mcp_client.errors._detail, private to errors.py",
        ),
        ("mcp_client/calls/__init__.py", "from mcp_client.transports import _sse\n", "private to transports/"),
    ],
)
def test_a_private_name_from_another_folder_warns_without_failing(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    result = _check(_tree(tmp_path, {**CLEAN, name: text}))
    assert result.returncode == 0, result.stdout
    *found, summary = result.stdout.splitlines()
    (line,) = found
    assert line.startswith(f"{name}:1: warning: ")
    assert expected in line
    assert summary.endswith(
        "6 of 6 rules held, 0 circle(s), 0 upward import(s), 0 across the wings, 1 private-name warning(s)"
    )


def test_the_shared_core_and_a_folders_own_private_modules_are_free(tmp_path: Path) -> None:
    planted = {
        "mcp_client/protocol/era.py": (
            "from mcp_client._types import JSONObject\nfrom mcp_client._backends import base\n"
        ),
        "mcp_client/transports/stdio/__init__.py": "from mcp_client.transports._sse import x\n",
    }
    result = _check(_tree(tmp_path, {**CLEAN, **planted}))
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1].endswith("0 private-name warning(s)")


def test_a_root_without_the_package_is_an_error(tmp_path: Path) -> None:
    result = _check(tmp_path)
    assert result.returncode == 2
    assert "no mcp_client/ package" in result.stderr


def test_the_package_itself_keeps_every_rule() -> None:
    result = _check(SCRIPT.parents[1])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "text",
    [
        "import importlib\n\nimportlib.import_module('mcp_client.session.session')\n",
        "from importlib import import_module\n\nimport_module('mcp_client.session.session')\n",
        "def load():\n    return __import__('mcp_client.session.session')\n",
    ],
)
def test_a_module_loaded_by_a_literal_name_counts_as_an_import(tmp_path: Path, text: str) -> None:
    """``importlib.import_module("mcp_client.x")`` (or ``__import__``) with a literal name loads that module as an
    import statement does: the backends were once chosen that way, out of the check's sight."""
    result = _check(_tree(tmp_path, {**CLEAN, "mcp_client/protocol/era.py": text}))
    assert result.returncode == 1, result.stdout
    (line, _) = result.stdout.splitlines()
    assert line.startswith("mcp_client/protocol/era.py:")
    assert "imports mcp_client.session.session: wire (session/) sits above protocol" in line


def test_a_circle_through_a_package_init_is_found(tmp_path: Path) -> None:
    """Importing ``a.b.c`` runs ``a/b/__init__.py`` first: ``auth/provider.py`` importing the stdio transport's
    module, whose package's ``__init__`` imports ``auth/provider.py``, is a circle at run time ("cannot import name
    'X' from partially initialized module"), though no file imports the other back."""
    planted = {
        "mcp_client/auth/provider.py": "from mcp_client.transports.stdio._transport import stdio\nX = 1\n",
        "mcp_client/transports/stdio/__init__.py": "from mcp_client.auth.provider import X\n",
    }
    result = _check(_tree(tmp_path, {**CLEAN, **planted}))
    assert result.returncode == 1, result.stdout
    circles = [line for line in result.stdout.splitlines() if "circle of" in line]
    assert circles == [
        "mcp_client/auth/provider.py:1: circle of 2 files: auth/provider.py, transports/stdio/__init__.py"
    ]
