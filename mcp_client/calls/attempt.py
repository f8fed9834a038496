"""One request of a call on the wire: the write bounded by the call's hard deadline, then the wait for its end.

The session hands out the request (a fresh id and progress token, in its tables) and routes what comes back; this
module writes the request and sleeps on its waiter until the answer lands or the call's
:class:`~mcp_client.policy.Deadline` next needs looking at, whichever is first, so progress never reschedules a
timer. A clock that runs out ends the request (its cancellation goes on the wire in the background, through the
session) and raises the typed timeout; an answer is unwrapped into its ``result`` or a typed error.

May touch the session's primitives for one request, the policy core and the errors and events; nothing else.
"""

from __future__ import annotations

import math

import anyio
import anyio.lowlevel

from mcp_client._types import JSONObject
from mcp_client.errors import (
    IdleTimeout,
    MaxTimeout,
    MCPClientError,
    ProtocolError,
    RequestCancelled,
    ServerError,
    TransportError,
)
from mcp_client.events import RequestSent, Slow, TimedOut
from mcp_client.policy import TimeoutKind, TimeoutPolicy
from mcp_client.session.inflight import CANCELLED, CallState, WireRequest
from mcp_client.session.session import Session

__all__ = ["CALLER_SCOPE_GRACE", "run_attempt"]

CALLER_SCOPE_GRACE = 0.05
"""Seconds to wait, once the caller's own deadline has come, for the caller's cancel scope to cancel us."""


async def run_attempt(
    session: Session, call: CallState, params: JSONObject, want_progress: bool, number: int
) -> JSONObject:
    """Put one request of ``call`` on the wire (attempt ``number`` of its round) and return its ``result``."""
    if call.cancel_reason is not None:
        raise RequestCancelled(f"{call.method} was cancelled: {call.cancel_reason}", reason=call.cancel_reason)
    policy = call.deadline.policy
    # A token whenever its progress matters: to reset idle, or for a consumer. Not only when a callback exists.
    wants_token = want_progress and (call.sink is not None or policy.idle is not None)
    request = session.open_request(call, want_token=wants_token)
    try:
        # Built in the call, not kept in a local: the message is garbage once written, not held for the wait.
        await _send(session, request, session.message(request, params), number)
        # The wait is inline, not a function of its own: one coroutine frame less per call in flight.
        deadline = call.deadline
        clock = session.clock
        lead = session.timer_lead
        while True:
            now = clock()
            if not request.settled:
                wake = deadline.next_wakeup(now)
                if wake - now > lead:
                    await request.done.wait(wake - lead)  # also woken by nudge() when clocks move
                    continue
                if wake > now:
                    await anyio.lowlevel.checkpoint()  # the last stretch before a clock runs out (timer_lead)
                    continue
            if request.failure is not None:
                raise request.failure
            if request.outcome is not None:
                result = _unwrap(session, request)
                call.may_have_run = True  # answered: it ran (or began to: a task, a round of input)
                return result
            kind = _clock_out(session, request, now)
            if kind is TimeoutKind.CALLER:
                # The caller's own scope cancels us: give its timer the moment it may fire after ours (timers are
                # set early here, and the loop's selector rounds). Past that, the scope is shielded from us.
                await anyio.sleep(CALLER_SCOPE_GRACE)
                kind = TimeoutKind.MAXIMUM  # only reached if that scope was shielded from us: a hard stop anyway
            if kind is not None:
                raise _timed_out(session, request, kind, now)
    except MCPClientError as exc:
        _record_may_have_run(call, request, exc)
        raise
    except anyio.get_cancelled_exc_class():
        # (A failed write reports for itself, in TransportError.written, whether anything left.)
        if request.written and request.outcome is None:
            session.abandon(request, "cancelled by the caller")
        elif request.outcome is not None and request.outcome is not CANCELLED:
            session.drop_crossed_answer(request)
        raise
    finally:
        session.close_request(request)


async def _send(session: Session, request: WireRequest, message: JSONObject, number: int) -> None:
    """Write the request, bounded by the call's hard deadline (a server that stops reading cannot hold us)."""
    call = request.call
    deadline = call.deadline
    if len(call.request_ids) > 1 or deadline.caller_deadline == -math.inf:
        # A caller cancelled before the write: nothing goes out. (Before a call's first write there was no await
        # since the runner read the caller's scopes, where -inf says one was cancelled: no need to look.)
        await anyio.lowlevel.checkpoint_if_cancelled()
    if call.headers is None and session.try_write(message):
        request.written = True
    else:
        with anyio.CancelScope(deadline=deadline.hard_deadline(session.clock())):
            await session.write(message, call.headers)
            request.written = True
    if not request.written:
        # The write itself outlived the maximum: the request may be half-written, so it counts as written.
        call.may_have_run = True
        await anyio.lowlevel.checkpoint()  # let the caller's own deadline, if that was it, cancel us
        session.abandon(request, "maximum timeout passed while sending")
        raise _timeout(request, TimeoutKind.MAXIMUM, session.clock())
    deadline.mark_sent(session.clock())
    if session.observed:
        ids = call.request_ids
        previous = ids[-2] if len(ids) > 1 else None
        target = _target_of(message.get("params"))
        session.emit(RequestSent(request.request_id, request.method, request.token, number, target, previous))


def _record_may_have_run(call: CallState, request: WireRequest, error: MCPClientError) -> None:
    """Record on the error whether this attempt may have run, and on the call whether any attempt may have."""
    written = error.written if isinstance(error, TransportError) else request.written
    ran = written and not error.refusal
    error.may_have_run = ran or call.may_have_run
    call.may_have_run = error.may_have_run


def _clock_out(session: Session, request: WireRequest, now: float) -> TimeoutKind | None:
    """Which clock of the call ran out at ``now``, if any; reports ``Slow`` the first time it applies."""
    deadline = request.call.deadline
    if deadline.take_slow(now):
        session.emit(Slow(request.request_id, request.method, deadline.elapsed(now)))
    return deadline.expired(now)


def _timed_out(session: Session, request: WireRequest, kind: TimeoutKind, now: float) -> MCPClientError:
    """Report the timeout, cancel the request on the wire (in the background) and return the error to raise."""
    deadline = request.call.deadline
    if session.observed:
        session.emit(TimedOut(request.request_id, request.method, kind, deadline.elapsed(now)))
    session.abandon(request, _timeout_reason(kind, deadline.policy))
    return _timeout(request, kind, now)


def _unwrap(session: Session, request: WireRequest) -> JSONObject:
    outcome = request.outcome
    assert outcome is not None
    if outcome is CANCELLED:
        reason = request.call.cancel_reason or "cancelled by the client"
        session.abandon(request, reason)
        raise RequestCancelled(f"{request.method} was cancelled: {reason}", reason=reason)
    if "error" in outcome:
        error = outcome["error"]
        if not isinstance(error, dict):
            raise ProtocolError(f"{request.method}: the error member of the response is not an object")
        raise ServerError.from_error(error)
    result = outcome.get("result")
    if not isinstance(result, dict):
        raise ProtocolError(f"{request.method}: the response has no result object")
    return result


def _timeout(request: WireRequest, kind: TimeoutKind, now: float) -> MCPClientError:
    policy = request.call.deadline.policy
    if kind is TimeoutKind.IDLE:
        return IdleTimeout(
            f"{request.method}: no sign of life from the server for {policy.idle:g} s", timeout=policy.idle
        )
    limit = policy.maximum if policy.maximum is not None else request.call.deadline.elapsed(now)
    return MaxTimeout(f"{request.method}: the {limit:g} s maximum passed", timeout=limit)


def _timeout_reason(kind: TimeoutKind, policy: TimeoutPolicy) -> str:
    if kind is TimeoutKind.IDLE:
        return f"idle timeout: no progress for {policy.idle:g} s"
    if policy.maximum is not None and kind is TimeoutKind.MAXIMUM:
        return f"maximum timeout of {policy.maximum:g} s passed"
    return "the caller's deadline passed"


def _target_of(params: object) -> str | None:
    """What a request is about: a tool or prompt name, a resource URI (for events and tracing)."""
    if not isinstance(params, dict):
        return None
    target = params.get("name", params.get("uri"))
    return target if isinstance(target, str) else None
