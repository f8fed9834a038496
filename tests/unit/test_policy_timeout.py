"""TimeoutPolicy validation and the Deadline state machine, driven by a fake clock."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import assume, given, settings, strategies as st

from mcp_client.policy import DEFAULT_TIMEOUT, Deadline, TimeoutKind, TimeoutPolicy

IDLE = TimeoutKind.IDLE
MAXIMUM = TimeoutKind.MAXIMUM
CALLER = TimeoutKind.CALLER
FIELDS = ("idle", "maximum", "connect", "notify_after")

durations = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)
instants = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
fractions = st.floats(min_value=0.0, max_value=1.0, exclude_max=True, allow_nan=False)


def before(t: float) -> float:
    """The float just below ``t``: the last instant at which something due at ``t`` is not yet due."""
    return math.nextafter(t, -math.inf)


def sent(policy: TimeoutPolicy, at: float = 0.0, caller_deadline: float = math.inf) -> Deadline:
    """A deadline started and written at ``at``."""
    deadline = Deadline(policy, started_at=at, caller_deadline=caller_deadline)
    deadline.mark_sent(at)
    return deadline


# -- TimeoutPolicy -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIELDS)
@pytest.mark.parametrize(
    ("value", "error"),
    [
        *[(bad, ValueError) for bad in (-1.0, -1, 0, 0.0, -0.0, -math.inf, math.nan)],
        *[(bad, TypeError) for bad in (True, False, "5", [5])],
    ],
)
def test_policy_rejects_invalid_durations(name: str, value: object, error: type[Exception]) -> None:
    """Non-positive, NaN, bool and non-number durations are refused."""
    with pytest.raises(error, match=name):
        TimeoutPolicy(**{name: value})  # type: ignore[arg-type]


@given(st.sampled_from(FIELDS), st.floats(max_value=0.0, allow_nan=False))
def test_policy_rejects_any_non_positive_duration(name: str, value: float) -> None:
    """Every float <= 0 is refused for every duration field."""
    with pytest.raises(ValueError, match=name):
        TimeoutPolicy(**{name: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("name", FIELDS)
def test_policy_allows_none_and_positive_values(name: str) -> None:
    """None (no limit) and positive ints/floats are accepted as given."""
    assert getattr(TimeoutPolicy(**{name: None}), name) is None  # type: ignore[arg-type]
    assert getattr(TimeoutPolicy(**{name: 0.001}), name) == 0.001  # type: ignore[arg-type]
    assert getattr(TimeoutPolicy(**{name: 7}), name) == 7  # type: ignore[arg-type]


def test_default_policy() -> None:
    """The default is 60 s idle, 600 s maximum, 30 s connect, no slow notice, maximum not paused."""
    assert TimeoutPolicy() == DEFAULT_TIMEOUT
    assert (DEFAULT_TIMEOUT.idle, DEFAULT_TIMEOUT.maximum, DEFAULT_TIMEOUT.connect) == (60.0, 600.0, 30.0)
    assert DEFAULT_TIMEOUT.notify_after is None
    assert not DEFAULT_TIMEOUT.pause_maximum


def test_unlimited_has_no_limits() -> None:
    """unlimited() sets every limit to None, and its deadline never expires nor wakes."""
    policy = TimeoutPolicy.unlimited()
    assert all(getattr(policy, name) is None for name in FIELDS)
    deadline = sent(policy)
    assert deadline.expired(1e300) is None
    assert deadline.next_wakeup(1e300) == math.inf
    assert deadline.remaining(1e300) == math.inf
    assert not deadline.take_slow(1e300)


def test_replace_changes_only_named_fields() -> None:
    """replace() returns a new policy with the named fields changed and the rest kept."""
    policy = TimeoutPolicy(idle=5, maximum=50, notify_after=3, pause_maximum=True)
    changed = policy.replace(idle=7, maximum=None)
    assert changed == TimeoutPolicy(idle=7, maximum=None, notify_after=3, pause_maximum=True)
    assert policy.idle == 5


def test_replace_validates() -> None:
    """replace() applies the same validation as the constructor."""
    with pytest.raises(ValueError, match="idle"):
        TimeoutPolicy().replace(idle=0)


# -- idle ----------------------------------------------------------------------------------------------------


@given(instants, durations, st.lists(st.floats(min_value=0.0, max_value=0.5), max_size=5))
def test_idle_fires_exactly_idle_after_last_sign_of_life(start: float, idle: float, gaps: list[float]) -> None:
    """IDLE is never reported before ``idle`` has passed since the last sign of life, and is reported then."""
    deadline = sent(TimeoutPolicy(idle=idle, maximum=None), at=start)
    last = start
    for gap in gaps:
        now = last + gap * idle
        assert deadline.expired(now) is None
        assert deadline.sign_of_life(now)
        last = now
    due = last + idle
    assert deadline.expired(before(due)) is None
    assert deadline.expired(due) is IDLE
    assert deadline.next_wakeup(last) == due


def test_idle_does_not_run_before_the_request_is_sent() -> None:
    """Before mark_sent, idle cannot fire and a sign of life is not accepted."""
    deadline = Deadline(TimeoutPolicy(idle=1, maximum=None), started_at=0.0)
    assert not deadline.sign_of_life(5.0)
    assert deadline.expired(100.0) is None
    deadline.mark_sent(100.0)
    assert deadline.expired(100.5) is None
    assert deadline.expired(101.0) is IDLE


def test_mark_sent_restarts_idle_for_a_new_attempt() -> None:
    """A second mark_sent (a retry) restarts the idle clock."""
    deadline = sent(TimeoutPolicy(idle=10, maximum=None))
    deadline.mark_sent(8.0)
    assert deadline.expired(17.0) is None
    assert deadline.expired(18.0) is IDLE


def test_paused_time_not_counted_for_idle() -> None:
    """Time spent paused does not count towards idle."""
    deadline = sent(TimeoutPolicy(idle=10, maximum=None))
    deadline.pause(4.0)
    assert deadline.expired(500.0) is None
    deadline.resume(100.0)
    assert deadline.expired(105.0) is None
    assert deadline.expired(106.0) is IDLE


def test_sign_of_life_while_paused_restarts_idle_from_resume() -> None:
    """A sign of life during a pause leaves a full idle period after the resume."""
    deadline = sent(TimeoutPolicy(idle=10, maximum=None))
    deadline.pause(4.0)
    assert deadline.sign_of_life(50.0)
    deadline.resume(60.0)
    assert deadline.expired(69.0) is None
    assert deadline.expired(70.0) is IDLE


def test_sign_of_life_after_a_pause_gives_a_full_idle_period() -> None:
    """A pause before the last sign of life does not stretch the idle period that follows it."""
    deadline = sent(TimeoutPolicy(idle=10, maximum=None))
    deadline.pause(2.0)
    deadline.resume(5.0)
    assert deadline.sign_of_life(7.0)
    assert deadline.expired(16.0) is None
    assert deadline.expired(17.0) is IDLE


# -- maximum -------------------------------------------------------------------------------------------------


@given(instants, durations, st.one_of(st.none(), durations), st.lists(fractions, max_size=6), fractions)
def test_maximum_always_fires_at_started_plus_maximum(
    start: float, maximum: float, idle: float | None, lives: list[float], late: float
) -> None:
    """For every now >= started_at + maximum, expired is MAXIMUM, whatever progress said."""
    deadline = Deadline(TimeoutPolicy(idle=idle, maximum=maximum), started_at=start)
    deadline.mark_sent(start)
    due = start + maximum
    for frac in sorted(lives):
        deadline.sign_of_life(start + frac * maximum)
    assert deadline.expired(due) is MAXIMUM
    assert deadline.expired(due + late * 1e6) is MAXIMUM
    assert deadline.expired(before(due)) is not MAXIMUM


@given(instants, durations, st.lists(fractions, max_size=6))
def test_progress_never_extends_maximum(start: float, maximum: float, lives: list[float]) -> None:
    """Any interleaving of sign_of_life calls leaves the instant MAXIMUM first fires unchanged."""
    policy = TimeoutPolicy(idle=None, maximum=maximum)
    quiet, chatty = sent(policy, at=start), sent(policy, at=start)
    for frac in sorted(lives):
        now = start + frac * maximum
        chatty.sign_of_life(now)
        assert chatty.expired(now) is quiet.expired(now)
    due = start + maximum
    for deadline in (quiet, chatty):
        assert deadline.expired(before(due)) is None
        assert deadline.expired(due) is MAXIMUM
        assert deadline.hard_deadline(start) == due


@given(instants, durations, durations, st.one_of(st.none(), durations), fractions)
def test_next_wakeup_never_later_than_hard_deadline(
    start: float, maximum: float, caller_offset: float, idle: float | None, frac: float
) -> None:
    """next_wakeup(now) is never later than the maximum nor the caller's deadline."""
    deadline = sent(TimeoutPolicy(idle=idle, maximum=maximum), at=start, caller_deadline=start + caller_offset)
    now = start + frac * max(maximum, caller_offset)
    wake = deadline.next_wakeup(now)
    assert wake <= deadline.hard_deadline(now)
    assert wake <= start + maximum
    assert wake <= start + caller_offset


def test_paused_time_counted_for_maximum_by_default() -> None:
    """Without pause_maximum, the maximum keeps running (and fires) while paused."""
    deadline = sent(TimeoutPolicy(idle=5, maximum=20))
    deadline.pause(1.0)
    assert deadline.expired(19.0) is None
    assert deadline.expired(20.0) is MAXIMUM
    assert deadline.next_wakeup(2.0) == 20.0


def test_resumed_pause_does_not_extend_maximum_by_default() -> None:
    """Without pause_maximum, a finished pause leaves the maximum where it was."""
    deadline = sent(TimeoutPolicy(idle=None, maximum=20))
    deadline.pause(5.0)
    deadline.resume(15.0)
    assert deadline.expired(19.0) is None
    assert deadline.expired(20.0) is MAXIMUM


def test_pause_maximum_stops_the_maximum_clock() -> None:
    """With pause_maximum, paused time is added to the maximum."""
    deadline = sent(TimeoutPolicy(idle=None, maximum=20, pause_maximum=True))
    deadline.pause(5.0)
    assert deadline.expired(1000.0) is None
    deadline.resume(15.0)
    assert deadline.expired(29.0) is None
    assert deadline.expired(30.0) is MAXIMUM


@given(instants, durations, st.floats(min_value=0.001, max_value=1e3), fractions)
def test_pause_maximum_shifts_maximum_by_paused_time(start: float, maximum: float, pause: float, at: float) -> None:
    """With pause_maximum, MAXIMUM fires at started_at + maximum + paused time, not before."""
    deadline = sent(TimeoutPolicy(idle=None, maximum=maximum, pause_maximum=True), at=start)
    paused_at = start + at * maximum
    deadline.pause(paused_at)
    deadline.resume(paused_at + pause)
    due = start + maximum + ((paused_at + pause) - paused_at)
    assert deadline.expired(before(due)) is None
    assert deadline.expired(due) is MAXIMUM


# -- pauses --------------------------------------------------------------------------------------------------


def test_pauses_nest() -> None:
    """pause, pause, resume leaves the deadline paused; the second resume ends the pause."""
    deadline = sent(TimeoutPolicy(idle=10, maximum=None))
    deadline.pause(1.0)
    deadline.pause(2.0)
    deadline.resume(3.0)
    assert deadline.paused
    assert deadline.expired(50.0) is None
    deadline.resume(50.0)
    assert not deadline.paused
    assert deadline.expired(58.0) is None
    assert deadline.expired(59.0) is IDLE


def test_resume_without_pause_raises() -> None:
    """resume() with no open pause is a RuntimeError, also after pauses were balanced."""
    deadline = sent(TimeoutPolicy())
    with pytest.raises(RuntimeError, match="pause"):
        deadline.resume(1.0)
    deadline.pause(1.0)
    deadline.resume(2.0)
    with pytest.raises(RuntimeError, match="pause"):
        deadline.resume(3.0)


# -- caller deadline -----------------------------------------------------------------------------------------


@given(instants, durations, fractions)
def test_caller_deadline_earlier_reports_caller(start: float, maximum: float, frac: float) -> None:
    """With the caller's deadline before the maximum, CALLER is reported exactly at the caller's deadline."""
    caller = start + frac * maximum
    assume(caller < start + maximum)
    deadline = sent(TimeoutPolicy(idle=None, maximum=maximum), at=start, caller_deadline=caller)
    assert deadline.expired(before(caller)) is None
    assert deadline.expired(caller) is CALLER
    assert deadline.expired(start + maximum) is CALLER
    assert deadline.next_wakeup(start) == caller


@given(instants, durations, st.floats(min_value=0.0, max_value=1e6, allow_nan=False))
def test_caller_deadline_later_or_equal_reports_maximum(start: float, maximum: float, extra: float) -> None:
    """With the maximum at or before the caller's deadline, MAXIMUM is reported at the maximum."""
    due = start + maximum
    deadline = sent(TimeoutPolicy(idle=None, maximum=maximum), at=start, caller_deadline=due + extra)
    assert deadline.expired(before(due)) is None
    assert deadline.expired(due) is MAXIMUM
    assert deadline.expired(due + extra) is MAXIMUM


def test_caller_deadline_without_maximum() -> None:
    """With no policy maximum, the caller's deadline still ends the call as CALLER."""
    deadline = sent(TimeoutPolicy(idle=None, maximum=None), caller_deadline=7.0)
    assert deadline.expired(6.9) is None
    assert deadline.expired(7.0) is CALLER
    assert deadline.remaining(3.0) == 4.0
    assert deadline.remaining(9.0) == 0.0


# -- slow notice ---------------------------------------------------------------------------------------------


@given(instants, durations, st.lists(st.floats(min_value=0.0, max_value=3.0), max_size=10))
def test_take_slow_exactly_once_at_or_after_notify_after(start: float, notify: float, asks: list[float]) -> None:
    """take_slow is False before started_at + notify_after and True exactly once, at the first ask at or after it."""
    deadline = sent(TimeoutPolicy(idle=None, maximum=None, notify_after=notify), at=start)
    due = start + notify
    assert not deadline.take_slow(before(due))
    times = [start + frac * notify for frac in sorted(asks)] + [due + 1e6]
    first_due = next(i for i, now in enumerate(times) if now >= due)
    assert [deadline.take_slow(now) for now in times] == [i == first_due for i in range(len(times))]


def test_take_slow_never_after_finish() -> None:
    """After finish(), take_slow is False even past notify_after."""
    deadline = sent(TimeoutPolicy(notify_after=5))
    deadline.finish()
    assert not deadline.take_slow(10.0)


def test_take_slow_without_notify_after_is_always_false() -> None:
    """With no notify_after there is no slow notice."""
    assert not sent(TimeoutPolicy(notify_after=None)).take_slow(1e9)


# -- finish --------------------------------------------------------------------------------------------------


def test_finish_ends_every_clock() -> None:
    """After finish(), nothing expires, nothing wakes, and a sign of life is refused."""
    deadline = sent(TimeoutPolicy(idle=1, maximum=2), caller_deadline=3.0)
    deadline.finish()
    for now in (0.5, 1.0, 2.0, 3.0, 1e9):
        assert deadline.expired(now) is None
    assert deadline.next_wakeup(0.0) == math.inf
    assert not deadline.sign_of_life(0.5)


# -- next_wakeup as a schedule: a shell that only looks when told must see every expiry on time --------------

WEIGHTED_ACTIONS = ("sign_of_life",) * 4 + ("pause",) * 2 + ("resume",) * 3 + ("mark_sent", "nothing", "finish")


@dataclass
class Model:
    """An independent reference for the clocks, advanced one whole second at a time (valid up to the first expiry)."""

    policy: TimeoutPolicy
    caller_deadline: float
    sent: bool = False
    finished: bool = False
    depth: int = 0
    idle_used: int = 0
    maximum_used: int = 0

    def tick(self) -> None:
        if self.depth == 0 and self.sent:
            self.idle_used += 1
        if self.depth == 0 or not self.policy.pause_maximum:
            self.maximum_used += 1

    def apply(self, action: str) -> bool | None:
        if action == "mark_sent":
            self.sent, self.idle_used = True, 0
        elif action == "sign_of_life":
            accepted = self.sent and not self.finished
            if accepted:
                self.idle_used = 0
            return accepted
        elif action == "pause":
            self.depth += 1
        elif action == "resume":
            self.depth -= 1
        elif action == "finish":
            self.finished = True
        return None

    def idle_at(self, now: float) -> float:
        if self.policy.idle is None or not self.sent or self.depth:
            return math.inf
        return now + self.policy.idle - self.idle_used

    def maximum_at(self, now: float) -> float:
        if self.policy.maximum is None or (self.depth and self.policy.pause_maximum):
            return math.inf
        return now + self.policy.maximum - self.maximum_used

    def kind(self, now: float) -> TimeoutKind | None:
        if self.finished:
            return None
        maximum_hit = self.policy.maximum is not None and self.maximum_used >= self.policy.maximum
        if maximum_hit:
            return MAXIMUM
        if now >= self.caller_deadline:
            return CALLER
        if self.policy.idle is not None and self.sent and self.idle_used >= self.policy.idle:
            return IDLE
        return None


def apply(deadline: Deadline, action: str, now: float) -> bool | None:
    """Feed one input to a Deadline; returns sign_of_life's answer, else None."""
    if action == "sign_of_life":
        return deadline.sign_of_life(now)
    if action == "finish":
        deadline.finish()
    elif action != "nothing":
        getattr(deadline, action)(now)
    return None


Outcome = tuple[tuple[float, TimeoutKind] | None, float | None]
"""(first expiry as (time, kind) or None, time take_slow first answered True or None)."""


def brute_force(
    policy: TimeoutPolicy, start: int, caller: float, steps: list[tuple[int, str]], horizon: int
) -> Outcome:
    """Look at every whole second (and around every input), checking Deadline's clocks against the Model."""
    deadline = Deadline(policy, started_at=float(start), caller_deadline=caller)
    model = Model(policy, caller)
    slow_due = math.inf if policy.notify_after is None else start + policy.notify_after
    slow_at: float | None = None
    pending = list(steps)
    for now in range(start, horizon + 1):
        while True:
            slow = deadline.take_slow(now)
            assert slow is (slow_at is None and not model.finished and now >= slow_due)
            slow_at = now if slow else slow_at
            kind = deadline.expired(now)
            assert kind is model.kind(now)
            if kind is not None:
                return (now, kind), slow_at
            assert deadline.idle_at(now) == model.idle_at(now)
            assert deadline.maximum_at(now) == model.maximum_at(now)
            wake = min(model.idle_at(now), model.maximum_at(now), caller, math.inf if slow_at is not None else slow_due)
            assert deadline.next_wakeup(now) == (math.inf if model.finished else wake)
            if not pending or pending[0][0] != now:
                break
            action = pending.pop(0)[1]
            if action == "resume" and model.depth == 0:
                with pytest.raises(RuntimeError):
                    deadline.resume(now)
                continue
            assert apply(deadline, action, now) == model.apply(action)
        model.tick()
    return None, slow_at


def shell(policy: TimeoutPolicy, start: int, caller: float, steps: list[tuple[int, str]], horizon: int) -> Outcome:
    """Look only at the times next_wakeup names and right after each input, as the session does."""
    deadline = Deadline(policy, started_at=float(start), caller_deadline=caller)
    slow_at: float | None = None
    now = float(start)

    def look() -> TimeoutKind | None:
        nonlocal slow_at
        if deadline.take_slow(now):
            slow_at = now
        kind = deadline.expired(now)
        if kind is None:
            assert deadline.next_wakeup(now) > now, "next_wakeup names a time at which nothing is due"
        return kind

    def sleep_until(limit: float) -> TimeoutKind | None:
        nonlocal now
        while (wake := deadline.next_wakeup(now)) <= limit:
            assert wake >= now, "next_wakeup names a time already past: an expiry was missed"
            assert wake <= deadline.hard_deadline(now)
            now = wake
            if kind := look():
                return kind
        return None

    for at, action in steps:
        if kind := sleep_until(at):
            return (now, kind), slow_at
        now = float(at)
        if action == "resume" and not deadline.paused:
            with pytest.raises(RuntimeError):
                deadline.resume(now)
        else:
            apply(deadline, action, now)
        if kind := look():
            return (now, kind), slow_at
    if kind := sleep_until(horizon):
        return (now, kind), slow_at
    return None, slow_at


def seconds_or_none(most: int) -> st.SearchStrategy[int | None]:
    """Whole seconds in 1..most, or None (drawn as 0) now and then."""
    return st.integers(min_value=0, max_value=most).map(lambda n: n or None)


@settings(max_examples=400, deadline=None)
@given(
    idle=seconds_or_none(30),
    maximum=seconds_or_none(120),
    notify_after=seconds_or_none(60),
    pause_maximum=st.booleans(),
    start=st.integers(min_value=0, max_value=10**6),
    caller_offset=seconds_or_none(200),
    send_first=st.booleans(),
    gaps=st.lists(
        st.tuples(st.integers(min_value=0, max_value=6), st.sampled_from(WEIGHTED_ACTIONS)), min_size=4, max_size=40
    ),
)
def test_next_wakeup_shell_sees_every_expiry_exactly_on_time(
    idle: int | None,
    maximum: int | None,
    notify_after: int | None,
    pause_maximum: bool,
    start: int,
    caller_offset: int | None,
    send_first: bool,
    gaps: list[tuple[int, str]],
) -> None:
    """A shell waking only at next_wakeup times and on inputs sees each expiry and slow notice exactly when due."""
    policy = TimeoutPolicy(idle=idle, maximum=maximum, notify_after=notify_after, pause_maximum=pause_maximum)
    caller = math.inf if caller_offset is None else float(start + caller_offset)
    steps, at = [(start, "mark_sent")] if send_first else [], start
    for gap, action in gaps:
        at += gap
        steps.append((at, action))
    horizon = at + 200
    assert shell(policy, start, caller, steps, horizon) == brute_force(policy, start, caller, steps, horizon)
