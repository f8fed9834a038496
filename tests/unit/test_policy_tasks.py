"""The task core: poll schedule, status machine and input-key dedup, as properties over many inputs on a fake clock."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, strategies as st

from mcp_client.policy.tasks import (
    InputKeys,
    PollPolicy,
    PollSchedule,
    StatusChange,
    StatusTracker,
    TaskState,
    server_interval,
)

instants = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
server_seconds = st.one_of(st.none(), st.floats(min_value=0.0, max_value=1e9, allow_nan=False))
statuses = st.sampled_from([s.value for s in TaskState])


@st.composite
def poll_policies(draw: st.DrawFn) -> PollPolicy:
    low = draw(st.floats(min_value=0.001, max_value=5.0))
    high = draw(st.floats(min_value=low, max_value=600.0))
    return PollPolicy(
        default_interval=draw(st.floats(min_value=0.001, max_value=60.0)),
        min_interval=low,
        max_interval=high,
        backoff=draw(st.floats(min_value=1.0, max_value=4.0)),
        jitter=draw(st.floats(min_value=0.0, max_value=1.0)),
        failure_backoff=draw(st.floats(min_value=0.001, max_value=10.0)),
    )


@given(poll_policies(), server_seconds, st.lists(st.booleans(), min_size=1, max_size=40), instants, st.integers())
def test_never_polls_sooner_than_the_server_asked_and_never_past_the_cap(
    policy: PollPolicy, interval: float | None, changes: list[bool], start: float, seed: int
) -> None:
    schedule = PollSchedule(policy, random.Random(seed))
    floor = max(policy.min_interval, interval if interval is not None else policy.default_interval)
    ceiling = max(floor, policy.max_interval) * (1 + policy.jitter)
    now = start
    for changed in changes:
        at = schedule.answered(now, interval=interval, changed=changed)
        slack = 1e-9 * max(1.0, now)  # float spacing at this clock value
        assert now + floor - slack <= at <= now + ceiling * (1 + 1e-9) + slack
        now = at


@given(poll_policies(), st.floats(min_value=0.0, max_value=1e3), st.integers(min_value=1, max_value=30))
def test_the_wait_grows_while_nothing_changes_and_resets_when_the_status_moves(
    policy: PollPolicy, interval: float, unchanged: int
) -> None:
    schedule = PollSchedule(policy.replace(jitter=0.0))
    first = schedule.answered(0.0, interval=interval, changed=True)
    waits = [first]
    now = first
    for _ in range(unchanged):
        at = schedule.answered(now, interval=interval, changed=False)
        waits.append(at - now)
        now = at
    assert all(later >= earlier * (1 - 1e-9) for earlier, later in itertools.pairwise(waits))
    assert schedule.answered(now, interval=interval, changed=True) - now == pytest.approx(first)


@given(st.floats(min_value=1e3, max_value=1e12), instants, st.floats(min_value=0.0, max_value=100.0))
def test_a_huge_server_interval_is_capped_by_the_hard_deadline(interval: float, now: float, left: float) -> None:
    schedule = PollSchedule(PollPolicy(jitter=0.0))
    at = schedule.answered(now, interval=interval, changed=True)
    assert at - now == pytest.approx(interval)  # honoured: longer than the cap, still what the server asked
    assert schedule.next_poll_at(now + left) == now + left


@given(poll_policies(), st.integers(min_value=1, max_value=60), st.integers())
def test_failed_polls_back_off_exponentially_up_to_the_cap(policy: PollPolicy, failures: int, seed: int) -> None:
    schedule = PollSchedule(policy.replace(jitter=0.0), random.Random(seed))
    waits = [schedule.failed(0.0) for _ in range(failures)]
    ceiling = max(schedule.base_interval, policy.max_interval)
    assert waits == sorted(waits)
    assert waits[0] == pytest.approx(min(policy.failure_backoff, ceiling))
    assert all(w <= ceiling for w in waits)
    assert schedule.failures == failures
    schedule.answered(0.0, interval=None, changed=False)
    assert schedule.failures == 0


def test_a_zero_or_bogus_server_interval_cannot_make_the_client_spin() -> None:
    policy = PollPolicy(min_interval=0.05, jitter=0.0)
    schedule = PollSchedule(policy)
    assert schedule.answered(0.0, interval=server_interval(0), changed=True) == pytest.approx(0.05)
    assert server_interval(-5) is None
    assert server_interval(True) is None
    assert server_interval("100") is None
    assert server_interval(math.nan) is None
    assert server_interval(2500) == 2.5


@pytest.mark.parametrize(
    "changes",
    [
        {"default_interval": 0},
        {"min_interval": -1},
        {"max_interval": math.inf},
        {"backoff": 0.5},
        {"jitter": 2},
        {"min_interval": 10.0, "max_interval": 1.0},
    ],
)
def test_a_bad_poll_policy_is_refused(changes: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must"):
        PollPolicy(**changes)


@given(st.lists(st.tuples(statuses, st.sampled_from([None, "a", "b"])), min_size=1, max_size=30))
def test_once_terminal_the_status_never_moves(reports: list[tuple[str, str | None]]) -> None:
    tracker = StatusTracker()
    terminal: TaskState | None = None
    for status, message in reports:
        change = tracker.observe(status, message)
        if terminal is not None:
            assert tracker.status is terminal
            assert change in (StatusChange.UNCHANGED, StatusChange.BACKWARDS)
            assert (change is StatusChange.BACKWARDS) == (status != terminal.value)
        elif tracker.terminal:
            terminal = tracker.status


def test_working_and_input_required_may_alternate() -> None:
    tracker = StatusTracker()
    assert tracker.observe("working") is StatusChange.FIRST
    assert tracker.observe("input_required") is StatusChange.CHANGED
    assert tracker.observe("working", "continuing") is StatusChange.CHANGED
    assert tracker.observe("working", "continuing") is StatusChange.UNCHANGED
    assert tracker.observe("completed") is StatusChange.CHANGED
    assert tracker.terminal


def test_a_report_older_than_one_seen_is_backwards_and_not_followed() -> None:
    tracker = StatusTracker()
    tracker.observe("working", None, "2026-12-01T10:00:05Z")
    assert tracker.observe("input_required", None, "2026-12-01T10:00:09+00:00") is StatusChange.CHANGED
    assert tracker.observe("working", None, "2026-12-01T10:00:01Z") is StatusChange.BACKWARDS
    assert tracker.status is TaskState.INPUT_REQUIRED
    assert tracker.observe("bogus") is StatusChange.INVALID
    assert tracker.status is TaskState.INPUT_REQUIRED


@given(st.lists(st.lists(st.sampled_from("abcdefg"), max_size=5), max_size=20))
def test_each_input_key_is_answered_once_over_the_task_life(polls: list[list[str]]) -> None:
    keys = InputKeys()
    answered: list[str] = []
    for poll in polls:
        answered.extend(keys.fresh({key: {"method": "elicitation/create"} for key in poll}))
    assert len(answered) == len(set(answered))
    assert set(answered) == {key for poll in polls for key in poll}


def test_an_undelivered_answer_is_kept_and_sent_again_never_asked_again() -> None:
    keys = InputKeys()
    assert list(keys.fresh({"k": {}, "j": {}})) == ["k", "j"]
    keys.hold({"k": {"action": "accept"}, "j": {"action": "decline"}})
    assert keys.fresh({"k": {}}) == {}  # the person is not asked again
    assert keys.to_resend({"k": {}}) == {"k": {"action": "accept"}}  # "j" is no longer asked for: dropped
    assert keys.to_resend({"k": {}, "j": {}}) == {"k": {"action": "accept"}}
    keys.delivered()
    assert keys.to_resend({"k": {}}) == {}
