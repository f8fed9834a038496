"""The package's one closer of exit stacks: what it raises never has itself in its chain of contexts.

CPython's ``AsyncExitStack``, closed while an exception is handled, sets the ``__context__`` of an exception that
one callback raises and the next raises again to that exception itself; anyio's asyncio task group walks a
cancelled task's ``CancelledError`` contexts in a ``while`` loop and spun forever on one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from types import TracebackType

import pytest

from mcp_client._exit_stack import close_exit_stack, without_context_cycles

pytestmark = pytest.mark.anyio


def _cycles(error: BaseException) -> bool:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None:
        if any(current is link for link in chain):
            return True
        chain.append(current)
        current = current.__context__
    return False


async def _reraise(kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
    if exc is not None:
        raise exc  # (a task group or a context manager raising again what it was given)


async def _raise_new(kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
    raise KeyError("raised by a callback")


async def _close_while_handling(close: Callable[[AsyncExitStack], Awaitable[None]]) -> None:
    try:
        raise ValueError("being handled")
    except ValueError:
        await close(_stack())


def _stack() -> AsyncExitStack:
    stack = AsyncExitStack()
    stack.push_async_exit(_reraise)
    stack.push_async_exit(_raise_new)
    return stack


async def test_python_s_own_exit_stack_makes_the_exception_its_own_context() -> None:
    """What the seam is for: if this ever fails, CPython fixed it and the seam may go."""
    with pytest.raises(KeyError) as caught:
        await _close_while_handling(AsyncExitStack.aclose)
    assert caught.value.__context__ is caught.value


async def test_the_seam_closes_the_stack_and_raises_the_same_error_with_its_chain_free_of_cycles() -> None:
    with pytest.raises(KeyError) as caught:
        await _close_while_handling(close_exit_stack)
    assert not _cycles(caught.value)


def test_a_longer_cycle_is_cut_once_and_the_chain_before_it_is_kept() -> None:
    first, second, third = ValueError("1"), KeyError("2"), OSError("3")
    first.__context__, second.__context__, third.__context__ = second, third, second
    assert without_context_cycles(first) is first
    assert first.__context__ is second
    assert second.__context__ is third
    assert third.__context__ is None


def test_cycles_inside_an_exception_group_are_cut() -> None:
    inner = KeyError("inner")
    inner.__context__ = inner
    group = BaseExceptionGroup("group", [inner])
    without_context_cycles(group)
    assert inner.__context__ is None
