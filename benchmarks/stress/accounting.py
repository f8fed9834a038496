"""Leak accounting for the stress suite: what this process holds, read the same way before and after a run.

Open file descriptors, tasks of the running event loop, live child processes, resident memory (RSS) and the
memory Python's allocator traces (``tracemalloc``, when it runs). Linux ``/proc`` is the source where there is
one; elsewhere a figure is ``-1`` (unknown) and never counts as a leak.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tracemalloc
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Snapshot", "live_children", "snapshot"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the process holds at one moment (``-1``: not measurable here)."""

    fds: int
    tasks: int
    children: int
    rss_bytes: int
    traced_bytes: int

    def as_dict(self) -> dict[str, int]:
        """The figures by name, for the report."""
        return asdict(self)


def snapshot() -> Snapshot:
    """Measure now (after a full garbage collection, so that only what is really held counts)."""
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else -1
    return Snapshot(_fds(), _tasks(), len(live_children()), _rss(), traced)


def _fds() -> int:
    fd_dir = Path("/proc/self/fd")
    return len(os.listdir(fd_dir)) if fd_dir.is_dir() else -1


def _rss() -> int:
    statm = Path("/proc/self/statm")
    if not statm.is_file():
        return -1
    return int(statm.read_text().split()[1]) * _PAGE


def live_children() -> list[int]:
    """Process ids of this process's children that still run (zombies not counted); empty where unknown."""
    if sys.platform != "linux":
        return []
    found: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state != "Z":
                found.append(int(pid))
    return found


def _tasks() -> int:
    """Tasks alive in the running loop (asyncio), or below trio's root task."""
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:  # no asyncio loop running: trio
        pass
    import trio.lowlevel  # only when running on trio

    count = 0
    root = trio.lowlevel.current_root_task()
    pending = [root] if root is not None else []
    while pending:
        task = pending.pop()
        count += 1
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return count
