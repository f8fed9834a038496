"""Outcomes a model can read: the plain text behind :attr:`MCPClientError.for_model <mcp_client.MCPClientError>`.

An agent that called a tool and got an error needs three facts to decide what to do next: what happened, whether
the server was told to stop, and whether the tool may have run (so that its effects must be checked before it is
called again). The error already knows them: its class, :attr:`TransportError.written`, whether a request went out
(``request_ids``), and, when the client listed the tool, its annotations (``readOnlyHint``, ``idempotentHint``,
``destructiveHint``). This module turns them into a few short sentences, without the wire details a model has no
use for (request ids, progress tokens).

It owns the text; the errors own the facts it reads (each class says what happened, ``outcome``, and whether it is
a refusal, ``refusal``; each error carries its recorded ``may_have_run``). It reads them through
:class:`ErrorFacts`, a Protocol every :class:`~mcp_client.MCPClientError` meets, so it imports nothing of the
package, not even for the type checker, and :mod:`mcp_client.errors` imports it for ``MCPClientError.for_model``:
one way only. Facts only some errors have (``written``, ``timeout``, ``status_code``, ``retry_after``...) are read
with ``getattr`` and a default.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sized
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import mcp_types

__all__ = ["ErrorFacts", "Ran", "for_model", "may_have_run", "visible"]


class ErrorFacts(Protocol):
    """What this module reads of an error: every :class:`~mcp_client.MCPClientError` has each (read-only here)."""

    @property
    def outcome(self) -> str:
        """What happened: this module's key into its sentences (``"timeout"``, ``"transport"``, ``"tool"``...)."""

    @property
    def refusal(self) -> bool:
        """True when the request was refused as it stood: it did not run."""

    @property
    def may_have_run(self) -> bool | None:
        """What the call's runner recorded, or None (then the kind of error decides)."""

    @property
    def message(self) -> str: ...

    @property
    def method(self) -> str | None: ...

    @property
    def request_ids(self) -> tuple[int | str, ...]: ...

    @property
    def elapsed(self) -> float | None: ...

    @property
    def attempts(self) -> Sized:
        """The failed attempts of the call (only their number is read)."""

    @property
    def tool(self) -> str | None: ...

    @property
    def tool_annotations(self) -> mcp_types.ToolAnnotations | None: ...


class Ran(enum.Enum):
    """Whether the tool (or request) may have done its work by the time the error was raised."""

    NO = "no"
    """It surely did not run: nothing reached the server, or the server refused the request as it stood."""
    MAYBE = "maybe"
    """It may have run, in part or in full: its effects should be checked before it is called again."""
    YES = "yes"
    """It ran (and reported a failure)."""


def may_have_run(error: ErrorFacts) -> Ran:
    """Whether the call that ended in ``error`` may have done its work on the server.

    The call's runner records it (:attr:`MCPClientError.may_have_run`): a request of the call was written and not
    refused, or the server made a task of it. An error no call recorded is judged by its kind."""
    if error.outcome == "tool":
        return Ran.YES
    if error.may_have_run is not None:
        return Ran.MAYBE if error.may_have_run else Ran.NO
    if error.refusal:
        return Ran.NO  # refused as it stood, no session, a session the server no longer knew, or no authorization
    if error.outcome in ("transport", "session_expired"):
        return Ran.MAYBE if getattr(error, "written", True) else Ran.NO
    if error.outcome in _STOPPED_ON_THE_WIRE:
        return Ran.MAYBE if error.request_ids else Ran.NO
    return Ran.MAYBE  # InternalError, other server errors, a malformed answer: the work may have happened


_STOPPED_ON_THE_WIRE = frozenset({"timeout", "maximum", "cancelled"})
"""Timeouts and cancellations: a request of theirs that went out is cancelled on the wire by the client."""


def for_model(error: ErrorFacts) -> str:
    """A short plain text for a model: what happened, whether the server was told to stop, and whether the
    tool may have run and should be checked before it is called again."""
    subject = f"The tool {error.tool!r}" if error.tool else f"The request {error.method}" if error.method else "It"
    what = _what_happened(error, subject)
    ran = may_have_run(error)
    sentences = [what]
    if _server_told_to_stop(error):
        sentences.append("The client told the server to stop it.")
    sentences.append(_advice(error, ran))
    return visible(" ".join(sentence for sentence in sentences if sentence))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""What a terminal acts on (C0 but tab and newline, DEL, C1, the bidi controls that reorder what a reader sees), and
lone surrogates, which no UTF-8 writer can write (JSON carries them as escapes, and the reader accepts them): a
server's message or a tool's text may hold any."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with each control character (and lone surrogate) written as its escape (``\\x1b``, ``\\ud800``): the
    text reaches models, logs, terminals and durable histories, and none of them should act on a character a server
    chose, or fail to write it."""
    return _CONTROL.sub(_escape, text)


def _what_happened(error: ErrorFacts, subject: str) -> str:
    detail = _detail(error)
    after = f" after {error.elapsed:.1f} s" if error.elapsed is not None else ""
    tries = len(error.attempts)
    attempts = f" ({tries} attempts)" if tries > 1 else ""
    outcome = error.outcome
    timeout: float | None = getattr(error, "timeout", None)
    if outcome == "maximum":
        limit = f" of {timeout:g} s" if timeout is not None else ""
        if not error.request_ids:  # (it waited in line for a slot, or for the connection, and never left)
            return f"{subject} was never sent: its time limit{limit} passed while it waited to be sent."
        return f"{subject} did not finish within its time limit{limit}{attempts}."
    if outcome == "timeout":
        limit = f" for {timeout:g} s" if timeout is not None else ""
        return f"{subject} timed out{after}: the server showed no sign of life{limit}{attempts}."
    if outcome == "cancelled":
        reason: str | None = getattr(error, "reason", None)
        return f"{subject} was cancelled{after}{f' ({reason})' if reason else ''}."
    if outcome == "tool_changed":
        fields = ", ".join(getattr(error, "changed", ()))
        return f"{subject} was not called: its definition changed since the host reviewed it ({fields})."
    if outcome == "tool_not_reviewed":
        return f"{subject} was not called: the host has not reviewed it (it is not among the pinned tools)."
    if outcome == "connect":
        return f"{subject} could not be called: the server could not be started or reached ({detail})."
    if outcome == "authorization":
        return f"{subject} could not be called: authorization with the server failed ({detail})."
    if outcome == "session_expired":
        return f"{subject} failed: the server ended the session and a new one could not be used ({detail})."
    if outcome == "transport":
        status_code: int | None = getattr(error, "status_code", None)
        status = f" (HTTP {status_code})" if status_code is not None else ""
        if not getattr(error, "written", True):
            return f"{subject} could not be sent: the connection to the server failed{status}{attempts} ({detail})."
        return f"{subject} failed: the connection to the server broke during the call{status}{attempts} ({detail})."
    if outcome == "unavailable":
        return f"{subject} is not available on the server ({detail})."
    if outcome == "arguments":
        return f"The server refused the arguments: {detail}."
    if outcome == "server":
        return f"The server answered with an error (code {getattr(error, 'code', 0)}): {detail}."
    if outcome == "tool":
        return f"{subject} ran and reported an error: {detail}."
    if outcome == "protocol":
        return f"{subject} failed: the server's answer did not follow the protocol ({detail})."
    return f"{subject} failed: {detail}."


def _detail(error: ErrorFacts) -> str:
    """The error's own message, without the ``method:`` prefix the session puts in front of it."""
    message = error.message
    if error.method and message.startswith(f"{error.method}: "):
        message = message[len(error.method) + 2 :]
    return message.rstrip(".") or "no details"


def _server_told_to_stop(error: ErrorFacts) -> bool:
    """Timeouts and cancellations of a request that went out are cancelled on the wire by the client, unless the
    error says no cancel was sent (its connection was gone)."""
    sent: bool = getattr(error, "cancel_sent", True)
    return error.outcome in _STOPPED_ON_THE_WIRE and bool(error.request_ids) and sent


def _advice(error: ErrorFacts, ran: Ran) -> str:
    hints = error.tool_annotations
    if ran is Ran.NO:
        if error.outcome == "arguments":
            return "The tool did not run: correct the arguments before trying again."
        if error.outcome == "authorization":
            return "The tool did not run; calling it again needs the authorization fixed first."
        if error.outcome in ("tool_changed", "tool_not_reviewed"):
            return "The tool did not run; it can be called again only once the host accepts the change."
        if error.refusal and error.outcome in ("server", "unavailable"):
            return "The tool did not run."
        wait = _retry_after(error)
        return f"The tool did not run, so it is safe to try again{wait}."
    if error.outcome == "tool":
        return "Read the error before deciding whether to call it again."
    safe = _safe_to_repeat(hints)
    if safe:
        return f"It may have run, in part or in full; it is {safe}, so calling it again is safe{_retry_after(error)}."
    warning = " It is marked destructive." if hints is not None and hints.destructive_hint is True else ""
    return (
        f"It may have run, in part or in full: check its effects before calling it again, or it may run twice.{warning}"
    )


def _safe_to_repeat(hints: mcp_types.ToolAnnotations | None) -> str | None:
    if hints is None:
        return None
    if hints.read_only_hint:
        return "read-only"
    if hints.idempotent_hint:
        return "idempotent"
    return None


def _retry_after(error: ErrorFacts) -> str:
    retry_after: float | None = getattr(error, "retry_after", None)
    if retry_after is not None:
        return f" after {retry_after:g} s (the server asked to wait)"
    return ""
