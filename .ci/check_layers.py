#!/usr/bin/env python3
"""Keep mcp_client's layers talking only to their neighbours: an import-rule and module-size check.

Reads every module of the package with :mod:`ast` (nothing is imported or run; standard library only) and fails
when one breaks a rule of docs/design.md ("Layers" and "Import rules"):

* ``policy/`` imports neither anyio nor httpx, and nothing of the package outside ``policy/`` and ``errors``;
* the session (``session``, ``server_requests``) imports neither the call room (``calls/``), ``client``, ``call``
  nor a concrete transport (only ``transports.base``);
* ``protocol/`` imports neither the session nor a private ``transports._*`` module;
* ``transports/`` imports neither the session, the call room nor ``protocol.negotiate``;
* no module is over 500 lines, outside ``testing/`` and the command line interface.

Every import counts, wherever it is written (inside a function, under ``TYPE_CHECKING``). Usage::

    python .ci/check_layers.py [--root DIR]   # DIR holds the mcp_client package; default: the repository

Exit status 0 when every rule holds, 1 with one line per violation otherwise.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "mcp_client"
MAX_LINES = 500
SIZE_EXEMPT = (
    "mcp_client.testing",  # test servers and peers: big by nature, never imported by the library
    "mcp_client.cli",  # the command line interface (a module or a package)
    "mcp_client._cli*",
)
SESSION = ("mcp_client.session", "mcp_client.server_requests")
CALL_ROOM = ("mcp_client.calls", "mcp_client.client", "mcp_client.call")


def under(module: str, *prefixes: str) -> bool:
    """True when ``module`` is one of ``prefixes`` or inside one of them (a trailing ``*`` matches any suffix)."""
    for prefix in prefixes:
        if prefix.endswith("*"):
            if module.startswith(prefix[:-1]):
                return True
        elif module == prefix or module.startswith(prefix + "."):
            return True
    return False


def _policy_may_not(target: str) -> bool:
    if under(target, "anyio", "httpx"):
        return True
    return under(target, PACKAGE) and not under(target, "mcp_client.policy", "mcp_client.errors")


def _session_may_not(target: str) -> bool:
    if under(target, *CALL_ROOM):
        return True
    concrete_transport = under(target, "mcp_client.transports") and target != "mcp_client.transports"
    return concrete_transport and not under(target, "mcp_client.transports.base")


def _protocol_may_not(target: str) -> bool:
    if under(target, *SESSION):
        return True
    private = target.split(".")[2:] if under(target, "mcp_client.transports") else []
    return any(part.startswith("_") for part in private)


def _transports_may_not(target: str) -> bool:
    return under(target, *SESSION, "mcp_client.calls", "mcp_client.protocol.negotiate")


@dataclass(frozen=True)
class Rule:
    """Modules under ``sources`` must not import a module for which ``forbids`` is true."""

    name: str
    sources: tuple[str, ...]
    forbids: Callable[[str], bool]
    why: str


RULES = (
    Rule("policy", ("mcp_client.policy",), _policy_may_not, "the policy core is pure: policy/ and errors only"),
    Rule("session", SESSION, _session_may_not, "the session is the wire: no call room, client or concrete transport"),
    Rule("protocol", ("mcp_client.protocol",), _protocol_may_not, "protocol/ sits below the session and transports"),
    Rule("transports", ("mcp_client.transports",), _transports_may_not, "transports sit below session and negotiation"),
)


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, list[str]]]:
    """``(line, modules)`` for every import statement in ``tree``, most specific first: ``from a import b`` may
    import the module ``a.b`` or a name of ``a``, so it yields ``a.b`` and ``a``."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, [alias.name]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, ([f"{base}.{alias.name}"] if alias.name != "*" else []) + [base]


def check(root: Path) -> list[Violation]:
    """Every violation of the rules by the package under ``root``."""
    violations: list[Violation] = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        module = module_name(path, root)
        text = path.read_text(encoding="utf-8")
        shown = path.relative_to(root)
        lines = len(text.splitlines())
        exempt = under(module, *SIZE_EXEMPT)
        if lines > MAX_LINES and not exempt:
            violations.append(Violation(shown, 1, f"{lines} lines: a module may have at most {MAX_LINES}"))
        tree = ast.parse(text, filename=str(path))
        rules = [rule for rule in RULES if under(module, *rule.sources)]
        if not rules:
            continue
        for line, targets in imported(tree, module, path.name == "__init__.py"):
            for rule in rules:
                target = next((target for target in targets if rule.forbids(target)), None)
                if target is not None:
                    violations.append(Violation(shown, line, f"{module} imports {target} ({rule.why})"))
    return violations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args(argv)
    root: Path = args.root
    if not (root / PACKAGE).is_dir():
        print(f"check_layers: no {PACKAGE}/ package under {root}", file=sys.stderr)
        return 2
    violations = check(root)
    for violation in violations:
        print(violation)
    count = sum(1 for _ in (root / PACKAGE).rglob("*.py"))
    if violations:
        print(f"check_layers: {len(violations)} violation(s) in {count} modules", file=sys.stderr)
        return 1
    print(f"check_layers: {count} modules, every import rule holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
