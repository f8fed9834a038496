"""The tool listings of a group's lazy servers, kept on disk between runs so a host can list tools unstarted.

One file per server configuration, named by a digest of it: two configurations never share a file, and no secret
of one (an environment value, a header, a URL's userinfo) is written anywhere; the file holds only the tool listing
(``{"version": 1, "tools": [...]}``, each tool in its wire form). The folder is ``$XDG_CACHE_HOME/mcp_client/``,
else ``~/.cache/mcp_client/``, unless the host names one (``ClientGroup(snapshot=path)``).

A file is written whole or not at all (a temporary file in the same folder, then a rename). A file that cannot be
read, is larger than :data:`MAX_SNAPSHOT_BYTES`, is not a regular file, is owned by another user or writable by
others, or does not hold a valid listing is ignored with a warning: the server is then started to list it. The files
are small and local; they are read and written on the event loop's thread, bounded by that size.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import hashlib
import json
import os
import stat
import tempfile
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import mcp_types
import pydantic

from mcp_client._log_guard import package_logger
from mcp_client.transports.base import Transport

__all__ = ["MAX_SNAPSHOT_BYTES", "SnapshotStore", "config_key", "default_folder"]

logger = package_logger("mcp_client.group")

MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024
"""The largest snapshot file read; a larger one is ignored."""

_VERSION = 1
_TOOLS = pydantic.TypeAdapter(list[mcp_types.Tool])


def default_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/mcp_client`` when that variable names an absolute path, else ``~/.cache/mcp_client``."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "mcp_client"


_DEPTH = 12
"""How deep the digest looks into an object of a configuration (an ``auth=`` holding a grant holding a client id)."""
_NODES = 20_000
"""The most values the digest looks at in one configuration; past it, values count by their type's name."""


def _plain(value: Any, depth: int = 0, within: frozenset[int] = frozenset(), budget: list[int] | None = None) -> Any:
    """A configuration value as JSON data, for the digest only (never written): plain data as it is, and every
    other object by its state (its fields, or its attributes and slots), so that two configurations that differ
    only inside an object (who an ``auth=`` signs in as, the headers of a host's own HTTP client) differ here too.
    Functions, classes and what cannot be looked into count by their name only, so the digest is the same from one
    run to the next."""
    budget = [_NODES] if budget is None else budget
    budget[0] -= 1
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    kind = type(value)
    name = f"<{kind.__module__}.{getattr(value, '__qualname__', kind.__qualname__)}>"
    if depth >= _DEPTH or budget[0] < 0 or id(value) in within or isinstance(value, (type, *_ROUTINES)):
        return name
    within = within | {id(value)}  # (a cycle: only for the length of this digest, while the object is held)

    def inner(item: Any) -> Any:
        return _plain(item, depth + 1, within, budget)

    if isinstance(value, Mapping):
        return {str(key): inner(item) for key, item in sorted(value.items(), key=lambda pair: str(pair[0]))}
    if isinstance(value, Sequence):
        return [inner(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((inner(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True, default=str))
    if dataclasses.is_dataclass(value):
        return {"type": name, **{f.name: inner(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    state = _state(value)
    if not state:
        return name
    return {"type": name, **{key: inner(item) for key, item in sorted(state.items())}}


_ROUTINES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, functools.partial)


def _state(value: Any) -> dict[str, Any]:
    """An object's attributes and slots (what it holds, not what it computes)."""
    state: dict[str, Any] = {}
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
                state[f"{klass.__qualname__}.{slot}"] = getattr(value, slot)
    with contextlib.suppress(TypeError):  # (no attributes of its own)
        state.update(vars(value))
    return state


def config_key(transport: Transport) -> str:
    """The digest naming a server configuration's snapshot: SHA-256 over the transport's kind and every field (a
    transport that is not a dataclass: its attributes and its description)."""
    kind = type(transport)
    if dataclasses.is_dataclass(transport):
        config = _plain(transport)
    else:  # a transport of the host's own: its attributes, and what it calls itself
        config = {"attributes": _plain(getattr(transport, "__dict__", {})), "description": transport.description}
    described = {"kind": f"{kind.__module__}.{kind.__qualname__}", "config": config}
    canonical = json.dumps(described, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class SnapshotStore:
    """The snapshot files of one folder (created, private to the user, on the first write; a folder that another
    user owns or may write in is not written to)."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_folder()

    def path(self, key: str) -> Path:
        """Where the snapshot of the configuration with digest ``key`` lives."""
        return self.folder / f"tools-{key}.json"

    def load(self, key: str) -> list[mcp_types.Tool] | None:
        """The listing kept for ``key``; None when there is none, or it is not usable (then with a warning)."""
        path = self.path(key)
        try:
            data = _read_bounded(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            logger.warning("tool snapshot %s ignored: %s", path.name, exc)
            return None
        try:
            document = json.loads(data)
            if not isinstance(document, dict) or document.get("version") != _VERSION:
                raise ValueError(f"not a version {_VERSION} snapshot")
            return _TOOLS.validate_python(document.get("tools"))
        except (ValueError, RecursionError, pydantic.ValidationError) as exc:  # (nesting past the decoders' depth)
            logger.warning("tool snapshot %s ignored: not a valid listing (%s)", path.name, type(exc).__name__)
            return None

    def save(self, key: str, tools: Sequence[Mapping[str, Any]]) -> None:
        """Keep ``tools`` (each a tool's wire form) for ``key``, atomically; a failure is logged, not raised."""
        path = self.path(key)
        text = json.dumps({"version": _VERSION, "tools": list(tools)}, ensure_ascii=False, separators=(",", ":"))
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            _check_private(self.folder)
            handle, temporary = tempfile.mkstemp(prefix=".tools-", suffix=".tmp", dir=self.folder)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as file:
                    file.write(text)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as exc:
            logger.warning("tool snapshot %s not written: %s", path.name, exc.strerror or exc)


def _check_private(folder: Path) -> None:
    """Raise ``PermissionError`` unless ``folder`` is the user's own and no one else may write in it (another user
    could replace or remove what is kept there, and read it)."""
    info = os.stat(folder)
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise PermissionError(errno.EPERM, "the folder is owned by another user")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(errno.EPERM, "the folder is writable by other users")


def _read_bounded(path: Path) -> bytes:
    """The bytes of regular file ``path`` (no symlink followed, no FIFO waited on), at most the size bound; a file
    another user owns or could have written is refused (its listing would reach the model, and seed the pins)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise ValueError("owned by another user")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ValueError("writable by other users")
        data = file.read(MAX_SNAPSHOT_BYTES + 1)
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise ValueError(f"larger than {MAX_SNAPSHOT_BYTES} bytes")
    return data
