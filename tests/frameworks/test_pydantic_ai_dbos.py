"""A pydantic-ai agent under pydantic-ai's DBOS mode (``DBOSDurability``) with :class:`MCPToolset` over a Client:
each tool call is a DBOS step that records its checkpoint before the request leaves, on a real DBOS (its default
SQLite system database) and the mcp 2.3.0 server, which outlives the application processes; the process is killed
with SIGKILL in the middle of a call, DBOS recovers the workflow in a new one, and the server counts the runs."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from tests.temporal.conftest import EVENTS_ENV
from tests.temporal.observe import lines, new_tag, until

APP = Path(__file__).resolve().parent / "pydantic_ai_dbos_app.py"
PLAIN_SERVER = Path(__file__).resolve().parents[1] / "temporal" / "servers" / "plain_server.py"

pytestmark = pytest.mark.anyio


class App:
    """The DBOS application (``pydantic_ai_dbos_app.py``) in a folder of its own, one workflow id."""

    def __init__(self, folder: Path, plain_url: str, events_path: Path, tasks_url: str | None = None) -> None:
        self.folder = folder
        self.plain_url = plain_url
        self.env = {**os.environ, EVENTS_ENV: str(events_path)}
        if tasks_url is not None:
            self.env["MCP_TEST_TASKS_URL"] = tasks_url
        self.workflow_id = f"agent-{uuid.uuid4().hex}"

    def command(self, mode: str, prompts: list[str]) -> list[str]:
        return [sys.executable, str(APP), mode, self.plain_url, self.workflow_id, *prompts]

    def run(self, mode: str, prompts: list[str]) -> list[dict[str, Any]]:
        """Run to the end (``run``, or ``recover`` with as many prompts as were started); a report per workflow."""
        done = subprocess.run(
            self.command(mode, prompts), cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=60
        )
        reports = [line for line in done.stdout.splitlines() if line.startswith("[")]
        assert done.returncode == 0, done.stderr[-3000:]
        assert reports, done.stderr[-3000:]
        report: list[dict[str, Any]] = json.loads(reports[-1])
        return report

    def start(self, prompts: list[str]) -> subprocess.Popen[str]:
        """Start the workflows; the process runs them until it is killed."""
        return subprocess.Popen(
            self.command("start", prompts),
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )


def _stored_text(database: Path) -> str:
    """Every text of DBOS's system database, with its base64 values (pickles) decoded as well."""
    texts: list[str] = []
    with contextlib.closing(sqlite3.connect(database)) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f"SELECT * FROM {table}"):
                for value in row:
                    if isinstance(value, str):
                        texts.append(value)
                        with contextlib.suppress(binascii.Error, ValueError):
                            texts.append(base64.b64decode(value, validate=True).decode("latin-1"))
    return "\n".join(texts)


def _call_step(report: dict[str, Any]) -> int:
    """The id of the workflow's one MCP call step; its checkpoint is among the workflow's events."""
    (step,) = [step for step in report["steps"] if step["name"] == "mcp_client.call_tool"]
    step_id: int = step["id"]
    assert report["events"][f"mcp_client.call.{step_id}"] == {"phase": "written"}
    return step_id


async def test_the_agents_tool_call_is_a_dbos_step(tmp_path: Path, plain_url: str, events_path: Path) -> None:
    tag = new_tag()
    (report,) = App(tmp_path, plain_url, events_path).run("run", [f"count_idempotent 0 {tag}"])
    assert report["output"] == f"The tool said: {{'result': '{tag} done'}}"
    assert [step["name"] for step in report["steps"]] == [
        "counter__model.request",
        "mcp_client.call_tool",
        "counter__model.request",
    ]
    _call_step(report)
    assert lines(events_path, tag) == ["started", "completed"]
    # DBOS's database (the workflow's input, steps and events, their pickled values decoded) never names the
    # server's URL.
    stored = _stored_text(tmp_path / "mcp_client_agent.sqlite")
    assert f"{tag} done" in stored  # the step's result is there, decoded
    assert plain_url.split("//", 1)[1] not in stored


async def test_a_process_killed_during_the_agents_calls_runs_no_tool_twice(
    tmp_path: Path, plain_url: str, tasks_url: str, events_path: Path
) -> None:
    """Three runs in one process, killed while their calls are on the servers: after DBOS recovers them, the tool
    that is not safe to repeat ran once (the model reads that it may have run), the idempotent one was called
    again, and the task was resumed: it ran once and the run has its result."""
    from dbos import DBOSClient

    unsafe, safe, task = new_tag(), new_tag(), new_tag()
    app = App(tmp_path, plain_url, events_path, tasks_url)
    prompts = [f"count 3 {unsafe}", f"count_idempotent 3 {safe}", f"slow_task 3 {task}"]
    process = app.start(prompts)
    try:
        await until(
            lambda: all("started" in lines(events_path, tag) for tag in (unsafe, safe, task)),
            "every step's request reached its server",
            30,
        )
        dbos = DBOSClient(system_database_url=f"sqlite:///{tmp_path / 'mcp_client_agent.sqlite'}")
        try:

            async def task_recorded() -> bool:
                # The call is the workflow's second step (after the first model request).
                checkpoint = await dbos.get_event_async(f"{app.workflow_id}-2", "mcp_client.call.2", 0)
                return isinstance(checkpoint, dict) and checkpoint.get("phase") == "task"

            await until(task_recorded, "the task's reference is the step's checkpoint", 30)
        finally:
            dbos.destroy()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    refused, repeated, resumed = app.run("recover", prompts)
    _call_step(refused)
    assert lines(events_path, unsafe).count("started") == 1  # never sent twice
    assert refused["output"].startswith("The tool said: ")
    assert "may have run" in refused["output"]
    _call_step(repeated)
    assert lines(events_path, safe).count("started") == 2  # safe to repeat: called again
    assert lines(events_path, safe)[-1] == "completed"
    assert repeated["output"] == f"The tool said: {{'result': '{safe} done'}}"
    assert "mcp_client.call_tool" in [step["name"] for step in resumed["steps"]]
    assert lines(events_path, task) == ["started", "completed"]  # resumed: ran once, to its end
    assert resumed["output"] == f"The tool said: {{'result': '{task} done'}}"


async def test_cancelling_the_dbos_workflow_cancels_the_call_on_the_server(
    tmp_path: Path, plain_url: str, events_path: Path
) -> None:
    from dbos import DBOSClient

    tag = new_tag()
    app = App(tmp_path, plain_url, events_path)
    process = app.start([f"count 30 {tag}"])
    try:
        await until(lambda: "started" in lines(events_path, tag), "the step's request reached the server", 30)
        dbos = DBOSClient(system_database_url=f"sqlite:///{tmp_path / 'mcp_client_agent.sqlite'}")
        try:
            await dbos.cancel_workflow_async(f"{app.workflow_id}-0")
        finally:
            dbos.destroy()
        await until(lambda: "cancelled" in lines(events_path, tag), "the call was cancelled on the server", 30)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert "completed" not in lines(events_path, tag)


@pytest.mark.parametrize("tool", ["count", "count_idempotent"])
async def test_a_step_run_again_after_a_loss_never_says_the_tool_did_not_run(
    tmp_path: Path, events_path: Path, tool: str
) -> None:
    """A call step whose earlier run may have sent its request (its checkpoint says ``written``) runs again while
    the server is gone: whatever fails now (the listing it reads the tool's annotations from, or the call made
    again), the tool may have run, and the error says so, never "it did not run, so it is safe to try again"."""
    from dbos import DBOS, SetWorkflowID

    from mcp_client import Client, MCPClientError, TimeoutPolicy, http
    from mcp_client.integrations.dbos import EVENT_PREFIX, call_tool
    from tests.interop.conftest import free_port, serve_http

    port = free_port()
    server = serve_http(
        [sys.executable, str(PLAIN_SERVER), "--port", str(port)], port, {**os.environ}, "the plain MCP server"
    )
    assert isinstance(server, Generator)  # closed to stop the server
    url = next(server)
    client = Client(http(url), timeout=TimeoutPolicy(idle=10, maximum=10, connect=5), probe_timeout=10)

    @DBOS.workflow(name=f"lost-{tool}")
    async def run_again() -> str:
        # What a run killed during the call step (its second step) left: the request may have been sent.
        await DBOS.set_event_async(f"{EVENT_PREFIX}2", {"phase": "written"})
        try:
            await call_tool(client, tool, {"seconds": 0, "tag": new_tag()})
        except MCPClientError as exc:
            return exc.for_model
        return "the call succeeded"

    DBOS(config={"name": "lost_step", "system_database_url": f"sqlite:///{tmp_path / 'lost_step.sqlite'}"})
    try:
        async with client:
            DBOS.launch()
            server.close()  # the server goes away before the step runs again
            with SetWorkflowID(f"lost-{uuid.uuid4().hex}"):
                text = await run_again()
    finally:
        DBOS.destroy()
    assert "may have run" in text
    assert "did not run" not in text


async def test_the_maximum_passing_inside_a_call_step_is_its_typed_outcome(
    tmp_path: Path, plain_url: str, events_path: Path
) -> None:
    """A call that runs past its maximum inside the step ends with ``MaxTimeout`` ("may have run", the server told
    to stop): the step's recorded outcome, the same typed error when DBOS reads it back, never an exception group."""
    from dbos import DBOS, SetWorkflowID

    from mcp_client import Client, MaxTimeout, MCPClientError, TimeoutPolicy, http
    from mcp_client.integrations.dbos import call_tool

    tag = new_tag()
    client = Client(http(plain_url), timeout=TimeoutPolicy(idle=10, maximum=1, connect=10), probe_timeout=10)

    @DBOS.workflow(name="past-the-maximum")
    async def past_the_maximum() -> str:
        try:
            await call_tool(client, "count", {"seconds": 5, "tag": tag})
        except MCPClientError as exc:
            return exc.for_model
        return "the call succeeded"

    workflow_id = f"maximum-{uuid.uuid4().hex}"
    DBOS(config={"name": "past_maximum", "system_database_url": f"sqlite:///{tmp_path / 'past_maximum.sqlite'}"})
    try:
        async with client:
            DBOS.launch()
            with SetWorkflowID(workflow_id):
                text = await past_the_maximum()
            (step,) = await DBOS.list_workflow_steps_async(workflow_id)
    finally:
        DBOS.destroy()
    assert "did not finish within its time limit of 1 s" in text
    assert "may have run" in text
    assert isinstance(step["error"], MaxTimeout)  # read back from DBOS's record: the typed error
    assert step["error"].may_have_run is True
    await until(lambda: "cancelled" in lines(events_path, tag), "the server was told to stop", 20)
    assert lines(events_path, tag).count("started") == 1
