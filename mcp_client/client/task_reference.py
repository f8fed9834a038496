"""A resumable reference to a task, for any durable store: ``call.handoff()`` gives one, ``client.resume(ref)``
awaits the task in another process.

A :class:`TaskReference` is a small frozen value (the server's identity, the task id, the protocol version the task
was made under, the tool and the task's ttl) that turns into a plain JSON object and back, so a host can keep it in
a database, a queue message or a Temporal heartbeat. It never holds the server's URL or credentials: the server is
named by a digest of its endpoint (HTTP: origin and path) or, where there is none (stdio), by the name the server
gave. :class:`Resuming` is the client's share (a mixin of :class:`~mcp_client.Client`): ``resume`` checks that the
reference is for this server and this protocol era before it polls the task with ``task_result``.

May touch the task model, the errors and the public client surface only.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types

from mcp_client.calls.tasks import TaskControl, TaskDriver
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.protocol.results import tool_result

if TYPE_CHECKING:
    from mcp_client.policy import TimeoutPolicy
    from mcp_client.session.session import Session
    from mcp_client.transports.base import Transport

__all__ = ["Resuming", "TaskReference", "endpoint_id"]


@dataclass(frozen=True, slots=True)
class TaskReference:
    """Where a task lives and how to pick it up again; serialisable with :meth:`to_dict` / :meth:`from_dict`.

    Attributes:
        server: The server's identity: ``"endpoint:<digest>"`` of its HTTP origin and path, or
            ``"server:<name>"`` (no endpoint, e.g. stdio). Never a URL or a secret.
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


def endpoint_id(transport: Transport, server_info: mcp_types.Implementation | None) -> str:
    """The identity a :class:`TaskReference` names a server by: a digest of the transport's endpoint where it has
    one (the URL itself, which may carry a token, is never kept), else the server's reported name."""
    key = transport.era_cache_key
    if key is not None:
        return "endpoint:" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
    return "server:" + (server_info.name if server_info is not None else transport.description)


class Resuming:
    """``resume(ref)`` for :class:`~mcp_client.Client` (a mixin: the client provides the rest)."""

    if TYPE_CHECKING:
        transport: Transport

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
        return endpoint_id(self.transport, self.server_info)

    def check_reference(self, reference: TaskReference) -> None:
        """Raise ``ValueError`` unless ``reference`` is a task of this client's server, in this protocol era."""
        if not isinstance(reference, TaskReference):
            raise TypeError(f"resume() takes a TaskReference, got {type(reference).__name__}")
        if reference.server != self.endpoint:
            raise ValueError(
                f"task {reference.task_id!r} belongs to another server ({reference.server}; this client's is "
                f"{self.endpoint})"
            )
        if reference.protocol != self.protocol_version:
            raise ValueError(
                f"task {reference.task_id!r} was created at protocol {reference.protocol}; this session speaks "
                f"{self.protocol_version}"
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
            ValueError: The reference is for another server or another protocol era.
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
