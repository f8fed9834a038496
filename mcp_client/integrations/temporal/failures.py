"""How an mcp_client outcome becomes a Temporal activity failure, and the errors only a durable call can have.

Every failure an MCP activity raises goes through :func:`activity_failure`: an error inside a task group (the
heartbeat's, the client's) is first unwrapped to its one typed error (:func:`mcp_client._typed.sole_error`), so
Temporal never sees an ``ExceptionGroup``. The failure is an ``ApplicationError`` whose ``type`` is the mcp_client
error's class name, whose message is the error's ``for_model`` text, and whose one detail is a JSON object with what
a workflow may want to branch on (``may_have_run``, ``tool``, ``request_ids``, ``message``).

The retry rule is the client's everywhere (``policy.retry``): a retryable kind of failure that surely never ran, as
the call *recorded* it (``may_have_run``, not the transport's ``written`` alone), or that hit a tool safe to repeat.
A task-backed call whose task reference is in Temporal is also retryable after a transport failure: the next attempt
resumes the task and never calls the tool again.

:class:`WorkerLost` is raised by the next attempt of a call whose worker died after the request may have reached
the server, when the tool is not safe to repeat; :class:`CheckpointNotRecorded` when the record a call needs in
Temporal could not be made (a payload codec or the heartbeat failed). Touches the errors, the outcomes, the typed
boundary and ``temporalio.exceptions``.
"""

from __future__ import annotations

from typing import Any

import mcp_types
from temporalio.exceptions import ApplicationError

from mcp_client._typed import sole_error
from mcp_client.errors import ConnectError, MCPClientError, TransportError
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.policy.retry import RetryPolicy, is_retryable_cause

__all__ = ["CheckpointNotRecorded", "WorkerLost", "activity_failure", "invalid_reference", "retryable"]


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
        self.may_have_run = True


class CheckpointNotRecorded(MCPClientError):
    """The call's checkpoint could not be recorded in Temporal: the payload codec, the data converter or the
    heartbeat's round trip to the service failed.

    Before the request was written (``may_have_run`` False) the call was not sent, and another attempt may make it.
    After (a task's reference that could not be recorded, a beat that failed to encode) the call may have run; the
    activity fails rather than run on with a record Temporal does not have."""

    def __init__(self, message: str, *, may_have_run: bool | None, **context: Any) -> None:
        super().__init__(message, **context)
        self.may_have_run = may_have_run


def retryable(
    error: MCPClientError, *, idempotent: bool, policy: RetryPolicy | None = None, resumable: bool = False
) -> bool:
    """The client's retry rule: a retryable kind of failure (a transport failure, an idle timeout where the policy
    retries those) that either surely never ran, as the call recorded it, or hit a tool that is safe to repeat. A
    server that could not be reached at all (``ConnectError``) ran nothing: another attempt, maybe on another
    worker, may. ``resumable``: the call's task reference is in Temporal, so the next attempt resumes the task."""
    if isinstance(error, WorkerLost):
        return False
    if isinstance(error, CheckpointNotRecorded):
        return error.may_have_run is False or idempotent
    if isinstance(error, ConnectError):
        return True
    rules = policy if policy is not None else RetryPolicy()
    if not is_retryable_cause(error, rules):
        return False
    written = error.may_have_run  # as the call recorded it; else the error's kind says (as policy.retry.decide)
    if written is None:
        written = not isinstance(error, TransportError) or error.written
    if resumable or not written:
        return True
    return rules.idempotent if rules.idempotent is not None else idempotent


def activity_failure(
    error: MCPClientError,
    *,
    idempotent: bool,
    policy: RetryPolicy | None = None,
    resumable: bool = False,
    ran_before: bool = False,
) -> ApplicationError:
    """The ``ApplicationError`` an activity raises for ``error`` (retryable by :func:`retryable`).

    ``ran_before``: an earlier attempt of the call may have run it (its checkpoint says so). Whether this attempt
    may be retried is still decided by what this attempt did (the next one reads the same checkpoint), but what the
    workflow reads is about the call: never "did not run", whatever this attempt's own failure was (a server that
    cannot be reached after the worker that sent the call died)."""
    _keep_out_of_history(error)
    non_retryable = not retryable(error, idempotent=idempotent, policy=policy, resumable=resumable)
    if ran_before and may_have_run(error) is Ran.NO:
        error.may_have_run = True
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
        non_retryable=non_retryable,
    )


def _keep_out_of_history(error: MCPClientError) -> None:
    """Cut ``error``'s cause chain below the client's own errors. The activity raises its failure ``from`` the
    error, and Temporal's failure converter writes every ``__cause__`` into history, in clear even where a payload
    codec encrypts: the client's errors are scrubbed of configured secrets, a library's or a payload codec's are not
    (a key service's URL, a token)."""
    current: BaseException = error
    while isinstance(current.__cause__, MCPClientError):
        current = current.__cause__
    if current.__cause__ is not None:
        current.__cause__ = None
    current.__suppress_context__ = True


def client_error(error: BaseException) -> MCPClientError | None:
    """The one typed error ``error`` stands for (a group around it unwrapped), or None if it is not the client's."""
    sole = sole_error(error)
    return sole if isinstance(sole, MCPClientError) else None


def invalid_reference(error: ValueError) -> ApplicationError:
    """The last attempt's task reference cannot be used here (another server or era, or malformed): the task may
    be running, so the tool is not called again; the activity fails for good."""
    return ApplicationError(
        f"the task this call made cannot be resumed here ({error}); it may have run, so it was not called again",
        {"may_have_run": "maybe"},
        type="InvalidTaskReference",
        non_retryable=True,
    )
