"""What ``import mcp_client`` loads: its public names resolve on first use, and what a program does not use (the
HTTP stack, OAuth, OpenTelemetry, rich, the config models) is not loaded. Each check runs in a fresh interpreter."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_client
from mcp_client._lazy import exported_names

NEVER_WITH_STDIO = ("httpx2", "httpx", "httpcore2", "mcp_client.auth", "opentelemetry", "rich", "joserfc")


def _loaded(code: str, watched: tuple[str, ...]) -> list[str]:
    program = f"import sys\n{code}\nimport json\nprint(json.dumps([m for m in {list(watched)!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


FACES = (
    "mcp_client",
    "mcp_client.cache",
    "mcp_client.client",
    "mcp_client.config",
    "mcp_client.session",
    "mcp_client.sync",
    "mcp_client.transports.stdio",
    "mcp_client.integrations.temporal",
)


def test_every_public_name_is_written_once_and_resolves_to_its_module() -> None:
    source = Path(mcp_client.__file__ or "").read_text(encoding="utf-8")
    public: list[str] = vars(mcp_client)["__all__"]  # (made at run time by the loader; type checkers read the imports)
    assert len(public) == 115
    assert set(exported_names(source)) == set(public) - {"__version__"}
    assert source.count('"Client"') == 0  # no second list of the names
    for name in public:
        value = getattr(mcp_client, name)
        assert value is not None
        if name != "__version__" and hasattr(value, "__module__") and not name.isupper():
            assert name in dir(mcp_client)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = mcp_client.nope  # type: ignore[attr-defined]


@pytest.mark.parametrize("face", FACES)
def test_each_face_loads_its_names_on_first_use(face: str) -> None:
    module = importlib.import_module(face)
    names = exported_names(Path(module.__file__ or "").read_text(encoding="utf-8"))
    assert names, f"{face} lists no names"
    assert sorted(names) == sorted(set(vars(module)["__all__"]) - {"__version__"})
    for name, (where, original) in names.items():
        assert getattr(module, name) is getattr(importlib.import_module(where), original)


def test_the_loader_reads_aliases_and_parenthesised_lists() -> None:
    source = (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from a.b import X as X, Y as Z  # a comment\n"
        "    from c import (\n        P as P,\n        Q as Q,\n    )\n\nvalue = 1\n"
        "from d import Never as Never\n"
    )
    assert exported_names(source) == {"X": ("a.b", "X"), "Z": ("a.b", "Y"), "P": ("c", "P"), "Q": ("c", "Q")}


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
