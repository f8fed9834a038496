"""The mixed-load memory soak's short form, in CI: ``python -m benchmarks.stress.rss_soak --mix mixed`` against mcp
2.3.0's server over stdio, 32 callers mixing echoes, progress tools, random cancels, idle and maximum timeouts.

After a warm-up, what the client holds (``tracemalloc``, measured with no call in flight) must stop growing: the
session's tables of recently ended requests are shrunk (``--recent-limit``) so that a run of a few thousand calls
is past their filling, and whatever still grows per call is found by counting calls, not by time.
The long form and its figures: docs/reliability.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CALLS = 2_500
WARMUP = 1_000
BOUND_KIB_PER_1000 = 20.0
"""Traced growth per 1,000 calls after the warm-up: 34.7 KiB while the JSON reader kept every string value it read
in pydantic-core's string cache, about 2 KiB since."""


def test_after_a_warm_up_the_mixed_load_does_not_grow_traced_memory() -> None:
    command = [
        sys.executable,
        "-m",
        "benchmarks.stress.rss_soak",
        "--mix=mixed",
        "--workers=32",
        "--server=reference",
        f"--calls={CALLS}",
        "--every=250",
        "--trace-memory",
        "--recent-limit=128",
        "--json",
    ]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout)

    assert result["calls"] == CALLS
    assert result["in_flight_after"] == 0
    outcomes = result["outcomes"]
    for ended_so in (
        "echo:ok",
        "progress:ok",
        "cancelled:cancelled",
        "idle_timeout:IdleTimeout",
        "max_timeout:MaxTimeout",
    ):
        assert outcomes.get(ended_so, 0) > 0, f"the mix never produced {ended_so}: {outcomes}"

    samples = [s for s in result["samples"] if s["calls"] >= WARMUP]
    first, last = samples[0], samples[-1]
    assert last["calls"] - first["calls"] >= 1_000
    growth = (last["traced_kib"] - first["traced_kib"]) / ((last["calls"] - first["calls"]) / 1000)
    assert growth < BOUND_KIB_PER_1000, f"traced memory grew {growth:.1f} KiB per 1,000 calls after the warm-up"
