"""The stdio transport: spawn the server as a child process and speak newline-delimited JSON over its pipes.

* The child gets a minimal environment (``PATH``, ``HOME``, locale and a few more) plus what the caller passes;
  the parent's secrets are not handed down unless ``inherit_env=True``.
* It runs in a process group of its own, so shutdown reaches its children too.
* Its stderr is read line by line and handed to logging and the event stream; it is never taken for an error.
* Shutdown is a bounded ladder: close stdin, wait; SIGTERM to the group, wait; SIGKILL to the group.
* If the process dies, every request in flight fails at once with :class:`~mcp_client.TransportError`; with a
  ``restart`` policy the client then starts it again (:mod:`mcp_client.client.supervisor`).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc

from mcp_client._log_guard import package_logger
from mcp_client._redact import command_summary, remember_secrets
from mcp_client.errors import ConnectError, TransportError
from mcp_client.policy.restart import RestartPolicy
from mcp_client.transports.base import Connection, MessageHandler, Transport
from mcp_client.transports.stdio._child_io import ChildIO
from mcp_client.transports.stream import DEFAULT_MAX_MESSAGE_SIZE, LineConnection

__all__ = ["DEFAULT_INHERITED_ENV", "StdioTransport", "stdio"]

logger = package_logger("mcp_client.stdio")

_WINDOWS_ENV: tuple[str, ...] = (
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
)
_WINDOWS_ENV += ("SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES")
_POSIX_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
DEFAULT_INHERITED_ENV: tuple[str, ...] = _WINDOWS_ENV if sys.platform == "win32" else _POSIX_ENV
"""Variables a child inherits from the parent by default; everything else must be passed in ``env``."""


@dataclass(frozen=True, slots=True)
class ShutdownTimings:
    """Seconds to wait at each rung of the shutdown ladder."""

    after_close_stdin: float = 2.0
    after_sigterm: float = 2.0
    after_sigkill: float = 2.0


@dataclass(frozen=True, slots=True)
class StdioTransport(Transport):
    """Launch ``command`` with ``args`` and talk to it over stdin/stdout. Build it with :func:`stdio`."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    inherit_env: bool = False
    on_stderr: Callable[[str], None] | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    shutdown: ShutdownTimings = field(default_factory=ShutdownTimings)
    restart: RestartPolicy | None = None
    """Start the server again when it dies (see :mod:`mcp_client.client.supervisor`); ``None``: a death is final."""

    def __post_init__(self) -> None:
        remember_secrets(args=self.args, env=self.env)  # the last line of defence (see mcp_client._redact)

    @property
    def description(self) -> str:
        """The command and how many arguments it has (their values may be secrets: never shown)."""
        return command_summary(self.command, self.args)

    def child_environment(self) -> dict[str, str]:
        """The environment the server process starts with.

        Of the allow-listed variables, a value starting with ``()`` is left out: that is an exported bash function
        (the shape of Shellshock), never a path or a locale."""
        if self.inherit_env:
            base = dict(os.environ)
        else:
            base = {
                name: os.environ[name]
                for name in DEFAULT_INHERITED_ENV
                if name in os.environ and not os.environ[name].startswith("()")
            }
        if self.env:
            base.update(self.env)
        return base

    @asynccontextmanager
    async def connect(self, handler: MessageHandler) -> AsyncIterator[Connection]:
        pipes = ChildIO()
        stdin, stdout, stderr = pipes.spawn_options()
        try:
            process = await anyio.open_process(
                [self.command, *self.args],
                env=self.child_environment(),
                cwd=self.cwd,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                start_new_session=sys.platform != "win32",
            )
        except BaseException as exc:
            pipes.close()
            if isinstance(exc, OSError):
                raise ConnectError(f"could not start {self.description!r}: {exc}") from exc
            raise
        try:
            pipes.spawned()
            connection = _StdioConnection(process, await pipes.writer(process), self.description)
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._read_stdout, process, pipes, handler)
                tg.start_soon(self._read_stderr, process, pipes, handler)
                try:
                    yield connection
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._shut_down(process, connection)
                    tg.cancel_scope.cancel()
        finally:
            pipes.close()
            with anyio.CancelScope(shield=True):
                await _kill_group(process, signal.SIGKILL if sys.platform != "win32" else None)
                await self._release(process)

    async def _release(self, process: anyio.abc.Process) -> None:
        """Reap the child and close what the process object holds, before the connection is left: nothing of it
        may be left for a finaliser to close after the event loop is gone (asyncio's subprocess transport)."""
        with anyio.move_on_after(self.shutdown.after_sigkill):
            await process.aclose()
            return
        logger.error("server %r (pid %s) could not be reaped", self.description, process.pid)

    async def _read_stdout(self, process: anyio.abc.Process, pipes: ChildIO, handler: MessageHandler) -> None:
        await pipes.read_messages(process, handler, self.max_message_size)
        code = process.returncode
        if code is None:
            with anyio.move_on_after(0.05):
                code = await process.wait()
        detail = f"exited with code {code}" if code is not None else "closed its output"
        handler.on_closed(TransportError(f"server process {self.description!r} {detail}", written=True))

    async def _read_stderr(self, process: anyio.abc.Process, pipes: ChildIO, handler: MessageHandler) -> None:
        pending = bytearray()

        def on_chunk(chunk: bytes) -> None:
            pending.extend(chunk)
            *lines, rest = pending.split(b"\n")
            for line in lines:
                self._stderr_line(bytes(line), handler)
            pending[:] = rest
            if len(pending) > 65536:  # a runaway line: hand it on in pieces
                self._stderr_line(bytes(pending), handler)
                pending.clear()

        await pipes.read_stderr(process, on_chunk)
        if pending:
            self._stderr_line(bytes(pending), handler)

    def _stderr_line(self, raw: bytes, handler: MessageHandler) -> None:
        line = raw.decode(errors="replace").rstrip("\r")
        logger.debug("server stderr: %s", line)
        stderr_hook = getattr(handler, "on_stderr", None)
        if stderr_hook is not None:
            stderr_hook(line)
        if self.on_stderr is not None:
            try:
                self.on_stderr(line)
            except Exception:
                logger.exception("on_stderr callback failed")

    async def _shut_down(self, process: anyio.abc.Process, connection: _StdioConnection) -> None:
        """Close stdin → wait → SIGTERM the group → wait → SIGKILL the group → wait. Bounded in all."""
        await connection.close_input()
        if await _wait(process, self.shutdown.after_close_stdin):
            return
        logger.info("server %r did not exit after stdin closed; sending SIGTERM", self.description)
        await _kill_group(process, signal.SIGTERM if sys.platform != "win32" else None)
        if await _wait(process, self.shutdown.after_sigterm):
            return
        logger.warning("server %r ignored SIGTERM; sending SIGKILL", self.description)
        await _kill_group(process, signal.SIGKILL if sys.platform != "win32" else None)
        if not await _wait(process, self.shutdown.after_sigkill):
            logger.error("server %r (pid %s) could not be reaped", self.description, process.pid)


async def _wait(process: anyio.abc.Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await process.wait()
        return True
    return process.returncode is not None


async def _kill_group(process: anyio.abc.Process, sig: signal.Signals | None) -> None:
    """Signal the server's whole process group (POSIX), or terminate the process (elsewhere)."""
    if sig is None:
        if process.returncode is None:
            process.kill()
        return
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        return  # the group is already gone
    except OSError as exc:
        logger.debug("killpg(%s) failed: %s", process.pid, exc)
    await anyio.lowlevel.checkpoint()


class _StdioConnection(LineConnection):
    def __init__(self, process: anyio.abc.Process, stdin: anyio.abc.ByteSendStream, description: str) -> None:
        self._process = process
        super().__init__(stdin, describe_failure=self._failure)
        self._description = description

    def _failure(self) -> str:
        code = self._process.returncode
        state = f"exited with code {code}" if code is not None else "stopped reading its input"
        return f"server process {self._description!r} {state}"

    @property
    def process_id(self) -> int | None:
        return self._process.pid


def stdio(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    inherit_env: bool = False,
    on_stderr: Callable[[str], None] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    restart: RestartPolicy | None = None,
) -> StdioTransport:
    """A transport that launches a server process and speaks MCP over its stdin/stdout.

    Args:
        command: The program to run, looked up on ``PATH``.
        args: Its arguments.
        env: Extra environment variables for the child. Only a minimal set (``PATH``, ``HOME``, locale, ...) is
            inherited from this process unless ``inherit_env`` is true.
        cwd: Working directory of the child.
        inherit_env: Pass this process's whole environment down (it may hold secrets).
        on_stderr: Called with each line the server writes to stderr (they are also logged at DEBUG).
        max_message_size: Largest message accepted from the server, in bytes; larger ones are dropped and
            reported, and the request they answer fails with a :class:`~mcp_client.ProtocolError`.
        restart: Start the server again when its process dies, under this :class:`~mcp_client.RestartPolicy`
            (jittered backoff, a cap of restarts per window); the client renegotiates and carries on. Calls in
            flight at the death fail with :class:`~mcp_client.TransportError` (``written`` says whether they had
            left); one that never left, or whose tool is idempotent, is sent to the new process within its
            maximum when the call's retry policy allows. ``None`` (the default): the death is final.
    """
    return StdioTransport(
        command=command,
        args=tuple(args),
        env=dict(env) if env is not None else None,
        cwd=cwd,
        inherit_env=inherit_env,
        on_stderr=on_stderr,
        max_message_size=max_message_size,
        restart=restart,
    )
