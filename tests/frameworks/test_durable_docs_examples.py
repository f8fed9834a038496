"""docs/durable-pydantic-ai.md's examples run as written: a pydantic-ai agent reindexes through the demo server on
Temporal (the real dev server) and on DBOS (its default SQLite database, in a folder of the test's own)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _run(example: str, folder: Path, **env: str) -> str:
    script = folder / "example.py"
    script.write_text(example, encoding="utf-8")
    root = str(DOCS.parent)
    python_path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": python_path, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / "durable-pydantic-ai.md").read_text(encoding="utf-8"), re.S)


def test_the_temporal_example_runs(temporal_address: str, tmp_path: Path) -> None:
    output = _run(_examples()[0], tmp_path, TEMPORAL_ADDRESS=temporal_address)
    assert "The tool said: reindexed 'docs' in 2 batches" in output


def test_the_dbos_example_runs(tmp_path: Path) -> None:
    output = _run(_examples()[1], tmp_path)
    assert "The tool said: reindexed 'docs' in 2 batches" in output
    assert (tmp_path / "reindexer.sqlite").is_file()  # DBOS's default system database: SQLite, here
