"""The lazy faces wherever the package is installed, and whatever their import block looks like (red team of
``mcp_client/_lazy.py``).

The loader used to read the names back from the face's ``.py`` file with a regular expression: a package imported
from a zip (zipapp, shiv, pex) or shipped without sources (``compileall -b``, PyInstaller) could not even be
imported, and a comment or a second statement on a line could drop a name or invent one. Each import here runs in
a fresh interpreter, bounded in time.
"""

from __future__ import annotations

import compileall
import importlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mcp_client._lazy import exported_names

ROOT = Path(__file__).resolve().parents[2]

USE = """
import json, pickle, sys
sys.path.insert(0, sys.argv[1])
import mcp_client
from mcp_client import *
import mcp_client.sync
err = pickle.loads(pickle.dumps(mcp_client.MCPClientError("boom")))
print(json.dumps({
    "file": mcp_client.__file__,
    "client": mcp_client.Client.__module__,
    "star": "TimeoutPolicy" in dir() and "stdio" in dir(),
    "all": len(mcp_client.__all__),
    "sync": mcp_client.sync.Client.__name__,
    "dir": "Client" in dir(mcp_client),
    "err": str(err),
}))
"""


def _use(where: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-I", "-c", USE, str(where)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(report, dict)
    return report


def _expected(report: dict[str, object], where: str) -> None:
    assert where in str(report["file"])
    assert report["client"] == "mcp_client.client.client"
    assert report["star"] is True
    assert report["all"] == 115
    assert report["sync"] == "Client"
    assert report["dir"] is True
    assert report["err"] == "boom"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "site"
    shutil.copytree(ROOT / "mcp_client", target / "mcp_client", ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_package_imports_from_a_zip(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    archive = tmp_path / "app.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted((site / "mcp_client").rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(site).as_posix())
    _expected(_use(archive), "app.zip")


def test_the_package_imports_without_its_sources(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    assert compileall.compile_dir(site / "mcp_client", legacy=True, quiet=1)
    for source in (site / "mcp_client").rglob("*.py"):
        source.unlink()
    _expected(_use(site), "__init__.pyc")


FACE = '''"""A face whose import block a regular expression misreads."""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:  # type checkers read these (the run time does not)
    from json import (
        dumps as dumps,  # the writer (see loads)
        loads as loads,
    )
    from os import getcwd as getcwd  # cwd, pid
    from os import sep as sep; from os import linesep as linesep
    import os.path as path

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
'''


def test_comments_and_statements_in_the_block_neither_drop_nor_invent_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "red_face.py").write_text(FACE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    face = importlib.import_module("red_face")
    expected = ["dumps", "getcwd", "linesep", "loads", "sep"]
    assert sorted(exported_names(FACE)) == expected
    assert vars(face)["__all__"] == expected
    assert face.loads("[1]") == [1]
    assert face.sep == "/"


def test_a_first_use_that_loses_an_import_race_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads using names of different faces for the first time at once can meet in CPython's module locks, which
    then raise ``_DeadlockError`` in one of them (about 1 run in 25 with 16 threads, here): a face used to hand that
    raw error to the caller; it tries the import again once the other thread is through."""
    deadlock = getattr(importlib.import_module("importlib._bootstrap"), "_DeadlockError")  # noqa: B009
    (tmp_path / "red_face_race.py").write_text(FACE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    face = importlib.import_module("red_face_race")
    real = importlib.import_module
    raised: list[str] = []

    def racing(name: str, package: str | None = None) -> object:
        if name == "json" and not raised:
            raised.append(name)
            raise deadlock("deadlock detected by _ModuleLock('json')")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", racing)
    assert face.dumps([1]) == "[1]"
    assert raised == ["json"]
