"""The CLI package has no import circle: each module imports only modules after it in the package's order."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_client.cli

ORDER = ["app", "parser", "group", "demo", "commands", "display", "interrupts", "outcome", "safe_text"]
PACKAGE = Path(mcp_client.cli.__file__).parent


def cli_imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):  # lazy imports inside functions count too
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mcp_client.cli"):
            found.add(node.module.removeprefix("mcp_client.cli").lstrip("."))
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("mcp_client.cli.") for a in node.names if a.name.startswith("mcp_client.cli")}
    return found


def test_every_module_of_the_package_is_in_the_order() -> None:
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert modules == set(ORDER)


def test_each_module_imports_only_modules_after_it() -> None:
    for position, module in enumerate(ORDER):
        imported = cli_imports(module)
        assert imported <= set(ORDER[position + 1 :]), f"{module} imports {sorted(imported)}"
