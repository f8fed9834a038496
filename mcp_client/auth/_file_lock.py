"""An exclusive lock on a file, shared by every process that takes it: ``fcntl.flock`` on POSIX.

Taken without blocking the event loop (non-blocking attempts, with a short sleep between them, so a cancelled
waiter leaves no thread behind) and released when the block ends. Where ``fcntl`` does not exist (Windows) there is
no cross-process lock: the block runs under the in-process lock only.

May touch the file system and anyio; nothing of the package.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.to_thread

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["CROSS_PROCESS", "exclusive_file_lock", "make_private_dirs"]

CROSS_PROCESS = fcntl is not None
"""Whether :func:`exclusive_file_lock` excludes other processes here."""
_FIRST_WAIT = 0.005
_LONGEST_WAIT = 0.1


def make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents, each new one 0700 (existing ones are left as they are)."""
    missing: list[Path] = []
    while not directory.exists():
        missing.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(folder, 0o700)  # mkdir's mode is narrowed by the umask, never widened: make it exact


def _open(path: Path) -> int:
    make_private_dirs(path.parent)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


@asynccontextmanager
async def exclusive_file_lock(path: Path) -> AsyncIterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600 if absent) for the block."""
    if fcntl is None:  # pragma: no cover - not POSIX
        yield
        return
    descriptor = await anyio.to_thread.run_sync(_open, path)
    try:
        wait = _FIRST_WAIT
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await anyio.sleep(wait)
                wait = min(wait * 2, _LONGEST_WAIT)
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
