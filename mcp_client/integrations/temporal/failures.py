"""How an mcp_client outcome becomes a Temporal activity failure, and the one error only a durable call can have.

The rule is the client's everywhere: a request that never left, or a tool that is idempotent or read-only, may be
tried again; everything else is not (``policy.retry``). The failure is an ``ApplicationError`` whose ``type`` is
the mcp_client error's class name, whose message is the error's ``for_model`` text, and whose one detail is a JSON
object with what a workflow may want to branch on (``may_have_run``, ``tool``, ``request_ids``, ``message``).

:class:`WorkerLost` is raised by the next attempt of a call whose worker died after the request may have reached
the server, when the tool is not safe to repeat. Touches the errors, the outcomes and ``temporalio.exceptions``.
"""

from __future__ import annotations

from typing import Any

import mcp_types
from temporalio.exceptions import ApplicationError

from mcp_client.errors import ConnectError, MCPClientError, TransportError
from mcp_client.outcomes import may_have_run
from mcp_client.policy.retry import RetryPolicy, is_retryable_cause

__all__ = ["WorkerLost", "activity_failure", "invalid_reference", "retryable"]


class WorkerLost(TransportError):
    """The worker that ran this call before was lost (killed, partitioned) after its request may have reached the
    server, and the tool is not safe to repeat: it may have run, so it is not called again.

    A :class:`~mcp_client.TransportError` with ``written=True``: ``for_model`` says the tool may have run."""

    def __init__(self, tool: str, annotations: mcp_types.ToolAnnotations | None, *, attempt: int) -> None:
        super().__init__(
            f"the worker of attempt {attempt - 1} was lost after it sent the request, and the tool is not marked "
            "idempotent, so it was not sent again",
            written=True,
            method="tools/call",
        )
        self.about_tool(tool, annotations)


def retryable(error: MCPClientError, *, idempotent: bool, policy: RetryPolicy | None = None) -> bool:
    """The client's retry rule: a retryable kind of failure (a transport failure, an idle timeout where the policy
    retries those) that either surely never reached the server or hit a tool that is safe to repeat. A server that
    could not be reached at all (``ConnectError``) ran nothing: another attempt, maybe on another worker, may."""
    if isinstance(error, WorkerLost):
        return False
    if isinstance(error, ConnectError):
        return True
    rules = policy if policy is not None else RetryPolicy()
    if not is_retryable_cause(error, rules):
        return False
    written = not isinstance(error, TransportError) or error.written
    return not written or (rules.idempotent if rules.idempotent is not None else idempotent)


def activity_failure(error: MCPClientError, *, idempotent: bool, policy: RetryPolicy | None = None) -> ApplicationError:
    """The ``ApplicationError`` an activity raises for ``error`` (retryable by :func:`retryable`)."""
    detail: dict[str, Any] = {
        "may_have_run": may_have_run(error).value,
        "tool": error.tool,
        "request_ids": list(error.request_ids),
        "message": error.message,
    }
    return ApplicationError(
        error.for_model,
        detail,
        type=type(error).__name__,
        non_retryable=not retryable(error, idempotent=idempotent, policy=policy),
    )


def invalid_reference(error: ValueError) -> ApplicationError:
    """The last attempt's task reference cannot be used here (another server or era, or malformed): the task may
    be running, so the tool is not called again; the activity fails for good."""
    return ApplicationError(
        f"the task this call made cannot be resumed here ({error}); it may have run, so it was not called again",
        {"may_have_run": "maybe"},
        type="InvalidTaskReference",
        non_retryable=True,
    )
