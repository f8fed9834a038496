"""The limiter of calls in flight on its own (``mcp_client.calls.slots``), on trio's MockClock: hand-over without
barging, a slot handed to a waiter as it leaves goes on to the next, and the checks of the limit's value."""

from __future__ import annotations

import math
from typing import cast

import pytest
import trio
import trio.testing

from mcp_client.calls.in_flight_limit import InFlightLimit, check_max_in_flight
from mcp_client.errors import MaxTimeout
from mcp_client.events import Event
from mcp_client.policy import Deadline, TimeoutPolicy
from mcp_client.session.session import Session


class _Clocked:
    """What the limiter reads of a session: its clock and its event hook."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.observed = True

    def clock(self) -> float:
        return trio.current_time()

    def emit(self, event: Event) -> None:
        self.events.append(event)


def _run(test: object) -> None:
    trio.run(test, clock=trio.testing.MockClock(autojump_threshold=0))  # type: ignore[arg-type]


def _deadline(maximum: float | None = 100) -> Deadline:
    return Deadline(TimeoutPolicy(idle=None, maximum=maximum), started_at=trio.current_time(), caller_deadline=math.inf)


def test_a_released_slot_goes_to_the_first_waiter_not_to_a_newcomer() -> None:
    async def main() -> None:
        session = cast(Session, _Clocked())
        limit = InFlightLimit(1)
        assert limit.try_enter()
        order: list[str] = []

        async def waiter(name: str) -> None:
            await limit.wait_for_turn("tools/call", _deadline(), None, session)
            order.append(name)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter, "first")
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(waiter, "second")
            await trio.testing.wait_all_tasks_blocked()
            limit.leave()  # handed to "first"
            assert not limit.try_enter()  # a newcomer does not barge in ahead of "second"
            assert (limit.in_flight, limit.waiting) == (1, 1)
            await trio.testing.wait_all_tasks_blocked()
            limit.leave()
            await trio.testing.wait_all_tasks_blocked()
            limit.leave()
        assert order == ["first", "second"]
        assert (limit.in_flight, limit.waiting) == (0, 0)

    _run(main)


def test_a_slot_handed_to_a_waiter_that_is_cancelled_at_that_moment_goes_on() -> None:
    async def main() -> None:
        session = cast(Session, _Clocked())
        limit = InFlightLimit(1)
        assert limit.try_enter()
        admitted: list[str] = []

        async def waiter(name: str, scope: trio.CancelScope) -> None:
            with scope:
                await limit.wait_for_turn("tools/call", _deadline(), None, session)
                admitted.append(name)
                await trio.sleep(1)  # (a cancelled scope ends it here, holding the slot: the runner's finally)
            if name in admitted:
                limit.leave()

        first, second = trio.CancelScope(), trio.CancelScope()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter, "first", first)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(waiter, "second", second)
            await trio.testing.wait_all_tasks_blocked()
            limit.leave()  # the slot is handed to "first"...
            first.cancel()  # ...which is cancelled before it runs again
            await trio.testing.wait_all_tasks_blocked()
            await trio.sleep(2)
        assert "second" in admitted
        assert (limit.in_flight, limit.waiting) == (0, 0)

    _run(main)


def test_a_waiter_whose_maximum_passes_leaves_the_line() -> None:
    async def main() -> None:
        session = cast(Session, _Clocked())
        limit = InFlightLimit(1)
        assert limit.try_enter()
        start = trio.current_time()
        with pytest.raises(MaxTimeout) as caught:
            await limit.wait_for_turn("tools/call", _deadline(maximum=3), None, session)
        assert trio.current_time() - start == pytest.approx(3)
        assert caught.value.request_ids == ()
        assert (limit.in_flight, limit.waiting) == (1, 0)

    _run(main)


def test_the_value_of_a_limit_is_checked() -> None:
    assert check_max_in_flight(None) is None
    assert check_max_in_flight(3) == 3
    with pytest.raises(ValueError, match="at least 1"):
        check_max_in_flight(0)
    with pytest.raises(TypeError, match="integer"):
        check_max_in_flight(False)
    with pytest.raises(TypeError, match="integer"):
        check_max_in_flight("4")
    with pytest.raises(TypeError, match="needs a limit"):
        InFlightLimit(None)  # type: ignore[arg-type]
