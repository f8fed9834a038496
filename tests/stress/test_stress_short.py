"""The stress suite's short form, in CI: ``python -m benchmarks.stress --short`` on asyncio and trio, over the
in-memory transport, stdio and HTTP: the call path's scenarios, task servers that misbehave and a supervised
server killed mid-task, then subscriptions with cut streams, the shared cache under identity churn and a
supervised server killed during a listen. It must pass, and must really have run every scenario.

It runs as four processes (each backend, the call path and the rooms apart), so that the test processes of the
suite take them side by side; together they are exactly what ``--short`` runs.

The long form is for a developer: ``python -m benchmarks.stress --soak-seconds 300 --trace-memory``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_client.testing._peer_hostile import HOSTILE_KINDS

REPO_ROOT = Path(__file__).resolve().parents[2]


def _short_run(tmp_path: Path, backend: str, part: str) -> dict[str, dict[str, Any]]:
    report_path = tmp_path / "stress.json"
    command = [sys.executable, "-m", "benchmarks.stress", "--short", "--backend", backend, part]
    command += ["--json", str(report_path)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    reports = json.loads(report_path.read_text())
    assert [report["backend"] for report in reports] == [backend]
    tallies = {tally["name"]: tally for tally in reports[0]["tallies"]}
    assert all(not tally["failures"] for tally in tallies.values())
    return tallies


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_short_stress_run_of_the_call_path_passes_and_counts_every_scenario(tmp_path: Path, backend: str) -> None:
    tallies = _short_run(tmp_path, backend, "--no-rooms")
    for transport in ("memory", "stdio", "http"):
        rounds = tallies[f"hostile/{transport}"]["counts"]["rounds"]
        assert rounds == len(HOSTILE_KINDS) + 1  # each kind once, and result_and_error
        race = tallies[f"cancel_race/{transport}"]["counts"]
        assert race.get("answered", 0) + race.get("cancelled", 0) == 200
    soak = tallies["soak/stdio"]
    assert soak["counts"]["calls"] > 100
    assert soak["counts"]["increments_run"] <= soak["counts"]["increments_sent"]
    assert soak["figures"]["fds_after"] == soak["figures"]["fds_before"]
    for transport in ("memory", "http"):
        storm = tallies[f"tasks/{transport}"]["counts"]
        assert storm["calls"] == storm["tasks_created"] == 28  # two rounds of 14 task-backed calls
        assert sum(n for name, n in storm.items() if name.startswith("ended:")) == 28
    assert tallies["tasks/http"]["counts"]["polls_cut"] >= 1  # the drops mid-poll really happened
    assert tallies["tasks_supervised/stdio"]["counts"]["rounds"] == 2
    assert not any(name.startswith(("subscriptions_cut/", "cache_churn/", "supervised_listen/")) for name in tallies)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_short_stress_run_of_the_rooms_passes_and_counts_every_scenario(tmp_path: Path, backend: str) -> None:
    tallies = _short_run(tmp_path, backend, "--rooms-only")
    for transport in ("memory", "http"):  # many subscriptions on one pipe or endpoint, cut three times
        cut = tallies[f"subscriptions_cut/{transport}"]["counts"]
        assert cut["cuts"] == 3
        assert cut["updates"] == 3 * 8
    churn = tallies["cache_churn/http"]["counts"]
    assert churn["clients"] == 40
    assert churn["invalidations"] > 0
    for era in ("modern", "legacy"):  # a supervised server killed twice during a listen
        assert tallies[f"supervised_listen/{era}"]["counts"]["kills"] == 2
        assert tallies[f"supervised_listen/{era}"]["counts"]["relistens"] == 2
    assert not any(name.startswith(("hostile/", "cancel_race/", "soak/", "tasks")) for name in tallies)
