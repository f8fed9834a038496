"""The single parsers and the one backoff the package relies on: ids and numbers from the wire, ``timeout=``."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given, strategies as st

from mcp_client.policy import DEFAULT_TIMEOUT, TimeoutPolicy
from mcp_client.policy.backoff import exponential_bound, full_jitter
from mcp_client.policy.ids import wire_id
from mcp_client.policy.listen import ListenPolicy
from mcp_client.policy.progress import finite_number
from mcp_client.policy.restart import RestartPolicy
from mcp_client.policy.retry import RetryPolicy
from mcp_client.policy.seconds import NotSeconds
from mcp_client.policy.tasks import PollPolicy, PollSchedule
from mcp_client.policy.timeout import as_timeout_policy, timeout_over


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(7, 7), ("7", 7), ("123456789012345678", 123456789012345678), (True, None), (False, None), (None, None)],
)
def test_wire_id_reads_integers_and_their_decimal_strings(raw: object, expected: int | None) -> None:
    assert wire_id(raw) == expected


@pytest.mark.parametrize("raw", ["", "x7", "-7", "7.0", " 7", "1234567890123456789", "\u0667", 7.0, [7], {"id": 7}])
def test_wire_id_takes_nothing_else_for_one_of_ours(raw: object) -> None:
    assert wire_id(raw) is None


@given(st.integers(min_value=0, max_value=10**18 - 1))
def test_wire_id_round_trips_an_id_sent_as_a_string(request_id: int) -> None:
    assert wire_id(str(request_id)) == wire_id(request_id) == request_id


@pytest.mark.parametrize(("raw", "expected"), [(1, 1.0), (0.5, 0.5), (-3, -3.0), (10**300, 1e300)])
def test_finite_number_reads_finite_numbers(raw: object, expected: float) -> None:
    assert finite_number(raw) == expected


@pytest.mark.parametrize("raw", [True, False, None, "1", math.nan, math.inf, -math.inf, 10**400, [1]])
def test_finite_number_rejects_the_rest(raw: object) -> None:
    assert finite_number(raw) is None


def test_timeout_over_a_base() -> None:
    base = TimeoutPolicy(idle=5, maximum=60)
    assert timeout_over(base, 30) == TimeoutPolicy(idle=5, maximum=30)  # the idle liveness is kept
    assert timeout_over(base, None) == TimeoutPolicy.unlimited()
    own = TimeoutPolicy(idle=None, maximum=1)
    assert timeout_over(base, own) is own
    assert as_timeout_policy(30) == DEFAULT_TIMEOUT.replace(maximum=30.0)


@pytest.mark.parametrize(
    ("raw", "error"), [(0, ValueError), (-1, ValueError), (math.nan, ValueError), (True, TypeError), ("5", TypeError)]
)
def test_timeout_over_rejects_what_is_no_timeout(raw: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="timeout must be"):
        timeout_over(DEFAULT_TIMEOUT, raw)  # type: ignore[arg-type]
    with pytest.raises(error, match="timeout must be"):
        as_timeout_policy(raw)  # type: ignore[arg-type]


@given(st.integers(min_value=1, max_value=200), st.integers(min_value=0, max_value=2**32))
def test_retry_listen_restart_and_task_polls_wait_by_the_one_backoff(number: int, seed: int) -> None:
    retry = RetryPolicy(initial_backoff=0.2, max_backoff=7.0, multiplier=3.0)
    listen = ListenPolicy(initial_backoff=0.2, max_backoff=7.0, multiplier=3.0)
    restart = RestartPolicy(initial_backoff=0.2, max_backoff=7.0, multiplier=3.0)
    waits = []
    for draw in (retry.backoff, listen.backoff, lambda n: full_jitter(n, initial=0.2, multiplier=3.0, cap=7.0)):
        random.seed(seed)
        waits.append(draw(number))
    assert waits[0] == waits[1] == waits[2]  # the same draw: one function behind all three
    assert 0 <= waits[0] <= exponential_bound(number, initial=0.2, multiplier=3.0, cap=7.0) <= 7.0
    assert restart.bound(number) == exponential_bound(number, initial=0.2, multiplier=3.0, cap=7.0)
    schedule = PollSchedule(PollPolicy(failure_backoff=0.2, max_interval=7.0, jitter=0.0), random.Random(seed))
    for _ in range(number):
        next_at = schedule.failed(0.0)
    assert next_at == exponential_bound(number, initial=0.2, multiplier=2.0, cap=max(7.0, schedule.base_interval))


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda v: TimeoutPolicy(idle=v), "idle"),
        (lambda v: RetryPolicy(max_backoff=v), "max_backoff"),
        (lambda v: RestartPolicy(window=v), "window"),
        (lambda v: PollPolicy(failure_backoff=v), "failure_backoff"),
        (lambda v: ListenPolicy(open_timeout=v), "open_timeout"),
    ],
)
def test_every_policy_checks_its_seconds_with_the_one_validator(build: Any, name: str) -> None:
    for not_a_number in ("5", True, [5]):
        with pytest.raises(NotSeconds, match=name) as caught:
            build(not_a_number)
        assert isinstance(caught.value, TypeError)
        assert isinstance(caught.value, ValueError)
    for out_of_range in (-1, math.nan):
        with pytest.raises(ValueError, match=f"{name} must be"):
            build(out_of_range)
