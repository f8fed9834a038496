"""docs/design.md's "Layers" picture and the package's folders agree: every top-level module and folder of
``mcp_client`` is drawn, and every module of the layer folders whose modules the picture lists by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mcp_client"
LISTED_BY_MODULE = ("client", "calls", "session", "protocol", "policy", "cache", "config", "sync", "_backends")
"""The folders whose every module the picture names (the others are drawn as one folder)."""


def layers_picture() -> str:
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = design.split("## Layers\n", 1)[1]
    found = re.search(r"```\n(.*?)```", section, re.DOTALL)
    assert found is not None, "the Layers section has no picture"
    return found.group(1)


def test_every_top_level_module_and_folder_is_drawn() -> None:
    picture = layers_picture()
    entries = [p.name if p.is_file() else f"{p.name}/" for p in PACKAGE.iterdir() if not p.name.startswith("__")]
    missing = [e for e in entries if e.endswith((".py", "/")) and e not in picture]
    assert missing == []


@pytest.mark.parametrize("folder", LISTED_BY_MODULE)
def test_every_module_of_a_listed_folder_is_named(folder: str) -> None:
    picture = layers_picture()
    modules = sorted(p.name for p in (PACKAGE / folder).glob("*.py") if p.name != "__init__.py")
    assert modules, f"{folder}/ has no modules"
    missing = [name for name in modules if not re.search(rf"(?<![\w/]){re.escape(name)}", picture)]
    assert missing == [], f"docs/design.md's Layers picture does not name these modules of {folder}/"
