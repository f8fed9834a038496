"""errors.py's docstring draws the whole exception tree: every MCPClientError subclass of the package, wings too."""

from __future__ import annotations

import importlib
import pkgutil
import re

import mcp_client
from mcp_client import errors
from mcp_client.errors import MCPClientError


def _every_module() -> None:
    for module in pkgutil.walk_packages(mcp_client.__path__, "mcp_client."):
        if not module.name.endswith("__main__"):  # (the command line runs when its __main__ is imported)
            importlib.import_module(module.name)


def _subclasses(cls: type[MCPClientError]) -> set[type[MCPClientError]]:
    found: set[type[MCPClientError]] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def _tree() -> dict[str, str]:
    """Each name the docstring's tree draws, with the text of its line."""
    doc = errors.__doc__ or ""
    drawing = doc.split("```")[1]
    lines = (re.match(r"^[│├└─ ]*(\w+)\s*(.*)$", line) for line in drawing.strip().splitlines())
    return {match[1]: match[2] for match in lines if match}


def test_every_error_of_the_package_is_in_the_tree_with_its_module() -> None:
    _every_module()
    tree = _tree()
    ours = {cls for cls in _subclasses(MCPClientError) if cls.__module__.startswith("mcp_client.")}
    assert len(ours) > 30
    missing = sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in ours if cls.__qualname__ not in tree)
    assert missing == []
    for cls in ours:
        if cls.__module__ != "mcp_client.errors":  # one defined elsewhere: its line, or its family head's, says where
            path = cls.__module__.removeprefix("mcp_client.").replace(".", "/") + ".py"
            family = [base for base in cls.__mro__ if base.__module__ == cls.__module__]
            assert any(tree[head.__qualname__].startswith(path) for head in family), cls


def test_the_tree_names_no_error_that_does_not_exist() -> None:
    _every_module()
    names = {cls.__qualname__ for cls in _subclasses(MCPClientError)} | {"MCPClientError"}
    assert set(_tree()) - names == set()
