"""RestartLedger: jittered, growing waits; a cap of restarts per sliding window; a calm window starts over."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from mcp_client import RestartPolicy
from mcp_client.policy.restart import RestartLedger


def test_waits_grow_within_their_bounds_and_the_cap_leaves_the_server_down() -> None:
    policy = RestartPolicy(max_restarts=3, window=60, initial_backoff=1, max_backoff=3, multiplier=2)
    ledger = RestartLedger(policy, random=lambda: 0.999)
    assert ledger.next_delay(0) == pytest.approx(0.999)
    assert ledger.next_delay(1) == pytest.approx(1.998)
    assert ledger.next_delay(2) == pytest.approx(2.997)  # capped by max_backoff
    assert ledger.next_delay(3) is None
    assert ledger.restarts == 3


def test_restarts_older_than_the_window_no_longer_count() -> None:
    ledger = RestartLedger(RestartPolicy(max_restarts=2, window=10, initial_backoff=1), random=lambda: 0.5)
    assert ledger.next_delay(0) is not None
    assert ledger.next_delay(5) is not None
    assert ledger.next_delay(9) is None
    assert ledger.next_delay(10.5) == pytest.approx(1.0)  # the one at 0 left the window: the second wait's bound
    assert ledger.next_delay(21) == pytest.approx(0.5)  # a calm window: back to the first bound


def test_no_restarts_at_all() -> None:
    assert RestartLedger(RestartPolicy(max_restarts=0)).next_delay(0) is None


@given(st.lists(st.floats(min_value=0, max_value=1000), min_size=1, max_size=50))
def test_never_more_than_the_cap_within_any_window(gaps: list[float]) -> None:
    policy = RestartPolicy(max_restarts=3, window=30)
    ledger = RestartLedger(policy)
    granted: list[float] = []
    now = 0.0
    for gap in gaps:
        now += gap
        delay = ledger.next_delay(now)
        if delay is not None:
            assert 0 <= delay <= policy.max_backoff
            granted.append(now)
    for moment in granted:
        assert sum(1 for t in granted if moment - policy.window < t <= moment) <= policy.max_restarts


@pytest.mark.parametrize(
    "changes",
    [
        {"max_restarts": -1},
        {"max_restarts": True},
        {"window": -1},
        {"initial_backoff": float("nan")},
        {"multiplier": 0.5},
    ],
)
def test_invalid_policies_are_refused(changes: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        RestartPolicy(**changes)  # type: ignore[arg-type]
