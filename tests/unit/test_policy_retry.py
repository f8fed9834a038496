"""RetryPolicy validation, the retry decision and the retry budget: pure functions, properties over many inputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings, strategies as st

from mcp_client.errors import (
    IdleTimeout,
    InternalError,
    MaxTimeout,
    MCPClientError,
    MethodNotFound,
    ProtocolError,
    RequestCancelled,
    ServerError,
    ToolError,
    TransportError,
)
from mcp_client.policy.retry import DEFAULT_RETRY, RetryBudget, RetryDecision, RetryPolicy, Verdict, decide

seconds = st.floats(min_value=0.0, max_value=1e4, allow_nan=False, allow_infinity=False)
instants = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
multipliers = st.floats(min_value=1.0, max_value=10.0, allow_nan=False)
attempt_numbers = st.integers(min_value=1, max_value=200)


@st.composite
def policies(draw: st.DrawFn, *, idempotent: st.SearchStrategy[bool | None] | None = None) -> RetryPolicy:
    return RetryPolicy(
        attempts=draw(st.integers(min_value=1, max_value=20)),
        initial_backoff=draw(seconds),
        max_backoff=draw(seconds),
        multiplier=draw(multipliers),
        retry_idle_timeout=draw(st.booleans()),
        idempotent=draw(idempotent if idempotent is not None else st.sampled_from([None, True, False])),
    )


def retry_afters() -> st.SearchStrategy[float | None]:
    return st.none() | seconds


def transport_errors(written: bool | None = None) -> st.SearchStrategy[TransportError]:
    return st.builds(
        lambda w, ra: TransportError("broken", written=w, retry_after=ra),
        st.booleans() if written is None else st.just(written),
        retry_afters(),
    )


def never_retryable() -> st.SearchStrategy[MCPClientError]:
    return st.sampled_from(
        [
            ServerError("x", code=-32000),
            InternalError("x", code=-32603),
            MethodNotFound("x", code=-32601),
            ToolError("x", result=None),
            ProtocolError("x"),
            RequestCancelled("x", reason="r"),
            MaxTimeout("x", timeout=1.0),
            MCPClientError("x"),
        ]
    )


UNBOUNDED = math.inf


# -- RetryPolicy -------------------------------------------------------------------------------------------


def test_defaults() -> None:
    assert RetryPolicy() == DEFAULT_RETRY
    assert DEFAULT_RETRY.attempts == 3
    assert DEFAULT_RETRY.retry_idle_timeout is False
    assert DEFAULT_RETRY.idempotent is None
    assert RetryPolicy.never().attempts == 1


@pytest.mark.parametrize("attempts", [0, -1, 1.5, "3", True, False, None])
def test_attempts_must_be_a_positive_integer(attempts: object) -> None:
    with pytest.raises(ValueError, match="attempts"):
        RetryPolicy(attempts=attempts)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["initial_backoff", "max_backoff"])
@pytest.mark.parametrize("value", [-0.001, -1, math.nan, "1", None])
def test_backoffs_must_be_non_negative_numbers(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=name):
        RetryPolicy(**{name: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("multiplier", [0.999, 0, -2, math.nan])
def test_multiplier_must_be_at_least_one(multiplier: float) -> None:
    with pytest.raises(ValueError, match="multiplier"):
        RetryPolicy(multiplier=multiplier)


def test_zero_backoff_and_multiplier_one_are_valid() -> None:
    policy = RetryPolicy(initial_backoff=0, max_backoff=0, multiplier=1)
    assert policy.backoff(1) == 0


def test_replace_returns_a_changed_copy_and_validates() -> None:
    policy = RetryPolicy()
    changed = policy.replace(attempts=5)
    assert changed.attempts == 5
    assert policy.attempts == 3
    with pytest.raises(ValueError, match="attempts"):
        policy.replace(attempts=0)


def test_policy_is_immutable() -> None:
    with pytest.raises(AttributeError):
        RetryPolicy().attempts = 4  # type: ignore[misc]


@given(policy=policies(), retry_number=attempt_numbers)
def test_backoff_is_full_jitter_within_zero_and_max_backoff(policy: RetryPolicy, retry_number: int) -> None:
    delay = policy.backoff(retry_number)
    assert 0 <= delay <= policy.max_backoff
    bound = policy.initial_backoff * policy.multiplier ** (retry_number - 1) if retry_number < 50 else math.inf
    assert delay <= bound * (1 + 1e-9) + 1e-12


def test_backoff_is_random_not_fixed() -> None:
    policy = RetryPolicy(initial_backoff=1, max_backoff=10)
    assert len({policy.backoff(3) for _ in range(50)}) > 1


# -- decide: what is retried at all ------------------------------------------------------------------------


@given(
    error=transport_errors(written=True),
    policy=policies(idempotent=st.none()),
    attempt=attempt_numbers,
    now=instants,
)
def test_a_written_call_of_a_non_idempotent_tool_is_never_retried(
    error: TransportError, policy: RetryPolicy, attempt: int, now: float
) -> None:
    decision = decide(error, policy=policy, attempt=attempt, idempotent=False, now=now, hard_deadline=UNBOUNDED)
    assert decision.verdict is Verdict.MAY_HAVE_RUN
    assert not decision.retry


@given(error=transport_errors(written=True), policy=policies(), attempt=attempt_numbers, idempotent=st.booleans())
def test_policy_idempotent_false_overrides_annotations(
    error: TransportError, policy: RetryPolicy, attempt: int, idempotent: bool
) -> None:
    policy = policy.replace(idempotent=False)
    decision = decide(error, policy=policy, attempt=attempt, idempotent=idempotent, now=0, hard_deadline=UNBOUNDED)
    assert decision.verdict is Verdict.MAY_HAVE_RUN


@given(error=transport_errors(written=True), policy=policies(idempotent=st.just(True)))
def test_policy_idempotent_true_overrides_annotations(error: TransportError, policy: RetryPolicy) -> None:
    assume(policy.attempts > 1)
    error.retry_after = 0.0
    decision = decide(error, policy=policy, attempt=1, idempotent=False, now=0, hard_deadline=UNBOUNDED)
    assert decision.verdict is Verdict.RETRY


@given(
    error=transport_errors(written=False),
    policy=policies(),
    idempotent=st.booleans(),
    now=instants,
    data=st.data(),
)
def test_a_never_written_call_is_always_retried_until_attempts_run_out(
    error: TransportError, policy: RetryPolicy, idempotent: bool, now: float, data: st.DataObject
) -> None:
    attempt = data.draw(st.integers(min_value=1, max_value=policy.attempts + 5))
    decision = decide(error, policy=policy, attempt=attempt, idempotent=idempotent, now=now, hard_deadline=UNBOUNDED)
    if attempt >= policy.attempts:
        assert decision.verdict is Verdict.ATTEMPTS_EXHAUSTED
    else:
        assert decision.verdict is Verdict.RETRY
        assert decision.retry
        assert decision.delay >= 0


@given(
    error=never_retryable(),
    policy=policies(),
    attempt=attempt_numbers,
    idempotent=st.booleans(),
    now=instants,
)
def test_errors_that_are_answers_or_decisions_are_never_retried(
    error: MCPClientError, policy: RetryPolicy, attempt: int, idempotent: bool, now: float
) -> None:
    budget = RetryBudget()
    decision = decide(
        error, policy=policy, attempt=attempt, idempotent=idempotent, now=now, hard_deadline=UNBOUNDED, budget=budget
    )
    assert decision.verdict is Verdict.NOT_RETRYABLE
    assert budget.tokens == budget.max_tokens  # not a retryable failure: the budget is untouched


@given(policy=policies(), idempotent=st.booleans(), now=instants)
def test_idle_timeout_is_retried_only_when_the_policy_says_so_and_the_tool_is_idempotent(
    policy: RetryPolicy, idempotent: bool, now: float
) -> None:
    error = IdleTimeout("idle", timeout=5.0)
    decision = decide(error, policy=policy, attempt=1, idempotent=idempotent, now=now, hard_deadline=UNBOUNDED)
    safe = policy.idempotent if policy.idempotent is not None else idempotent
    if not policy.retry_idle_timeout:
        assert decision.verdict is Verdict.NOT_RETRYABLE
    elif not safe:
        assert decision.verdict is Verdict.MAY_HAVE_RUN
    elif policy.attempts == 1:
        assert decision.verdict is Verdict.ATTEMPTS_EXHAUSTED
    else:
        assert decision.verdict is Verdict.RETRY


# -- decide: when, and for how long ------------------------------------------------------------------------


@given(policy=policies(), now=instants, data=st.data())
def test_delay_is_between_zero_and_max_backoff(policy: RetryPolicy, now: float, data: st.DataObject) -> None:
    assume(policy.attempts > 1)
    attempt = data.draw(st.integers(min_value=1, max_value=policy.attempts - 1))
    error = TransportError("x", written=False)
    decision = decide(error, policy=policy, attempt=attempt, idempotent=False, now=now, hard_deadline=UNBOUNDED)
    assert decision.verdict is Verdict.RETRY
    assert 0 <= decision.delay <= policy.max_backoff


@given(retry_after=seconds, policy=policies(), now=instants)
def test_retry_after_is_honoured_exactly(retry_after: float, policy: RetryPolicy, now: float) -> None:
    assume(policy.attempts > 1)
    error = TransportError("busy", written=False, status_code=503, retry_after=retry_after)
    decision = decide(error, policy=policy, attempt=1, idempotent=False, now=now, hard_deadline=UNBOUNDED)
    assert decision.verdict is Verdict.RETRY
    assert decision.delay == retry_after


@given(
    error=transport_errors(written=False),
    policy=policies(),
    now=instants,
    left=st.floats(min_value=0, max_value=100, allow_nan=False),
)
def test_a_retry_never_waits_past_the_hard_deadline(
    error: TransportError, policy: RetryPolicy, now: float, left: float
) -> None:
    assume(policy.attempts > 1)
    hard_deadline = now + left
    decision = decide(error, policy=policy, attempt=1, idempotent=False, now=now, hard_deadline=hard_deadline)
    assert decision.verdict in (Verdict.RETRY, Verdict.NO_TIME_LEFT)
    if decision.retry:
        assert now + decision.delay < hard_deadline  # the next attempt starts before the maximum
    if error.retry_after is not None:
        expected = Verdict.NO_TIME_LEFT if now + error.retry_after >= hard_deadline else Verdict.RETRY
        assert decision.verdict is expected


def test_no_time_left_when_the_wait_would_end_exactly_at_the_deadline() -> None:
    error = TransportError("busy", written=False, retry_after=2.0)
    policy = RetryPolicy(attempts=5)
    assert decide(error, policy=policy, attempt=1, idempotent=True, now=8, hard_deadline=10).verdict is (
        Verdict.NO_TIME_LEFT
    )
    assert decide(error, policy=policy, attempt=1, idempotent=True, now=7.5, hard_deadline=10) == RetryDecision(
        Verdict.RETRY, 2.0
    )


@given(policy=policies(), idempotent=st.booleans())
def test_attempts_cap_counts_the_first_attempt(policy: RetryPolicy, idempotent: bool) -> None:
    error = TransportError("x", written=False)
    verdicts = [
        decide(error, policy=policy, attempt=n, idempotent=idempotent, now=0, hard_deadline=UNBOUNDED).verdict
        for n in range(1, policy.attempts + 3)
    ]
    assert verdicts[: policy.attempts - 1] == [Verdict.RETRY] * (policy.attempts - 1)
    assert set(verdicts[policy.attempts - 1 :]) == {Verdict.ATTEMPTS_EXHAUSTED}


def test_never_policy_does_not_retry() -> None:
    error = TransportError("x", written=False)
    decision = decide(error, policy=RetryPolicy.never(), attempt=1, idempotent=True, now=0, hard_deadline=UNBOUNDED)
    assert decision.verdict is Verdict.ATTEMPTS_EXHAUSTED


# -- the budget --------------------------------------------------------------------------------------------


def test_budget_starts_full_and_allows_retries() -> None:
    budget = RetryBudget()
    assert budget.tokens == budget.max_tokens == 10
    assert budget.allows_retry


@given(max_tokens=st.floats(min_value=1, max_value=100), ratio=st.floats(min_value=0.01, max_value=1))
def test_enough_failures_stop_retries_and_enough_successes_bring_them_back(max_tokens: float, ratio: float) -> None:
    budget = RetryBudget(max_tokens=max_tokens, token_ratio=ratio)
    failures = 0
    while budget.allows_retry:
        budget.record_failure()
        failures += 1
        assert failures <= math.ceil(max_tokens / 2) + 1
    assert budget.tokens <= max_tokens / 2
    budget.record_failure()
    assert budget.tokens >= 0
    successes = 0
    while not budget.allows_retry:
        budget.record_success()
        successes += 1
        assert successes <= math.ceil(max_tokens / ratio) + 1
    for _ in range(math.ceil(max_tokens / ratio) + 5):
        budget.record_success()
    assert budget.tokens == pytest.approx(max_tokens)  # never more than the bucket holds


def test_decide_takes_a_token_per_retryable_failure_and_refuses_once_half_is_spent() -> None:
    budget = RetryBudget(max_tokens=10, token_ratio=0.1)
    policy = RetryPolicy(attempts=100)
    error = TransportError("x", written=False)
    verdicts = [
        decide(error, policy=policy, attempt=1, idempotent=False, now=0, hard_deadline=UNBOUNDED, budget=budget).verdict
        for _ in range(7)
    ]
    assert verdicts == [Verdict.RETRY] * 4 + [Verdict.BUDGET_EXHAUSTED] * 3
    for _ in range(40):  # 3 tokens left + 40 * 0.1 = 7: one failure leaves 6 > 5
        budget.record_success()
    decision = decide(error, policy=policy, attempt=1, idempotent=False, now=0, hard_deadline=UNBOUNDED, budget=budget)
    assert decision.verdict is Verdict.RETRY


@settings(max_examples=50)
@given(policy=policies(), error=transport_errors(written=True))
def test_a_refused_unsafe_retry_does_not_spend_the_budget(policy: RetryPolicy, error: TransportError) -> None:
    budget = RetryBudget()
    policy = policy.replace(idempotent=None)
    decide(error, policy=policy, attempt=1, idempotent=False, now=0, hard_deadline=UNBOUNDED, budget=budget)
    assert budget.tokens == budget.max_tokens
