"""The one lazy loader of the package's faces: each public name is written once, as a typed import.

A face (``mcp_client/__init__.py``, ``mcp_client/session/__init__.py``, an integration's ``__init__.py``...) lists
its names once, as ``from module import Name as Name`` lines under ``if TYPE_CHECKING:``, where type checkers and
the documentation read them. At run time nothing there is imported: :func:`lazy_face` reads those lines back from
the face's own source and answers ``__getattr__``, ``__dir__`` and ``__all__`` from them, importing a name's module
on first use (PEP 562). So ``import mcp_client`` costs next to nothing, and a name is never listed twice.

The lines it reads are plain ``from a.b import (X as X, Y as Y)`` statements, one or many names, parenthesised
or not; ``X as Z`` exports ``X`` under the name ``Z``. Anything else in the block is ignored.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["lazy_face"]

_BLOCK = re.compile(r"^if TYPE_CHECKING:\n((?:[ \t]+.*\n|\n)+)", re.MULTILINE)
_FROM = re.compile(r"from\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n]+)")
_NAME = re.compile(r"(\w+)(?:\s+as\s+(\w+))?")


def exported_names(source: str) -> dict[str, tuple[str, str]]:
    """``{exported name: (module, name in the module)}`` for the imports of ``source``'s ``TYPE_CHECKING`` block."""
    block = _BLOCK.search(source)
    if block is None:
        return {}
    names: dict[str, tuple[str, str]] = {}
    for module, listed in _FROM.findall(block.group(1)):
        for part in listed.strip("()").split(","):
            part = part.split("#")[0].strip()
            found = _NAME.fullmatch(part)
            if found is None:
                continue
            original, alias = found.group(1), found.group(2) or found.group(1)
            names[alias] = (module, original)
    return names


def lazy_face(
    module_name: str, extra: tuple[str, ...] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for the face ``module_name``, read from its ``TYPE_CHECKING`` block.

    ``extra`` names what the face defines itself (``__version__``) and should also list in ``__all__``.
    """
    face = sys.modules[module_name]
    source = Path(face.__file__ or "").read_text(encoding="utf-8")
    names = exported_names(source)
    namespace = vars(face)

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[0]), where[1])
        namespace[name] = value  # the next lookup is a plain global
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__, sorted([*names, *extra])
