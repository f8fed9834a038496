"""docs/temporal.md's example runs as written against the real dev server: a workflow reindexes through MCP."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_example_of_the_page_runs(temporal_address: str, tmp_path: Path) -> None:
    example = re.findall(r"```python\n(.*?)```", (DOCS / "temporal.md").read_text(encoding="utf-8"), re.S)[0]
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")
    root = str(DOCS.parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
        "TEMPORAL_ADDRESS": temporal_address,
    }
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "reindexed 'docs' in 2 batches" in done.stdout
