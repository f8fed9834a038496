"""A resumable reference to a task, for any durable store: ``call.handoff()`` gives one, ``client.resume(ref)``
awaits the task in another process.

A :class:`TaskReference` is a small frozen value (the server's identity, the task id, the protocol version the task
was made under, the tool and the task's ttl) that turns into a plain JSON object and back, so a host can keep it in
a database, a queue message or a Temporal heartbeat. It never holds the server's URL or credentials.

The identity (:func:`endpoint_id`) names whom the task belongs to, not only where it runs, so one user's reference
never polls another's task:

* HTTP: a digest of the endpoint (origin and path) and, after ``/as:``, a digest of what the requests are signed in
  with: the URL's userinfo and query (a tenant, an ``api_key=``), every header but the harmless ones
  (:data:`~mcp_client.cache.partition.HARMLESS_HEADERS`, of the transport and of a caller's own client), and the kind
  of sign-in object (``auth=``, the client's ``auth``). The user behind a sign-in object is the server's to know; a
  host that signs several users in through one kind of object names each with ``cache_partition``, which then
  stands for all of the above, as it does for the cache. So does a host that signs users in by cookie on its own
  HTTP client: cookies are not part of the digest, since the server sets them as it likes (a load balancer's sticky
  cookie would change the identity mid-session and refuse the client its own references). A client with none of
  these has the bare endpoint digest.
* stdio: a digest of the program (command, arguments, environment, folder) and, after ``/instance:``, the running
  process. A stdio server's tasks live in its process, and a new process may reuse an old one's task ids, so a
  reference is good only while the process that made it runs (the same client, or its handoff in this host).
* in memory: the server object's own identity (this process only). Any other transport: its name, and the
  connection.

:class:`Resuming` is the client's share (a mixin of :class:`~mcp_client.Client`): ``resume`` checks that the reference
is this client's server, under this identity and protocol era (:class:`TaskReferenceMismatch` otherwise) before it
polls the task with ``task_result``.

May touch the task model, the errors and the public client surface only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import mcp_types

from mcp_client.cache.partition import HARMLESS_HEADERS, identity_token, new_token
from mcp_client.calls.tasks import TaskControl, TaskDriver
from mcp_client.errors import MCPClientError
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.protocol.results import tool_result

if TYPE_CHECKING:
    from mcp_client.cache.requests import CachedRequests
    from mcp_client.policy import TimeoutPolicy
    from mcp_client.session.session import Session
    from mcp_client.transports.base import Transport

__all__ = ["Resuming", "TaskReference", "TaskReferenceMismatch", "endpoint_id"]


class TaskReferenceMismatch(MCPClientError, ValueError):
    """``resume()`` / ``check_reference()``: the reference is not this client's to resume (another server, the
    same server under other credentials or another URL query, another process of a stdio server, or another
    protocol era). Nothing was sent; the task it names may have run (``may_have_run`` is True)."""

    def __init__(self, message: str, *, task_id: str, **context: Any) -> None:
        super().__init__(message, **context)
        self.task_id = task_id
        """The task the reference names."""
        self.may_have_run = True  # (the work behind a task id may have run, whoever may resume it)


@dataclass(frozen=True, slots=True)
class TaskReference:
    """Where a task lives and how to pick it up again; serialisable with :meth:`to_dict` / :meth:`from_dict`.

    Attributes:
        server: The server's identity, as :func:`endpoint_id` gives it (``"endpoint:<digest>"``, with
            ``"/as:<digest>"`` when the client signs in; ``"process:<digest>/instance:<digest>"`` for stdio).
            Never a URL or a secret.
        task_id: The server's id for the task.
        protocol: The protocol version the task was created under (``"2026-07-28"``, ``"2025-11-25"``).
        tool: The tool the task runs, when known.
        ttl: Seconds the server said it keeps the task from its creation (None: not said).
    """

    server: str
    task_id: str
    protocol: str
    tool: str | None = None
    ttl: float | None = None

    def __post_init__(self) -> None:
        for name in ("server", "task_id", "protocol"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"TaskReference.{name} must be a non-empty string, got {value!r}")
        if self.tool is not None and not isinstance(self.tool, str):
            raise ValueError(f"TaskReference.tool must be a string or None, got {self.tool!r}")
        ttl = self.ttl
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, int | float) or math.isnan(ttl) or ttl < 0
        ):
            raise ValueError(f"TaskReference.ttl must be seconds >= 0 or None, got {ttl!r}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready object (``taskId``, ``server``, ``protocol``, and ``tool``/``ttl`` when known)."""
        data: dict[str, Any] = {"server": self.server, "taskId": self.task_id, "protocol": self.protocol}
        if self.tool is not None:
            data["tool"] = self.tool
        if self.ttl is not None:
            data["ttl"] = self.ttl
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskReference:
        """Read what :meth:`to_dict` wrote. Raises ``ValueError`` naming what is missing or malformed."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a task reference must be a JSON object, got {type(data).__name__}")
        missing = [key for key in ("server", "taskId", "protocol") if key not in data]
        if missing:
            raise ValueError(f"a task reference needs {', '.join(missing)}")
        return cls(
            server=data["server"],
            task_id=data["taskId"],
            protocol=data["protocol"],
            tool=data.get("tool"),
            ttl=data.get("ttl"),
        )


_DIGEST = 24
"""Hex digits of each digest in an identity (96 bits: no two endpoints or sign-ins of a host meet by chance)."""


def _digest(*parts: object) -> str:
    material = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:_DIGEST]


_PROCESS_KEY = secrets.token_bytes(16)
"""Keys the digests that are good in this process only (a stdio program's): its arguments and environment may hold
secrets, and a digest no other process can recompute cannot be tested against guesses."""


def _process_digest(*parts: object) -> str:
    material = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hmac.new(_PROCESS_KEY, material.encode("utf-8"), hashlib.sha256).hexdigest()[:_DIGEST]


def _credential_headers(headers: object) -> list[tuple[str, str]]:
    if not isinstance(headers, Mapping):
        return []
    pairs = ((str(name).lower(), str(value)) for name, value in headers.items())
    return sorted(pair for pair in pairs if pair[0] not in HARMLESS_HEADERS)


def _signed_in_as(transport: object, url: str, endpoint: str, partition: str | None) -> str | None:
    """A digest of what an HTTP client's requests to ``endpoint`` are signed in with (None: they carry nothing)."""
    if partition is not None:
        return _digest("partition", endpoint, partition)
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    own = getattr(transport, "client", None)
    signers = sorted(
        f"{type(obj).__module__}.{type(obj).__qualname__}"
        for obj in (getattr(transport, "auth", None), getattr(own, "auth", None))
        if obj is not None
    )
    headers = _credential_headers(getattr(transport, "headers", None)) + _credential_headers(
        getattr(own, "headers", None)
    )
    client_query = str(getattr(own, "params", "") or "")
    if not (userinfo or parts.query or headers or signers or client_query):
        return None
    return _digest("signed-in", endpoint, userinfo, parts.query, client_query, sorted(headers), signers)


def endpoint_id(
    transport: Transport,
    server_info: mcp_types.Implementation | None,
    *,
    instance: object = None,
    partition: str | None = None,
) -> str:
    """The identity a :class:`TaskReference` names a server by (see the module documentation): never a URL,
    a command line or a secret, only digests of them.

    Args:
        transport: The client's transport.
        server_info: What the server reported (the name of a server reached by another kind of transport).
        instance: The connection (its session) a process-bound server runs in: a stdio process is one server.
        partition: The client's ``cache_partition``: the host's name for the user it signs in.
    """
    url = getattr(transport, "url", None)
    key = transport.era_cache_key
    if isinstance(url, str) and key is not None:
        signed_in = _signed_in_as(transport, url, key, partition)
        server = "endpoint:" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:_DIGEST]
        return server if signed_in is None else f"{server}/as:{signed_in}"
    serve = getattr(transport, "serve", None)
    if serve is not None:  # in memory: the server object itself, in this process
        owner = getattr(serve, "__self__", serve)
        return "memory:" + _digest(identity_token(owner) or new_token())  # (no token: it matches nothing)
    command = getattr(transport, "command", None)
    if isinstance(command, str):
        program = _process_digest(
            "stdio",
            command,
            list(getattr(transport, "args", ())),
            sorted(dict(getattr(transport, "env", None) or {}).items()),
            str(getattr(transport, "cwd", None)),
            bool(getattr(transport, "inherit_env", False)),
        )
        server = "process:" + program
    else:
        server = "server:" + (server_info.name if server_info is not None else transport.description)
    running = identity_token(instance) if instance is not None else None
    return f"{server}/instance:{_digest('instance', running or 'not connected')}"


class Resuming:
    """``resume(ref)`` for :class:`~mcp_client.Client` (a mixin: the client provides the rest)."""

    if TYPE_CHECKING:
        transport: Transport
        _cached: CachedRequests

        @property
        def protocol_version(self) -> str: ...
        @property
        def server_info(self) -> mcp_types.Implementation | None: ...
        @property
        def session(self) -> Session: ...
        @property
        def _tasks(self) -> TaskDriver: ...
        def resolve_timeout(self, timeout: TimeoutArg) -> TimeoutPolicy: ...
        async def task_result(
            self, task_id: str, *, timeout: TimeoutArg = ..., raise_on_error: bool = ...
        ) -> mcp_types.CallToolResult: ...

    @property
    def endpoint(self) -> str:
        """This client's server as a :class:`TaskReference` names it (see :func:`endpoint_id`)."""
        try:
            session: Session | None = self.session
        except RuntimeError:  # not connected: no process runs for a reference to name
            session = None
        context = self._cached.context
        partition = context.removeprefix("partition:") if context.startswith("partition:") else None
        return endpoint_id(self.transport, self.server_info, instance=session, partition=partition)

    def check_reference(self, reference: TaskReference) -> None:
        """Raise :class:`TaskReferenceMismatch` unless ``reference`` is a task of this client's server, under
        its credentials (or process), in this protocol era."""
        if not isinstance(reference, TaskReference):
            raise TypeError(f"resume() takes a TaskReference, got {type(reference).__name__}")
        ours = self.endpoint
        task = reference.task_id
        if reference.server != ours:
            server, _, bound = reference.server.partition("/")
            our_server, _, our_bound = ours.partition("/")
            if server != our_server:
                why = f"belongs to another server ({server}; this client's is {our_server})"
            elif our_bound.startswith("instance:") or bound.startswith("instance:"):
                why = "was made by another process or connection of this server (the one that made it has ended)"
            else:
                why = "belongs to this server under other credentials or another URL query (a tenant)"
            raise TaskReferenceMismatch(f"task {task!r} {why}: refused, nothing was sent", task_id=task)
        if reference.protocol != self.protocol_version:
            raise TaskReferenceMismatch(
                f"task {task!r} was created at protocol {reference.protocol}; this session speaks "
                f"{self.protocol_version}",
                task_id=task,
            )

    async def resume(
        self,
        reference: TaskReference,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
        raise_on_error: bool = False,
        leave_running: Callable[[], bool] | None = None,
    ) -> mcp_types.CallToolResult:
        """Await the task ``reference`` names (from ``call.handoff()``, possibly in another process) to its end, as
        :meth:`~mcp_client.Client.task_result` does: its result, or its typed error.

        ``leave_running`` is asked when the wait stops before the task ended (the caller cancelled, the policy ran
        out): True leaves the task running on the server, as for a detached call, so that another process can
        resume it; by default (or False) it is cancelled with ``tasks/cancel``.

        Raises:
            TaskReferenceMismatch: The reference is not this client's to resume: another server, the same server
                under other credentials or URL query, another stdio process, another protocol era (a
                ``ValueError`` too).
            TaskNotFound: The server no longer knows the task (expired, or never existed).
            TaskFailed, RequestCancelled, MaxTimeout, IdleTimeout: As for ``task_result``.
        """
        self.check_reference(reference)
        if leave_running is None:
            return await self.task_result(reference.task_id, timeout=timeout, raise_on_error=raise_on_error)
        started_at = self.session.clock()
        result = await self._tasks.result(
            reference.task_id,
            policy=self.resolve_timeout(timeout),
            started_at=started_at,
            handle=_AskedControl(leave_running, task_id=reference.task_id),
        )
        return tool_result(f"task {reference.task_id}", result, raise_on_error)


class _AskedControl(TaskControl):
    """A task record whose ``leave_running`` is asked of the host at the moment the driver needs it."""

    def __init__(self, ask: Callable[[], bool], *, task_id: str) -> None:
        self._ask = ask
        super().__init__(task_id=task_id)

    @property
    def leave_running(self) -> bool:
        return self._ask()

    @leave_running.setter
    def leave_running(self, value: bool) -> None:
        """Set by the record's own constructor; the host's answer is what counts."""
