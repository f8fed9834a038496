"""Closing an :class:`~contextlib.AsyncExitStack` so that the exception it raises can be walked.

CPython's exit stacks (3.11 to 3.14 at least) rebuild the ``__context__`` of what their callbacks raise, and when
the stack is closed while an exception is being handled (in an ``except`` clause, or an ``__aexit__`` called
for a failing body) and one callback raises an exception that the next callback raises again (a task group or a
context manager re-raising what it was given), the fix-up sets that exception's ``__context__`` to itself. anyio's
asyncio task group follows the ``__context__`` of a cancelled task's ``CancelledError`` in a ``while`` loop: such a
cycle made it spin forever, at full CPU, when a client's start was cancelled (a call's maximum passing while the
connection starts, say). Every exit stack of the package is closed here.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

__all__ = ["close_exit_stack", "without_context_cycles"]


async def close_exit_stack(stack: AsyncExitStack) -> None:
    """``await stack.aclose()``; what it raises is raised with its chain of contexts free of cycles."""
    try:
        await stack.aclose()
    except BaseException as exc:
        without_context_cycles(exc)
        raise


def without_context_cycles(error: BaseException) -> BaseException:
    """Cut the ``__context__`` chain of ``error`` (and of what its exception groups hold) where it comes back to an
    exception already on it; return ``error``."""
    pending = [error]
    visited: list[BaseException] = []
    while pending:
        current: BaseException | None = pending.pop()
        chain: list[BaseException] = []
        while current is not None and not any(current is seen for seen in visited):
            chain.append(current)
            visited.append(current)
            if isinstance(current, BaseExceptionGroup):
                pending.extend(current.exceptions)
            following = current.__context__
            if following is not None and any(following is link for link in chain):
                current.__context__ = None  # the cycle: the chain ends here, as it would have
                break
            current = following
    return error
