"""The generator of the blocking facade (.ci/gen_sync.py): the committed module is current, and --check fails on a
copy of the package whose generated module was edited by hand or whose async signatures changed."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import mcp_client
import mcp_client.sync.view

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "gen_sync.py"
VIEW = Path("mcp_client/sync/view.py")


def _run(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *options],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package and the settings ruff formats with."""
    root = tmp_path_factory.mktemp("repository")
    shutil.copytree(ROOT / "mcp_client", root / "mcp_client", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.fixture
def copy(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repository"
    shutil.copytree(pristine, root)
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _add_before(copy: Path, method: Callable[..., object], code: str) -> None:
    """Add ``code`` (methods, indented as in a class) to the copy's class of ``method``, just before it."""
    method = inspect.unwrap(method)  # (a public coroutine method is wrapped by the typed boundary: its source is here)
    path = copy / Path(inspect.getfile(method)).relative_to(ROOT)
    first = inspect.getsourcelines(method)[1] - 1
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines[:first], code, "\n", *lines[first:]]), encoding="utf-8")


def test_the_committed_facade_is_what_the_generator_writes() -> None:
    done = _run(ROOT, "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "gen_sync: mcp_client/sync/view.py is up to date"


def test_a_hand_edit_of_the_generated_module_fails_the_check_until_it_is_written_again(copy: Path) -> None:
    view = copy / VIEW
    original = view.read_bytes()
    _edit(view, "        return self._async.relistens\n", "        return self._async.relistens + 1\n")

    done = _run(copy, "--check")
    assert done.returncode == 1
    assert "-        return self._async.relistens + 1\n+        return self._async.relistens\n" in done.stdout
    assert done.stdout.splitlines()[-1] == (
        "gen_sync: mcp_client/sync/view.py is stale (the async signatures changed, or it was edited): "
        "run `python .ci/gen_sync.py`"
    )

    assert _run(copy).stdout.strip() == "gen_sync: wrote mcp_client/sync/view.py"
    assert view.read_bytes() == original
    assert _run(copy, "--check").returncode == 0


def test_a_new_async_method_makes_the_facade_stale_and_writing_it_adds_the_blocking_twin(copy: Path) -> None:
    _add_before(
        copy,
        mcp_client.Client.ping,
        "    async def pong(self, times: int = 1, *, loud: bool = False) -> int:\n"
        '        """Answer ``times`` pings."""\n'
        "        return times\n",
    )

    done = _run(copy, "--check")
    assert done.returncode == 1
    added = [line for line in done.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == [
        "+    def pong(self, times: int = 1, *, loud: bool = False) -> int:",
        '+        """Answer ``times`` pings.',
        "+",
        "+        Blocking: :meth:`mcp_client.Client.pong`, run on the event loop; Ctrl-C cancels it.",
        '+        """',
        "+        return self._runner.run(self._async.pong, times, loud=loud)",
        "+",
    ]

    assert _run(copy).returncode == 0
    assert _run(copy, "--check").returncode == 0


@pytest.mark.parametrize(
    ("before", "code", "error"),
    [
        (
            mcp_client.Call.wait,
            "    def updates(self) -> AsyncIterator[Progress]:\n        return self.progress()\n",
            "Call.updates: returns an async object; write its blocking form in mcp_client.sync.base",
        ),
        (
            mcp_client.Client.tool_call,
            "    def maybe(self) -> Call[int] | None:\n        return None\n",
            "Client.maybe: returns an async handle inside another type; write it in mcp_client.sync.base",
        ),
        (
            mcp_client.Client.tool_call,
            "    @classmethod\n    def make(cls) -> int:\n        return 1\n",
            "Client.make: not a method or a property; write it in mcp_client.sync.base or leave it out in TWINS",
        ),
    ],
    ids=["async iterator", "handle inside a union", "classmethod"],
)
def test_a_member_it_cannot_forward_is_named_and_nothing_is_written(
    copy: Path, before: Callable[..., object], code: str, error: str
) -> None:
    _add_before(copy, before, code)
    view = (copy / VIEW).read_bytes()

    done = _run(copy)
    assert done.returncode == 2
    assert done.stderr.strip() == f"gen_sync: {error}"
    assert (copy / VIEW).read_bytes() == view


def test_the_blocking_docstrings_show_blocking_code() -> None:
    for cls in (mcp_client.sync.view.ClientView, mcp_client.sync.view.SyncCall, mcp_client.sync.view.GroupView):
        for name, member in vars(cls).items():
            doc = inspect.getdoc(member) or ""
            assert "async with" not in doc, name
            assert "async for" not in doc, name
    assert "with client.tool_call(" in (inspect.getdoc(mcp_client.sync.view.ClientView.tool_call) or "")


def test_a_word_in_a_string_default_or_a_literal_is_no_name_to_import(copy: Path) -> None:
    """Only a quoted annotation is read as code: a default ``"asyncio"`` or ``Literal["fast"]`` is a value, and used
    to stop the generator ("'fast' is neither imported nor defined", exit 2)."""
    _edit(
        copy / "mcp_client/client/features.py",
        "from typing import TYPE_CHECKING, ",
        "from typing import TYPE_CHECKING, Literal, ",
    )
    _add_before(
        copy,
        mcp_client.Client.ping,
        '    async def pong(self, mode: Literal["fast", "slow"] = "fast", *, engine: str = "asyncio") -> str:\n'
        '        """Answer in ``mode``."""\n'
        "        return mode\n",
    )

    done = _run(copy)
    assert done.returncode == 0, done.stderr
    assert 'def pong(self, mode: Literal["fast", "slow"] = "fast", *, engine: str = "asyncio") -> str:' in (
        copy / VIEW
    ).read_text(encoding="utf-8")
