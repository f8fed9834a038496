"""Keeps the benchmark suite working: ``python -m benchmarks --quick --only stdio`` runs and reports every metric.

Nothing about timing is asserted (CI machines vary); only that each stdio metric was measured, for every client
it applies to, as a positive number, and that no worker failed. About 15-40 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.plan import can_hold_on_one_cpu

REPO_ROOT = Path(__file__).resolve().parents[2]

BOTH_CLIENTS = (
    "progress_burst_wall_ms",
    "cpu_per_call_us",
    "latency_p50_us",
    "latency_p99_us",
    "throughput_calls_per_s",
    "throughput_cpu_per_call_us",
    "cpu_per_progress_us",
    "timeout_error_delay_ms",
    "cancel_seen_delay_ms",
    "memory_per_call_bytes",
)
WITH_FLOOR = ("cpu_per_call_us", "latency_p50_us", "latency_p99_us", "progress_burst_wall_ms")
HOLDS_ONE_CPU = can_hold_on_one_cpu()
"""Where the burst is measured a second time with the server held on one CPU (Linux, two CPUs or more)."""
OURS_ONLY = (
    "memory_per_call_10k_bytes",
    "scale_cpu_per_call_100_us",
    "scale_cpu_per_call_10000_us",
    "task_cpu_per_poll_us",
    "task_cpu_per_echo_us",
    "task_return_delay_p50_ms",
    "task_return_delay_max_ms",
)


def test_quick_stdio_run_reports_every_metric(tmp_path: Path) -> None:
    output = tmp_path / "quick.json"
    command = [sys.executable, "-m", "benchmarks", "--quick", "--only", "stdio", "--json", str(output)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "ours/reference" in done.stdout

    document = json.loads(output.read_text(encoding="utf-8"))
    assert document["mode"] == "quick"
    assert document["errors"] == []
    assert set(document["metrics"]) == {"stdio"}
    metrics = document["metrics"]["stdio"]

    expected = {key: ["ours", "reference"] for key in BOTH_CLIENTS} | {key: ["ours"] for key in OURS_ONLY}
    for key in WITH_FLOOR:
        expected[key].append("floor")
    if HOLDS_ONE_CPU:
        expected["progress_burst_wall_one_cpu_ms"] = ["ours", "reference", "floor"]
    else:
        assert "progress_burst_wall_one_cpu_ms" not in metrics
    missing = [
        f"{key}.{client}={metrics.get(key, {}).get(client)!r}"
        for key, clients in expected.items()
        for client in clients
        if not (isinstance(metrics.get(key, {}).get(client), int | float) and metrics[key][client] > 0)
    ]
    assert not missing, f"metrics not measured (or not positive): {missing}"
    # The raw stdio driver does one call at a time: no floor for memory per call in flight (HTTP has one). It runs
    # the progress job for the burst's wall time, but its CPU per notification is no floor for ours (see plan.py).
    assert metrics["memory_per_call_bytes"]["floor"] is None
    assert metrics["cpu_per_progress_us"]["floor"] is None
    assert output.with_suffix(".md").read_text(encoding="utf-8").startswith("| metric |")


def test_quick_process_run_reports_every_metric(tmp_path: Path) -> None:
    """``--only process``: import times of both SDKs, the group start against single starts, an idle client."""
    output = tmp_path / "process.json"
    command = [sys.executable, "-m", "benchmarks", "--quick", "--only", "process", "--json", str(output)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-4000:]
    document = json.loads(output.read_text(encoding="utf-8"))
    assert document["errors"] == []
    metrics = document["metrics"]["process"]
    assert metrics["import_ms"]["ours"] > 0
    assert metrics["import_ms"]["reference"] > 0
    assert metrics["group_start_ms"]["ours"] > 0
    assert metrics["group_single_slowest_ms"]["ours"] > 0
    assert metrics["idle_client_bytes"]["ours"] > 0
    assert metrics["group_client_cpu_ms"]["ours"] > 0
    assert metrics["group_bare_together_ms"]["ours"] > 0
    assert metrics["group_lazy_start_ms"]["ours"] > 0
    assert metrics["group_lazy_first_call_ms"]["ours"] > 0
    assert [key for key, row in metrics.items() if row["verdicts"]] == [
        "import_ms",
        "group_start_ms",
        "idle_client_bytes",
    ]
