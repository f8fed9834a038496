#!/usr/bin/env python3
"""Keep mcp_client's layers talking only downward: the import-rule table, a circle check and a module-size check.

Reads every module of the package with :mod:`ast` (nothing is imported or run; standard library only), builds one
import graph, and fails when it breaks a rule of docs/design.md ("Import rules"):

* **the layer table** (:data:`LAYERS`, one row per layer, top to bottom): a module imports its own row or rows
  below it; inside a row, ``>`` orders the entries (the left one may import the right one, not the reverse) and
  entries joined by ``,`` share a rank. The wings sit side by side and never import each other. A module that no
  entry names fails too: a new folder takes a row before it takes code;
* **no circle** between files: each strongly connected component of the graph is reported once, with its files;
* ``policy/`` is pure (neither anyio nor httpx); the session imports of the transports only ``transports.base``;
  the transports never import ``protocol.negotiate``;
* no module is over 500 lines, outside ``testing/``, ``cli/`` and the generated ``sync/view.py``.

Every import counts, wherever it is written (inside a function, under ``TYPE_CHECKING``), and so does a module
loaded by a literal name (``importlib.import_module("mcp_client.x")``, ``__import__``). For circles, an import of
``a.b.c`` also runs the ``__init__`` of each package above it (a lazy face's imports excepted: they run on first
use), as Python does. It also warns (without failing) when a ``_``-name (a ``_private`` module or a ``_private``
name) is imported from outside the top-level folder it sits in; the top-level ``_`` modules (``_types``,
``_version``, ``_httpx``, ``_backends/``, ``_lazy``, ``_moved``, ``_redact``, ``_typed``, ``_visible``,
``_log_guard``, ``_exit_stack``) are the package's shared core and free to import.
Usage::

    python .ci/check_layers.py [--root DIR]   # DIR holds the mcp_client package; default: the repository

Prints one line per violation or warning (``path:line: ...``), then a summary line with the counts. Exit status 0
when every rule holds (warnings or not), 1 otherwise, 2 when there is no package under ``--root``.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "mcp_client"
MAX_LINES = 500
SIZE_EXEMPT = ("testing/", "cli/", "sync/view.py")  # peers and the CLI: big by nature; view.py: generated

LAYERS: tuple[tuple[str, str], ...] = (
    ("host", "cli/ > __init__.py, sync/, integrations/, otel.py, testing/ > group/ > config/"),
    ("client", "client/"),
    ("wings", "subscriptions/, extensions/, cache/"),
    ("call room", "calls/"),
    ("wire", "session/"),
    ("transport", "transports/, auth/"),
    ("protocol", "protocol/"),
    (
        "core",
        "events.py > policy/ > _typed.py > errors.py > outcomes.py; "
        "_types.py, _version.py, _httpx.py, _backends/, _lazy.py, _moved.py, _redact.py, _visible.py, _log_guard.py, "
        "_exit_stack.py",
    ),
)
"""The layers, top to bottom. A row's entries: ``name/`` a folder (with its subfolders), ``name.py`` a top-level
module, ``__init__.py`` the package's own ``__init__``; ``a > b``: ``a`` may import ``b``, not the reverse;
``a, b``: one rank; ``;`` ends the ordered part of a row, and what follows is the row's bottom rank."""
APART = frozenset({"wings"})
"""Rows whose entries never import each other (what a wing needs of another is handed in by the client)."""
SHARED_CORE = frozenset(
    {
        "_types",
        "_version",
        "_httpx",
        "_backends",
        "_lazy",
        "_moved",
        "_redact",
        "_typed",
        "_visible",
        "_log_guard",
        "_exit_stack",
    }
)
"""The top-level ``_`` modules every folder may import (the package's own, like httpx's ``_types``)."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where a module sits in :data:`LAYERS`: its row, its rank inside the row, and the entry that names it."""

    row: int
    rank: int
    entry: str

    @property
    def layer(self) -> str:
        return LAYERS[self.row][0]


def _entries() -> dict[str, Place]:
    """Every entry of the table, by its spelling (``"cli/"``, ``"otel.py"``...)."""
    places: dict[str, Place] = {}
    for row, (_, spec) in enumerate(LAYERS):
        ordered, _, bottom = spec.partition(";")
        ranks = ordered.split(">") + ([bottom] if bottom else [])
        for rank, part in enumerate(ranks):
            for entry in (name.strip() for name in part.split(",")):
                places[entry] = Place(row, rank, entry)
    return places


ENTRIES = _entries()


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    path: Path
    """Relative to the package (``transports/http/_state.py``)."""
    is_package: bool
    lines: int
    tree: ast.Module

    @property
    def parts(self) -> list[str]:
        """The dotted name under the package (``["transports", "http", "_state"]``; ``[]`` for the package)."""
        return self.name.split(".")[1:]


@dataclass(frozen=True, slots=True)
class Import:
    source: str
    line: int
    target: str
    """The package module the statement loads (the longest known prefix of what it names)."""
    name: str | None
    """For ``from target import name`` where ``name`` is no module: that name."""


@dataclass(frozen=True, slots=True)
class Finding:
    path: Path
    line: int
    message: str
    warning: bool = False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {'warning: ' if self.warning else ''}{self.message}"


def read_package(root: Path) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        text = path.read_text(encoding="utf-8")
        name = ".".join(parts)
        tree = ast.parse(text, filename=str(path))
        modules[name] = Module(name, path.relative_to(root / PACKAGE), is_package, len(text.splitlines()), tree)
    return modules


def imported(module: Module) -> Iterator[tuple[int, str, str | None]]:
    """``(line, dotted, name)`` for every import in ``module``: ``from a import b`` gives ``("a", "b")``, ``import
    a.b`` gives ``("a.b", None)``; relative imports are made absolute."""
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.Call) and (loaded := _loaded_by_name(node)) is not None:
            yield node.lineno, loaded, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, base, None if alias.name == "*" else alias.name


def _loaded_by_name(call: ast.Call) -> str | None:
    """The module ``importlib.import_module("a.b")`` or ``__import__("a.b")`` loads, when its name is a literal."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name not in ("import_module", "__import__") or not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith("."):
        return first.value
    return None


def package_imports(modules: dict[str, Module]) -> tuple[list[Import], list[tuple[Module, int, str]]]:
    """The imports of package modules (resolved to modules), and the others: ``(module, line, top-level name)``."""
    inside: list[Import] = []
    outside: list[tuple[Module, int, str]] = []
    for module in modules.values():
        for line, dotted, name in imported(module):
            if dotted.split(".")[0] != PACKAGE:
                outside.append((module, line, dotted))
                continue
            target = f"{dotted}.{name}" if name is not None and f"{dotted}.{name}" in modules else dotted
            leftover = name if target == dotted else None
            while target not in modules and "." in target:
                target = target.rpartition(".")[0]
            inside.append(Import(module.name, line, target, leftover))
    return inside, outside


def place_of(module: Module) -> Place | None:
    parts = module.parts
    if not parts:
        return ENTRIES.get("__init__.py")
    if len(parts) == 1 and not module.is_package:
        return ENTRIES.get(f"{parts[0]}.py")
    return ENTRIES.get(f"{parts[0]}/")


def may_import(source: Place, target: Place) -> bool:
    if target.row != source.row:
        return target.row > source.row
    if source.entry == target.entry:
        return True
    if source.layer in APART:
        return False
    return target.rank >= source.rank


def check_layers(modules: dict[str, Module], imports: list[Import]) -> list[Finding]:
    findings: list[Finding] = []
    places = {name: place_of(module) for name, module in modules.items()}
    for name, place in places.items():
        if place is None:
            findings.append(Finding(modules[name].path, 1, f"{name} is in no row of the layer table"))
    for edge in imports:
        source, target = places[edge.source], places[edge.target]
        if source is None or target is None or may_import(source, target):
            continue
        if source.row == target.row and source.layer in APART:
            why = f"the {source.layer} never import each other"
        elif source.row == target.row:
            why = f"in {source.layer}, {target.entry} sits above {source.entry}"
        else:
            why = f"{target.layer} ({target.entry}) sits above {source.layer} ({source.entry})"
        shown = edge.target + (f".{edge.name}" if edge.name else "")
        findings.append(Finding(modules[edge.source].path, edge.line, f"{edge.source} imports {shown}: {why}"))
    return findings


def check_extra(
    modules: dict[str, Module], imports: list[Import], outside: list[tuple[Module, int, str]]
) -> dict[str, list[Finding]]:
    """Today's rules beside the table, by name."""
    found: dict[str, list[Finding]] = {"policy is pure": [], "session sees transports.base": [], "no negotiate": []}
    for module, line, dotted in outside:
        if module.parts[:1] == ["policy"] and dotted.split(".")[0] in ("anyio", "httpx", "httpx2"):
            message = f"{module.name} imports {dotted} (policy/ is pure: neither anyio nor httpx)"
            found["policy is pure"].append(Finding(module.path, line, message))
    for edge in imports:
        module = modules[edge.source]
        target = edge.target.split(".")[1:]
        if module.parts[:1] == ["session"] and target[:1] == ["transports"] and target[1:] not in ([], ["base"]):
            message = f"{edge.source} imports {edge.target} (the session sees the transports through base.py only)"
            found["session sees transports.base"].append(Finding(module.path, edge.line, message))
        if module.parts[:1] == ["transports"] and target == ["protocol", "negotiate"]:
            message = f"{edge.source} imports {edge.target} (transports sit below negotiation)"
            found["no negotiate"].append(Finding(module.path, edge.line, message))
    return found


def check_size(modules: dict[str, Module]) -> list[Finding]:
    return [
        Finding(module.path, 1, f"{module.lines} lines: a module may have at most {MAX_LINES}")
        for module in modules.values()
        if module.lines > MAX_LINES and not str(module.path.as_posix()).startswith(SIZE_EXEMPT)
    ]


def circles(modules: dict[str, Module], imports: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion), each sorted."""
    graph: dict[str, list[str]] = {name: [] for name in modules}
    for edge in imports:
        if edge.target != edge.source and edge.target not in graph[edge.source]:
            graph[edge.source].append(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def with_packages(modules: dict[str, Module], imports: list[Import]) -> list[Import]:
    """The imports, and for each one the ``__init__`` of every package above its target that it runs: importing
    ``a.b.c`` runs ``a/b/__init__.py`` first. Not the importer's own packages (already running), nor a lazy face
    (its imports are written for type checkers and run one by one on first use, not when the face runs)."""
    faces = {name for name, module in modules.items() if module.is_package and _is_lazy_face(module)}
    runs = list(imports)
    for edge in imports:
        parts = edge.target.split(".")
        own = edge.source.split(".")
        for depth in range(1, len(parts)):
            package = ".".join(parts[:depth])
            if package in modules and package not in faces and own[:depth] != parts[:depth]:
                runs.append(Import(edge.source, edge.line, package, None))
    return runs


def _is_lazy_face(module: Module) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy_face"
        for node in ast.walk(module.tree)
    )


def check_circles(modules: dict[str, Module], imports: list[Import]) -> list[Finding]:
    findings: list[Finding] = []
    imports = with_packages(modules, imports)
    for component in circles(modules, imports):
        members = set(component)
        first = component[0]
        line = min(edge.line for edge in imports if edge.source == first and edge.target in members)
        files = ", ".join(modules[name].path.as_posix() for name in component)
        findings.append(Finding(modules[first].path, line, f"circle of {len(component)} files: {files}"))
    return findings


def private_owner(parts: list[str]) -> str | None:
    """The top-level folder a private module is private to, or None: a public module, or the shared core."""
    for depth, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            if depth == 0:
                return None if part in SHARED_CORE else part  # (a top-level _x.py outside the core: its own)
            return parts[0]
    return None


def check_private(modules: dict[str, Module], imports: list[Import]) -> list[Finding]:
    warnings: list[Finding] = []
    for edge in imports:
        source = modules[edge.source].parts
        target = edge.target.split(".")[1:]
        owner = private_owner(target)
        what = f"the private module {edge.target}"
        if edge.name is not None and edge.name.startswith("_") and not edge.name.startswith("__"):
            owner, what = (target[0] if target else None), f"the private name {edge.target}.{edge.name}"
        if owner is not None and source[:1] != [owner]:
            folder = modules.get(f"{PACKAGE}.{owner}")
            where = f"{owner}/" if folder is None or folder.is_package else f"{owner}.py"
            message = f"{edge.source} imports {what}, private to {where}"
            warnings.append(Finding(modules[edge.source].path, edge.line, message, warning=True))
    return warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args(argv)
    root: Path = args.root
    if not (root / PACKAGE).is_dir():
        print(f"check_layers: no {PACKAGE}/ package under {root}", file=sys.stderr)
        return 2
    modules = read_package(root)
    imports, outside = package_imports(modules)
    layers = check_layers(modules, imports)
    found = {"layer table": layers, "no circle": check_circles(modules, imports)}
    found |= check_extra(modules, imports, outside)
    found["module size"] = check_size(modules)
    warnings = sorted(set(check_private(modules, imports)), key=str)
    shown = root / PACKAGE
    every = {finding for findings in found.values() for finding in findings} | set(warnings)
    for finding in sorted(every, key=lambda finding: (str(finding.path), finding.line, finding.message)):
        print(f"{shown.name}/{finding}")
    upward = sum(1 for finding in layers if "sits above" in finding.message)
    across = sum(1 for finding in layers if "never import each other" in finding.message)
    held = sum(1 for findings in found.values() if not findings)
    top = sum(1 for module in modules.values() if len(module.parts) == 1 and not module.is_package)
    print(
        f"check_layers: {len(modules)} modules ({top} top-level), {held} of {len(found)} rules held, "
        f"{len(found['no circle'])} circle(s), {upward} upward import(s), "
        f"{across} across the wings, {len(warnings)} private-name warning(s)"
    )
    return 0 if held == len(found) else 1


if __name__ == "__main__":
    sys.exit(main())
