"""The one lazy loader of the package's faces: each public name is written once, as a typed import.

A face (``mcp_client/__init__.py``, ``mcp_client/session/__init__.py``, an integration's ``__init__.py``...) lists
its names once, as ``from module import Name as Name`` lines under ``if TYPE_CHECKING:``, where type checkers and
the documentation read them. At run time nothing there is imported: :func:`lazy_face` reads those imports back from
the face's compiled code (its loader's, so a face in a zip or shipped without its ``.py`` reads the same) and
answers ``__getattr__``, ``__dir__`` and ``__all__`` from them, importing a name's module on first use (PEP 562).
So ``import mcp_client`` costs next to nothing, and a name is never listed twice.

The names are the face's ``from a.b import X as Z`` imports (absolute, any layout the compiler accepts: comments,
parentheses, several on a line) that did not run: what the face bound by the time it calls :func:`lazy_face` ran,
so it is no lazy name. ``X as Z`` exports ``X`` under the name ``Z``; ``import a.b as c`` is not a name of a face.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from types import CodeType
from typing import Any

__all__ = ["exported_names", "lazy_face"]

_RACE_WAITS = (0.001, 0.01, 0.05, 0.2)
"""Seconds between the tries of an import that lost a race with another thread's (then one last try)."""

_TRANSPARENT = frozenset({"EXTENDED_ARG", "CACHE", "NOP"})
"""Instructions that never break an import sequence (an argument's high bits, the interpreter's own slots)."""


def imported_names(code: CodeType) -> dict[str, tuple[str, str]]:
    """``{bound name: (module, name in the module)}`` for every absolute ``from ... import`` of the module ``code``
    (top level, in order; a later binding of a name wins)."""
    import dis  # (only when a face is first loaded)

    names: dict[str, tuple[str, str]] = {}
    constants: list[object] = []
    module: str | None = None
    original: str | None = None
    for instruction in dis.get_instructions(code):
        op = instruction.opname
        if op in _TRANSPARENT:
            continue
        if op in ("LOAD_CONST", "LOAD_SMALL_INT"):
            constants.append(instruction.argval)
            continue
        if op == "IMPORT_NAME":
            # LOAD_CONST level, LOAD_CONST fromlist, IMPORT_NAME: a fromlist makes it a ``from`` import.
            level, fromlist = (constants[-2], constants[-1]) if len(constants) >= 2 else (None, None)
            module = instruction.argval if level == 0 and isinstance(fromlist, tuple) else None
        elif op == "IMPORT_FROM" and module is not None:
            original = instruction.argval
        elif op in ("STORE_NAME", "STORE_GLOBAL") and module is not None and original is not None:
            names[instruction.argval] = (module, original)
            original = None
        elif op != "POP_TOP" or original is not None:
            module = original = None
        elif op == "POP_TOP":
            module = None
        constants.clear()
    return names


def exported_names(source: str) -> dict[str, tuple[str, str]]:
    """The names a face with this ``source`` exports, read as :func:`lazy_face` reads them (for tests and tools:
    the face's runtime bindings are taken to be the imports outside its ``TYPE_CHECKING`` blocks)."""
    code = compile(source, "<face>", "exec")
    runtime = compile(_without_type_checking(source), "<face>", "exec")
    bound = imported_names(runtime)
    return {name: where for name, where in imported_names(code).items() if name not in bound}


def _without_type_checking(source: str) -> str:
    import ast

    tree = ast.parse(source)
    tree.body = [node for node in tree.body if not _is_type_checking(node)]
    return ast.unparse(tree)


def _is_type_checking(node: object) -> bool:
    import ast

    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _face_names(module_name: str, bound: Mapping[str, object]) -> dict[str, tuple[str, str]]:
    face = sys.modules[module_name]
    spec = face.__spec__
    get_code = getattr(spec.loader, "get_code", None) if spec is not None else None
    code = get_code(module_name) if get_code is not None else None
    if code is None:
        raise ImportError(f"{module_name}: its loader gives no code to read the face's names from", name=module_name)
    return {name: where for name, where in imported_names(code).items() if name not in bound}


def _imported(module: str) -> Any:
    """``importlib.import_module(module)``, tried again when it lost a race with another thread's import: CPython's
    module locks raise ``_DeadlockError`` in one of two threads importing modules of one graph in opposite orders
    (threads using names of different faces for the first time at once); the other thread is through soon after."""
    for wait in _RACE_WAITS:
        try:
            return importlib.import_module(module)
        except RuntimeError as exc:
            if type(exc).__name__ != "_DeadlockError":
                raise
        time.sleep(wait)
    return importlib.import_module(module)


def lazy_face(
    module_name: str, extra: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for the face ``module_name``, read from its ``TYPE_CHECKING`` block.

    ``extra`` names what the face defines itself (``__version__``) and should also list in ``__all__``.
    """
    namespace = vars(sys.modules[module_name])
    names = _face_names(module_name, namespace)

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(_imported(where[0]), where[1])
        namespace[name] = value  # the next lookup is a plain global
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__, sorted([*names, *extra])
