"""The blocking facade leaves nothing behind and never hangs on its way out (red team of the generated facade).

Each attack runs in a child interpreter of its own, under a bound: the failure it guards against is a process that
never exits (an interpreter waiting forever for the portal of a client nobody closed) or a thread and a server
process that outlive their client. The child prints what it observed as one JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOUND = 25.0
"""Seconds a child may take: a few server starts and closes; a hang is a failure, not a stuck run."""

PRELUDE = """
import gc, json, os, sys, threading, time
from mcp_client import MCPClientError, TimeoutPolicy, stdio
from mcp_client.sync.client import Client, ClientGroup

POLICY = TimeoutPolicy(idle=20, maximum=30, connect=20)

def peer():
    return stdio(sys.executable, ["-m", "mcp_client.testing.peer"])

def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"

def gone(pid, within=10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    return not alive(pid)

def portal_threads():
    return [t.name for t in threading.enumerate() if t.name.startswith("mcp-client")]
"""

pytestmark = pytest.mark.parametrize("backend", ["asyncio", "trio"])


def run_child(body: str, backend: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    script = PRELUDE + f"\nBACKEND = {backend!r}\n" + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=BOUND, env=env, cwd=ROOT
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the child did not exit within {BOUND:g} s; it printed: {exc.stdout!r} {exc.stderr!r}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no report; exit {done.returncode}; stderr: {done.stderr[-2000:]}"
    report = json.loads(lines[-1])
    assert isinstance(report, dict)
    return done, report


def test_an_unclosed_client_does_not_hang_the_interpreter_at_exit(backend: str) -> None:
    """A script that opens a client and ends without closing it exits (the interpreter used to wait forever for
    the client's portal), and its server process does not outlive it."""
    done, report = run_child(
        """
        def main():
            client = Client(peer(), timeout=POLICY, backend=BACKEND).open()
            client.call_tool("echo", {"text": "x"})
            return client.server_process_id
        CLIENT = Client(peer(), timeout=POLICY, backend=BACKEND).open()  # one held by a global, too
        print(json.dumps({"pids": [main(), CLIENT.server_process_id]}), flush=True)
        """,
        backend,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    pids = report["pids"]
    assert isinstance(pids, list)
    for pid in pids:
        assert isinstance(pid, int)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_close_ends_a_call_handle_entered_and_never_left(backend: str) -> None:
    """close() is bounded even while a call handle is still entered (its ``with`` block not left, in another
    thread or never): it used to wait forever for the handle's task in the portal."""
    done, report = run_child(
        """
        client = Client(peer(), timeout=POLICY, backend=BACKEND).open()
        pid = client.server_process_id
        call = client.tool_call("silent")
        call.__enter__()
        started = time.monotonic()
        client.close()
        print(json.dumps({"close": time.monotonic() - started, "gone": gone(pid), "threads": portal_threads()}))
        """,
        backend,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert report["gone"] is True
    assert report["threads"] == []
    close = report["close"]
    assert isinstance(close, float)
    assert close < 15


def test_a_client_collected_on_its_own_event_loop_thread_leaves_nothing(backend: str) -> None:
    """An unclosed client that the garbage collector finds while its own event loop runs (here a progress callback
    collects) is closed: no portal thread, no server process left (the portal used to fail to stop itself from its
    own thread, "cannot join current thread", and leak both for the life of the process)."""
    done, report = run_child(
        """
        gc.disable()
        def start():
            client = Client(peer(), timeout=POLICY, backend=BACKEND).open()
            call = client.tool_call(
                "slow", {"seconds": 1.0, "progress_every": 0.1}, on_progress=lambda p: gc.collect()
            )
            call.__enter__()
            call.detach()
            return client.server_process_id
        pid = start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (portal_threads() or alive(pid)):
            time.sleep(0.1)
        print(json.dumps({"gone": not alive(pid), "threads": portal_threads()}), flush=True)
        """,
        backend,
    )
    assert "cannot join current thread" not in done.stderr
    assert report == {"gone": True, "threads": []}


def test_a_call_handle_kept_past_close_raises_no_portal_error(backend: str) -> None:
    """A handle's ``cancel()`` is "safe after the end" (its async docstring): kept past the client's close it does
    nothing, as the async one does; its blocking methods (``result()`` of an ended call aside) raise the facade's
    own "closed" error, never anyio's "This portal is not running"; its properties still read."""
    _done, report = run_child(
        """
        with Client(peer(), timeout=POLICY, backend=BACKEND) as client:
            call = client.tool_call("echo", {"text": "y"})
            with call:
                call.detach()
                call.result()
        seen = {"done": call.done}
        try:
            call.cancel()
            seen["cancel"] = "ok"
        except BaseException as exc:
            seen["cancel"] = f"{type(exc).__name__}: {exc}"
        try:
            call.handoff()
        except BaseException as exc:
            seen["handoff"] = f"{type(exc).__name__}: {exc}"
        print(json.dumps(seen), flush=True)
        """,
        backend,
    )
    assert report["done"] is True
    assert report["cancel"] == "ok"
    handed = report["handoff"]
    assert isinstance(handed, str)
    assert "portal" not in handed
    assert handed.startswith("RuntimeError: the client is closed")


def test_ctrl_c_during_open_is_raised_at_once_and_leaves_nothing(backend: str) -> None:
    """Ctrl-C while open() waits for a server that never answers raises KeyboardInterrupt at once, as it does
    during a call, and stops the event loop and the process (open() used to block on the connect, uninterruptible
    where a signal does not break a lock wait: Windows, or a signal taken by another thread, until the connect
    timeout)."""
    _done, report = run_child(
        """
        import _thread
        silent = stdio(sys.executable, ["-c", "import time; time.sleep(60)"])
        client = Client(silent, timeout=TimeoutPolicy(idle=20, maximum=30, connect=15), backend=BACKEND)
        threading.Timer(1.0, _thread.interrupt_main).start()
        started = time.monotonic()
        try:
            client.open()
            raised = "nothing"
        except BaseException as exc:
            raised = type(exc).__name__
        took = time.monotonic() - started
        time.sleep(0.5)
        print(json.dumps({"raised": raised, "took": took, "threads": portal_threads()}), flush=True)
        """,
        backend,
    )
    assert report["raised"] == "KeyboardInterrupt"
    took = report["took"]
    assert isinstance(took, float)
    assert took < 5
    assert report["threads"] == []


def test_leaving_a_handles_block_after_the_client_closed_raises_nothing(backend: str) -> None:
    """A ``with`` block of a call or a subscription left after the client closed (another thread closed it, say)
    has nothing left to end: it raises nothing, and so never hides the error that ended the block, where it used
    to raise the portal's "This portal is not running" (or the facade's "closed") from ``__exit__``."""
    _done, report = run_child(
        """
        seen = {}
        client = Client(peer(), timeout=POLICY, backend=BACKEND).open()
        call = client.tool_call("silent")
        call.__enter__()
        sub = client.listen()
        sub.__enter__()
        client.close()
        for name, handle in (("call", call), ("subscription", sub)):
            try:
                handle.__exit__(None, None, None)
                seen[name] = "ok"
            except BaseException as exc:
                seen[name] = f"{type(exc).__name__}: {exc}"
        seen["done"] = call.done
        print(json.dumps(seen), flush=True)
        """,
        backend,
    )
    assert report == {"call": "ok", "subscription": "ok", "done": True}


def test_two_threads_opening_one_client_leave_one_connection_that_works(backend: str) -> None:
    """Two threads calling open() at once: one connects, the other is refused, and the refusal does not stop the
    connection the first one made (nor start a second server)."""
    _done, report = run_child(
        """
        client = Client(peer(), timeout=POLICY, backend=BACKEND)
        barrier = threading.Barrier(2)
        outcomes = []
        def go():
            barrier.wait()
            try:
                client.open()
                outcomes.append("opened")
            except RuntimeError as exc:
                outcomes.append("refused")
        threads = [threading.Thread(target=go) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        seen = {"outcomes": sorted(outcomes), "threads": len(portal_threads())}
        try:
            seen["echo"] = client.call_tool("echo", {"text": "x"}).content[0].text
        except BaseException as exc:
            seen["echo"] = f"{type(exc).__name__}: {exc}"
        client.close()
        seen["after"] = portal_threads()
        print(json.dumps(seen), flush=True)
        """,
        backend,
    )
    assert report == {"outcomes": ["opened", "refused"], "threads": 1, "echo": "x", "after": []}


def test_the_result_of_an_ended_call_is_still_read_after_close(backend: str) -> None:
    """The async handle's ``await call.result()`` returns the result of a call that ended, before or after its
    client closed; so does the blocking one (it raised "the client is closed" once the loop stopped)."""
    _done, report = run_child(
        """
        with Client(peer(), timeout=POLICY, backend=BACKEND) as client:
            call = client.tool_call("echo", {"text": "kept"})
            with call:
                call.detach()
                call.result()
        try:
            seen = {"result": call.result().content[0].text}
        except BaseException as exc:
            seen = {"result": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(seen), flush=True)
        """,
        backend,
    )
    assert report == {"result": "kept"}
