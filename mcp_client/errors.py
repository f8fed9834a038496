"""The exception tree of mcp_client, drawn whole: every error the package raises is one of these.

Defined here unless a module is named (on the line of the class, or of the head of its family in that module);
``# internal`` marks one that never reaches a caller by itself.

```
MCPClientError
├── ConnectError                 could not start, reach or handshake with the server
│   └── ClientClosed             the client was closed (by its host, or a group's idle stop); also a RuntimeError
├── TransportError               the channel failed; ``.written`` tells whether the request left
│   ├── SessionExpired           HTTP 2025-11-25: the server ended our session (the client starts a new one)
│   ├── WorkerLost               integrations/temporal/failures.py: a lost worker's call may have run; not re-sent
│   └── ProcessLost              integrations/dbos.py: a lost process's DBOS step may have run; not called again
├── RequestTimeout               (also a builtin TimeoutError)
│   ├── IdleTimeout              no sign of life for ``idle`` seconds
│   └── MaxTimeout               the hard maximum passed
├── RequestCancelled             cancelled through the Call handle
├── TaskFailed                   a task-backed call ended ``failed`` (.task_id, .error)
├── TaskNotFound                 the server does not know the task id, or it expired (.task_id)
├── TaskReferenceMismatch        client/task_reference.py: not this client's task to resume (also a ValueError)
├── ServerError                  JSON-RPC error from the server (.code .message .data), subclassed for known codes
│   ├── ParseError               -32700
│   ├── InvalidRequest           -32600
│   ├── MethodNotFound           -32601
│   ├── InvalidParams            -32602
│   ├── InternalError            -32603
│   ├── ResourceNotFound         -32002
│   ├── HeaderMismatch           -32020: HTTP headers missing, or not matching the body
│   ├── MissingClientCapability  -32021: the request lacks a client capability it needs
│   └── UnsupportedProtocolVersion  -32022: the server does not speak the request's version
├── CheckpointNotRecorded        integrations/temporal/failures.py: Temporal could not record the call's checkpoint
├── ToolError                    the tool reported ``isError: true`` (only when the caller asks for raising)
├── ToolChanged                  ``pin_tools``: the tool's definition changed since it was pinned; nothing was sent
│   └── ToolNotReviewed          client/tool_pins.py: strict pins do not name the tool; nothing was sent
├── ToolNotAllowed               policy/tool_filter.py: the server's tool filter leaves the tool out; nothing was sent
├── StructuredOutputError        the tool's ``structuredContent`` does not match its ``outputSchema``
├── ProtocolError                the server broke the protocol
│   └── DuplicateToolName        client/tool_pins.py: a tool listing names one tool twice (refused whole)
├── OAuthError                   auth/errors.py: authorization failed (never a TransportError: no retry re-runs it)
│   ├── DiscoveryError           no usable protected resource / authorization server metadata
│   │   ├── ResourceMismatch     the metadata names another resource than the MCP server
│   │   ├── IssuerMismatch       the authorization server metadata names another issuer than the one asked
│   │   ├── UntrustedIssuer      the server names an authorization server the host's credentials are not for
│   │   └── UnsafeURL            a URL learned from a server is neither https nor http on a loopback host
│   ├── RegistrationError        no client identity could be had (nothing pre-registered, no CIMD, no DCR)
│   ├── AuthorizationError       the authorization response was an error, or failed the state / ``iss`` checks
│   ├── TokenError               the token endpoint refused (``.error`` is the OAuth error code)
│   ├── Unauthorized             the server refused a token it had just been given
│   └── InsufficientScope        a 403 ``insufficient_scope`` that re-authorizing cannot fix
├── SubscriptionError            subscriptions/errors.py: a subscription could not be opened
│   └── SubscriptionLost         an open subscription ended for good (``__cause__``: the last failure)
├── _TornDown                    subscriptions/modern.py, # internal: the server cancelled a listen (re-listened)
├── SkillVerificationError       extensions/skills.py: a skill file is not what its entry describes (.kind)
└── SkillsNotSupported           extensions/skills.py: the server did not declare the skills extension
```

Every error carries the context of the call it ended: ``method``, ``request_ids`` (one per attempt or round),
``elapsed`` seconds and ``last_progress``. anyio cancellation of the caller's task is never turned into one of these.
A test walks every subclass the package defines and finds it named here (tests/unit/test_error_tree.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from mcp_client._redact import scrub
from mcp_client._visible import visible
from mcp_client.outcomes import for_model

if TYPE_CHECKING:
    import mcp_types

__all__ = [
    "Attempt",
    "ClientClosed",
    "ConnectError",
    "HeaderMismatch",
    "IdleTimeout",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPClientError",
    "MaxTimeout",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "ProtocolError",
    "RequestCancelled",
    "RequestTimeout",
    "ResourceNotFound",
    "ServerError",
    "SessionExpired",
    "TaskFailed",
    "TaskNotFound",
    "StructuredOutputError",
    "ToolChanged",
    "ToolError",
    "TransportError",
    "UnsupportedProtocolVersion",
]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One request on the wire that a call made and that failed: its id, why, and when (the client's clock)."""

    request_id: int | str
    cause: MCPClientError
    started: float
    ended: float


class MCPClientError(Exception):
    """Base class of every error raised by mcp_client."""

    outcome: ClassVar[str] = "failed"
    """What happened, as :mod:`mcp_client.outcomes` words it for a model (its key into that module's sentences)."""
    refusal: ClassVar[bool] = False
    """True for errors that say the request was refused as it stood (or never reached a session that could run it):
    an answer of this kind means that request did not run."""
    method: str | None
    """The MCP method of the call that failed, when there was one."""
    request_ids: tuple[int | str, ...]
    """The JSON-RPC ids the call used, one per attempt or input round, oldest first."""
    elapsed: float | None
    """Seconds from the start of the call to the error."""
    last_progress: float | None
    """The last progress value delivered to the caller, if any."""

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        request_ids: tuple[int | str, ...] = (),
        elapsed: float | None = None,
        last_progress: float | None = None,
    ) -> None:
        # the last line of defence: no configured secret, and no control character of a server's text raw (an
        # uncaught error's traceback goes to a terminal), in any error's text
        message = scrub(visible(message), urls=False)
        super().__init__(message)
        self.message = message
        self.method = method
        self.request_ids = request_ids
        self.elapsed = elapsed
        self.last_progress = last_progress
        self.attempts: tuple[Attempt, ...] = ()
        """Every failed attempt of the call, oldest first (retries, input rounds); the last one is this error's."""
        self.tool: str | None = None
        """The tool of a failed ``tools/call``, when the client knows it."""
        self.tool_annotations: mcp_types.ToolAnnotations | None = None
        """That tool's annotations as ``tools/list`` reported them (``None``: not listed, or none given)."""
        self.may_have_run: bool | None = None
        """Whether the call may have done its work, as the call's runner recorded it: True once one of its requests
        was written and not refused, or the server made a task of it; False when none did. None: no call recorded
        it (the error came from elsewhere), then its kind decides (:func:`mcp_client.outcomes.may_have_run`)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied by its state: most subclasses take keyword-only arguments (``written=``, ``code=``)
        that ``args`` does not hold, so the default ``cls(*args)`` could not make one again."""
        return (_rebuilt, (type(self), self.args), self.__dict__)

    @property
    def for_model(self) -> str:
        """A short plain text for a model: what happened, whether the server was told to stop, and whether the
        tool may have run and should be checked before it is called again (see :mod:`mcp_client.outcomes`)."""
        return for_model(self)

    def about_tool(self, name: str, annotations: mcp_types.ToolAnnotations | None) -> MCPClientError:
        """Name the tool the failed call was for, with its annotations, where still unknown; returns self."""
        self.tool = self.tool or name
        self.tool_annotations = self.tool_annotations or annotations
        return self

    def with_context(
        self,
        *,
        method: str | None = None,
        request_ids: tuple[int | str, ...] = (),
        elapsed: float | None = None,
        last_progress: float | None = None,
    ) -> MCPClientError:
        """Fill in the call's context where it is still unknown; returns self for ``raise err.with_context(...)``."""
        self.method = self.method or method
        self.request_ids = self.request_ids or request_ids
        self.elapsed = self.elapsed if self.elapsed is not None else elapsed
        self.last_progress = self.last_progress if self.last_progress is not None else last_progress
        return self


def _rebuilt(cls: type[MCPClientError], args: tuple[Any, ...]) -> MCPClientError:
    """An error of ``cls`` with ``args`` and no other state yet (pickle then restores its ``__dict__``)."""
    error = cls.__new__(cls, *args)
    Exception.__init__(error, *args)
    return error


class ConnectError(MCPClientError):
    """The transport could not be brought up: the process would not start, the host would not answer, or the
    discover/initialize exchange failed."""

    outcome = "connect"

    refusal = True


class ClientClosed(ConnectError, RuntimeError):
    """The client was closed, by its host or by its owner on its own (a ``ClientGroup`` stopping an idle server):
    nothing was sent. Also a ``RuntimeError``, as every use of a closed client has always raised."""


class TransportError(MCPClientError):
    """The channel carrying the request failed: the process died, the connection dropped, the stream broke."""

    outcome = "transport"

    def __init__(
        self,
        message: str,
        *,
        written: bool,
        status_code: int | None = None,
        retry_after: float | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.written = written
        """True if the request may have reached the server (so it may have run); False if it surely did not."""
        self.status_code = status_code
        """The HTTP status, when the failure was an HTTP answer."""
        self.retry_after = retry_after
        """Seconds the server asked us to wait (``Retry-After``), when it did."""


class SessionExpired(TransportError):
    """2025-11-25: the server answered 404 to a request that carried our ``Mcp-Session-Id``: it ended the session.

    The spec says the client MUST start a new session (a new ``initialize`` without the old id). The request failed
    with ``status_code=404`` and ``written=True``; the connection's ``session_expired`` flag is set.
    """

    outcome = "session_expired"

    refusal = True

    def __init__(self, message: str, *, session_id: str, **context: Any) -> None:
        context.setdefault("written", True)
        context.setdefault("status_code", 404)
        super().__init__(message, **context)
        self.session_id = session_id
        """The session id the server no longer knows."""


class RequestTimeout(MCPClientError, TimeoutError):
    """A request ran out of time. Catch this to handle both kinds of timeout."""

    outcome = "timeout"

    kind: ClassVar[str] = "timeout"

    def __init__(self, message: str, *, timeout: float | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.timeout = timeout
        """The limit in seconds that was passed."""


class IdleTimeout(RequestTimeout):
    """The server showed no sign of life (no accepted progress) for the policy's ``idle`` seconds."""

    kind = "idle"


class MaxTimeout(RequestTimeout):
    """The call's hard ``maximum`` passed. Progress never extends it."""

    outcome = "maximum"

    kind = "maximum"


class RequestCancelled(MCPClientError):
    """The call was cancelled through its :class:`~mcp_client.Call` handle."""

    outcome = "cancelled"

    def __init__(self, message: str, *, reason: str | None = None, cancel_sent: bool = True, **context: Any) -> None:
        super().__init__(message, **context)
        self.reason = reason
        """The reason given to ``call.cancel()``, also sent to the server."""
        self.cancel_sent = cancel_sent
        """False when no cancellation went to a server: the call was cancelled while it waited for a restarted
        process or a renewed session, its last request having gone to a connection that is gone."""


class TaskFailed(MCPClientError):
    """A task-backed tool call ended with status ``failed``: the work hit a JSON-RPC error on the server.

    (A tool that reports ``isError`` ends ``completed`` and returns its result as any call does.)
    """

    def __init__(self, message: str, *, task_id: str, error: Mapping[str, Any] | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.task_id = task_id
        """The task's id."""
        self.error = dict(error) if error is not None else None
        """The task's JSON-RPC ``error`` object, as the server sent it (None if it sent none)."""

    @property
    def code(self) -> int | None:
        """The JSON-RPC error code of the task's error, when there is one."""
        code = self.error.get("code") if self.error is not None else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None


class TaskNotFound(MCPClientError):
    """The server does not know the task id: it never existed, or its time to live ran out."""

    def __init__(self, message: str, *, task_id: str, **context: Any) -> None:
        super().__init__(message, **context)
        self.task_id = task_id
        """The id that was not found."""


class ServerError(MCPClientError):
    """The server answered with a JSON-RPC error. Known codes raise a subclass."""

    outcome = "server"

    code: int
    data: Any

    codes: ClassVar[dict[int, type[ServerError]]] = {}
    known_code: ClassVar[int | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.known_code is not None:
            ServerError.codes[cls.known_code] = cls

    def __init__(self, message: str, *, code: int, data: Any = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.code = code
        """The JSON-RPC error code."""
        self.data = data
        """The error's ``data`` member, as sent."""

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    @classmethod
    def from_error(cls, error: Mapping[str, Any], **context: Any) -> ServerError:
        """Build the most specific subclass for a JSON-RPC ``error`` object from the wire."""
        code = error.get("code")
        if isinstance(code, bool) or not isinstance(code, int):
            code = 0
        message = error.get("message")
        if not isinstance(message, str):
            message = "server error without a message"
        message = visible(message)  # (the server's text: a host prints it, logs it, hands it to a model)
        error_class = cls.codes.get(code, ServerError)
        return error_class(message, code=code, data=error.get("data"), **context)


class ParseError(ServerError):
    """The server could not parse what we sent (-32700)."""

    known_code = -32700
    refusal = True


class InvalidRequest(ServerError):
    """The server found our message not to be a valid request (-32600)."""

    known_code = -32600
    refusal = True


class MethodNotFound(ServerError):
    """The server does not implement the method, or the capability it needs (-32601)."""

    outcome = "unavailable"

    known_code = -32601
    refusal = True


class InvalidParams(ServerError):
    """Bad arguments: unknown tool or prompt, invalid cursor, missing fields, unknown resource at 2026 (-32602)."""

    outcome = "arguments"

    known_code = -32602
    refusal = True


class InternalError(ServerError):
    """The server failed internally (-32603)."""

    known_code = -32603


class ResourceNotFound(ServerError):
    """The resource does not exist (-32002, used by servers before 2026-07-28)."""

    known_code = -32002
    refusal = True


class HeaderMismatch(ServerError):
    """HTTP headers were missing or did not match the body (-32020, 2026-07-28)."""

    known_code = -32020
    refusal = True


class MissingClientCapability(ServerError):
    """The server needs a client capability this request did not declare (-32021, 2026-07-28)."""

    known_code = -32021
    refusal = True

    @property
    def required_capabilities(self) -> Any:
        """``data.requiredCapabilities`` as sent by the server."""
        return self.data.get("requiredCapabilities") if isinstance(self.data, dict) else None


class UnsupportedProtocolVersion(ServerError):
    """The server does not speak the protocol version of the request (-32022, 2026-07-28)."""

    known_code = -32022
    refusal = True

    @property
    def supported(self) -> list[str]:
        """The versions the server says it supports (``data.supported``)."""
        supported = self.data.get("supported") if isinstance(self.data, dict) else None
        return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


class ToolError(MCPClientError):
    """The tool ran and reported failure (``isError: true``). Raised only with ``raise_on_error=True``."""

    outcome = "tool"

    def __init__(self, message: str, *, result: Any, **context: Any) -> None:
        super().__init__(message, **context)
        self.result = result
        """The full ``CallToolResult``."""


class ToolChanged(MCPClientError):
    """``Client(pin_tools=True)``: the tool's listed definition differs from the one pinned (any field of it: its
    title, description, schemas, annotations...), so the call was refused before anything was sent. It goes through
    again once the host calls ``client.accept_tool_change(name)``."""

    outcome = "tool_changed"
    refusal = True  # refused before anything was sent

    def __init__(self, message: str, *, name: str, changed: tuple[str, ...], **context: Any) -> None:
        super().__init__(message, **context)
        self.tool = name
        self.changed = changed
        """The fields that differ, in their wire spelling (``"description"``, ``"inputSchema"``...)."""


class StructuredOutputError(MCPClientError):
    """A tool's result breaks the ``outputSchema`` that ``list_tools()`` reported for it: its ``structuredContent``
    does not validate, is missing, or the schema itself cannot be used (invalid, or a ``$ref`` that is not local).
    Turn the check off with ``Client(validate_output=False)``."""

    def __init__(self, message: str, *, result: Any, tool: str, path: tuple[str | int, ...] = (), **context: Any):
        super().__init__(message, **context)
        self.result = result
        """The full ``CallToolResult``, unchanged."""
        self.tool = tool
        """The tool's name."""
        self.path = path
        """Where in ``structuredContent`` the first mismatch is (keys and indexes; empty: at the top)."""


class ProtocolError(MCPClientError):
    """The server broke the protocol: malformed JSON, an unknown ``resultType``, a result of the wrong shape."""

    outcome = "protocol"
