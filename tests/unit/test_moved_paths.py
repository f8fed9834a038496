"""The import paths of modules that moved into a folder with the layout still import, as the module they are now,
with a DeprecationWarning naming the new path (``mcp_client/_moved.py``); a path that never existed still fails."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import mcp_client
from mcp_client._moved import MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_imports_as_its_new_module_with_a_warning(old: str, new: str) -> None:
    program = (
        "import warnings, importlib, json\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        f"new = importlib.import_module({new!r})\n"
        "same = old is new or all(getattr(old, n) is getattr(new, n) for n in getattr(new, '__all__', []))\n"
        "print(json.dumps({'warned': [str(w.message) for w in caught if w.category is DeprecationWarning],"
        " 'same': same}))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert f"{old} moved to {new}; import it from there" in report["warned"]
    assert report["same"] is True


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_old_names_users_imported_are_the_package_s_own() -> None:
    registry = importlib.import_module("mcp_client.registry")
    reference = importlib.import_module("mcp_client.tasks.reference")
    assert registry.PartialRetry is mcp_client.PartialRetry
    assert reference.TaskReference is mcp_client.TaskReference


def test_a_path_that_never_existed_still_fails() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mcp_client.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mcp_client.tasks.no_such_module")
