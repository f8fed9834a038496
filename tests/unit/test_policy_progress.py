"""Progress tokens, the per-call progress tracker, and the latest-wins coalescer."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, strategies as st

from mcp_client.policy import Progress, ProgressCoalescer, ProgressTokens, ProgressTracker, ProgressVerdict

ACCEPTED = ProgressVerdict.ACCEPTED
NOT_A_NUMBER = ProgressVerdict.NOT_A_NUMBER
NOT_INCREASING = ProgressVerdict.NOT_INCREASING
FINISHED = ProgressVerdict.FINISHED

finite = st.one_of(
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(10**12), max_value=10**12),
)
garbage = st.one_of(
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=1),
)
RESTART = object()


# -- ProgressTokens ------------------------------------------------------------------------------------------


@given(st.integers(min_value=1, max_value=3000), st.text(max_size=4))
def test_tokens_never_repeat(n: int, prefix: str) -> None:
    """Many allocations from one allocator give pairwise distinct tokens, all carrying the prefix."""
    tokens = ProgressTokens(prefix)
    allocated = [tokens.allocate() for _ in range(n)]
    assert len(set(allocated)) == n
    assert all(token.startswith(prefix) for token in allocated)


def test_tokens_are_strings_with_default_prefix() -> None:
    """Tokens are strings in their own namespace (never a bare request id)."""
    token = ProgressTokens().allocate()
    assert isinstance(token, str)
    assert token.startswith("p")


# -- ProgressTracker -----------------------------------------------------------------------------------------


@given(finite)
def test_tracker_accepts_and_delivers_first_finite_value(value: float) -> None:
    """The first finite number of a call is accepted and delivered."""
    tracker = ProgressTracker()
    assert tracker.accept(value) == (ACCEPTED, True)
    assert tracker.last_delivered == value


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, False, None, "1", b"1", [1], {"p": 1}])
def test_tracker_rejects_non_numbers(value: object) -> None:
    """NaN, infinities, bools and non-numbers are NOT_A_NUMBER, never delivered, and leave no trace."""
    tracker = ProgressTracker()
    assert tracker.judge(value) is NOT_A_NUMBER
    assert tracker.accept(value) == (NOT_A_NUMBER, False)
    assert tracker.last_delivered is None
    assert tracker.accept(-5) == (ACCEPTED, True)


@given(finite, finite)
def test_tracker_rejects_equal_or_smaller_within_attempt(first: float, second: float) -> None:
    """Within an attempt, a value not strictly greater than the last accepted one is NOT_INCREASING."""
    tracker = ProgressTracker()
    tracker.accept(first)
    expected = (ACCEPTED, True) if second > first else (NOT_INCREASING, False)
    assert tracker.accept(second) == expected


def test_tracker_rejects_repeat_of_same_value() -> None:
    """The same value twice is NOT_INCREASING the second time."""
    tracker = ProgressTracker()
    assert tracker.accept(3) == (ACCEPTED, True)
    assert tracker.accept(3.0) == (NOT_INCREASING, False)


@given(st.lists(st.one_of(finite, garbage), max_size=5), st.one_of(finite, garbage))
def test_tracker_everything_finished_after_finish(before: list[object], after: object) -> None:
    """After finish(), every value (valid or not) is FINISHED and not delivered."""
    tracker = ProgressTracker()
    for value in before:
        tracker.accept(value)
    delivered = tracker.last_delivered
    tracker.finish()
    assert tracker.judge(after) is FINISHED
    assert tracker.accept(after) == (FINISHED, False)
    assert tracker.last_delivered == delivered


@given(st.lists(st.one_of(finite, garbage, st.just(RESTART)), max_size=40))
def test_tracker_delivered_values_strictly_increase(inputs: list[object]) -> None:
    """For any input sequence, across restart_attempt() calls too, delivered values strictly increase."""
    tracker = ProgressTracker()
    delivered: list[float] = []
    for value in inputs:
        if value is RESTART:
            tracker.restart_attempt()
            continue
        verdict, deliver = tracker.accept(value)
        if deliver:
            assert verdict is ACCEPTED
            delivered.append(value)  # type: ignore[arg-type]
    assert all(a < b for a, b in itertools.pairwise(delivered))
    assert tracker.last_delivered == (delivered[-1] if delivered else None)


@given(st.lists(finite, min_size=1, max_size=20))
def test_tracker_accepted_within_attempt_strictly_increase(inputs: list[float]) -> None:
    """Within one attempt, the accepted values are exactly the running strict maxima."""
    tracker = ProgressTracker()
    high = -math.inf
    for value in inputs:
        verdict, _ = tracker.accept(value)
        assert (verdict is ACCEPTED) is (value > high)
        high = max(high, value)


def test_tracker_restart_below_high_water_is_accepted_not_delivered() -> None:
    """After restart_attempt, a value below the delivered mark proves life but is not delivered."""
    tracker = ProgressTracker()
    assert tracker.accept(10) == (ACCEPTED, True)
    tracker.restart_attempt()
    assert tracker.accept(2) == (ACCEPTED, False)
    assert tracker.accept(10) == (ACCEPTED, False)
    assert tracker.accept(11) == (ACCEPTED, True)
    assert tracker.last_delivered == 11


def test_tracker_restart_still_judges_within_new_attempt() -> None:
    """After restart_attempt, values are judged against the new attempt's own last value."""
    tracker = ProgressTracker()
    tracker.accept(10)
    tracker.restart_attempt()
    tracker.accept(2)
    assert tracker.accept(2) == (NOT_INCREASING, False)
    assert tracker.accept(1) == (NOT_INCREASING, False)


def test_tracker_huge_int_is_not_a_number_rather_than_crash() -> None:
    """An int too large for a float (possible from JSON) is NOT_A_NUMBER, not an OverflowError."""
    tracker = ProgressTracker()
    assert tracker.judge(10**400) is NOT_A_NUMBER
    assert tracker.accept(10**400) == (NOT_A_NUMBER, False)


# -- Progress ------------------------------------------------------------------------------------------------


def test_progress_fraction_only_with_positive_total() -> None:
    """fraction is progress/total for a positive total, else None."""
    assert Progress(1, 4).fraction == 0.25
    assert Progress(1).fraction is None
    assert Progress(1, 0).fraction is None


# -- ProgressCoalescer ---------------------------------------------------------------------------------------


def test_coalescer_latest_wins() -> None:
    """Offering a, b, c before a take delivers c and counts two overwritten updates."""
    coalescer = ProgressCoalescer()
    for value in (1, 2, 3):
        coalescer.offer(Progress(value))
    assert coalescer.take(0.0) == Progress(3)
    assert coalescer.coalesced == 2
    assert coalescer.take(0.0) is None


def test_coalescer_pending_flag() -> None:
    """pending is True exactly while an offered update has not been taken."""
    coalescer = ProgressCoalescer()
    assert not coalescer.pending
    assert coalescer.ready_at() == math.inf
    coalescer.offer(Progress(1))
    assert coalescer.pending
    coalescer.take(0.0)
    assert not coalescer.pending


def test_coalescer_take_waits_for_min_interval() -> None:
    """After a delivery, take returns None before ready_at and the update at ready_at."""
    coalescer = ProgressCoalescer(min_interval=2.0)
    coalescer.offer(Progress(1))
    assert coalescer.take(10.0) == Progress(1)
    coalescer.offer(Progress(2))
    assert coalescer.ready_at() == 12.0
    assert coalescer.take(11.999) is None
    assert coalescer.pending
    assert coalescer.take(12.0) == Progress(2)


@pytest.mark.parametrize("min_interval", [-1.0, -0.001, math.nan])
def test_coalescer_rejects_negative_min_interval(min_interval: float) -> None:
    """A negative (or NaN) min_interval is refused."""
    with pytest.raises(ValueError, match="min_interval"):
        ProgressCoalescer(min_interval)


@given(
    st.one_of(st.none(), st.floats(min_value=0, max_value=100, allow_nan=False)),
    st.lists(
        st.tuples(st.floats(min_value=0, max_value=50, allow_nan=False), st.sampled_from(["offer", "take"])),
        max_size=60,
    ),
)
def test_coalescer_deliveries_spaced_by_min_interval(
    min_interval: float | None, steps: list[tuple[float, str]]
) -> None:
    """Over random offer/take times, deliveries are >= min_interval apart and always the newest offer."""
    coalescer = ProgressCoalescer(min_interval)
    interval = min_interval or 0.0
    now = 0.0
    offered = 0
    last_delivery: float | None = None
    for dt, op in steps:
        now += dt
        if op == "offer":
            offered += 1
            coalescer.offer(Progress(offered))
            continue
        had_pending = coalescer.pending
        may_deliver = last_delivery is None or now >= last_delivery + interval
        update = coalescer.take(now)
        assert (update is not None) is (had_pending and may_deliver)
        if update is not None:
            assert update == Progress(offered)
            last_delivery = now
