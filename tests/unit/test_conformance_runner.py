"""The conformance runner's verdicts: a run passes only when the suite exited 0 and some check succeeded."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.conformance.run import Outcome, Run, load_expected, report

SKILLS_RUN = Run("sep-2640-client-no-prefetch", "extension")


def test_a_run_whose_checks_were_all_skipped_is_a_failure_not_a_pass() -> None:
    vacuous = Outcome(SKILLS_RUN, 0, 1.0, Counter({"SKIPPED": 1}))
    assert not vacuous.passed
    assert vacuous.verdict == "vacuous"
    problems = report([vacuous], {})
    assert problems == [f"{SKILLS_RUN.key}: vacuous (no check succeeded)"]


def test_a_run_with_a_successful_check_passes_and_a_listed_pass_is_stale() -> None:
    passing = Outcome(SKILLS_RUN, 0, 1.0, Counter({"SUCCESS": 1, "SKIPPED": 2}))
    assert passing.passed
    assert report([passing], {}) == []
    assert "remove it" in report([passing], {"sep-2640-client-*@extension": "not implemented"})[0]


def test_the_expected_failures_file_lists_nothing() -> None:
    expected = load_expected(Path(__file__).resolve().parents[1] / "conformance" / "expected-failures.yml")
    assert expected == {}
