"""Task-backed tool calls against real servers nobody here wrote, in both eras.

* 2026-07-28: a FastMCP server on ``fastmcp-tasks==4.1.4`` (SEP-2663, the ``io.modelcontextprotocol/tasks``
  extension), in a virtualenv of its own under ``.venv-peers/`` (built on first use from
  ``servers/fastmcp-tasks-requirements.txt``), over stdio and Streamable HTTP.
* 2025-11-25: ``@modelcontextprotocol/server-everything``'s ``simulate-research-query`` (experimental core tasks,
  ``execution.taskSupport: "required"``, an ``elicitation/create`` mid-task when the query is ambiguous), over
  stdio and Streamable HTTP.

Each: a task completes through polling; a maximum shorter than the task ends in ``MaxTimeout`` and the server then
reports the task cancelled; ``call.cancel()`` does the same; over HTTP a connection cut in the middle of a poll
costs nothing; and nothing but ``tasks/cancel`` is ever sent to cancel a task (no ``notifications/cancelled``, no
stream closed as a cancellation: no ``CancelSent`` event). Real processes, real clocks, wide margins.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types
import pytest

from mcp_client import (
    CancelSent,
    Client,
    Event,
    MaxTimeout,
    RequestCancelled,
    RequestSent,
    TaskCancelSent,
    TaskCreated,
    TaskStatus,
    TimeoutPolicy,
    TransportFailure,
    http,
    stdio,
)
from tests.interop.conftest import EVENTS_ENV, free_port, serve_http
from tests.interop.proxy import CuttingProxy

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=20, maximum=60, connect=30)
PROBE = 30.0
"""FastMCP takes seconds to import on a cold machine: the discover probe must not take that for a legacy server."""


def _text(result: mcp_types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


def _task_id(events: list[Event]) -> str:
    (created,) = [e for e in events if isinstance(e, TaskCreated)]
    return created.task_id


def _cancelled_only_by_tasks_cancel(events: list[Event], task_id: str) -> None:
    assert not any(isinstance(e, CancelSent) for e in events)  # no notifications/cancelled, no stream-close cancel
    assert [(e.task_id, e.acknowledged) for e in events if isinstance(e, TaskCancelSent)] == [(task_id, True)]
    cancels = [e for e in events if isinstance(e, RequestSent) and e.method == "tasks/cancel"]
    assert len(cancels) == 1


async def _await_status(client: Client, task_id: str, status: str) -> None:
    with anyio.fail_after(10):
        while (await client.get_task(task_id)).status != status:
            await anyio.sleep(0.1)


async def _await_line(path: Path, line: str) -> None:
    with anyio.fail_after(10):
        while line not in path.read_text().splitlines():
            await anyio.sleep(0.05)


async def _elicit_colour(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    return mcp_types.ElicitResult(action="accept", content={"colour": "teal"})


async def _elicit_interpretation(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    return mcp_types.ElicitResult(action="accept", content={"interpretation": "historical"})


# -- fastmcp-tasks, 2026-07-28 --------------------------------------------------------------------------------------


def _fastmcp_stdio(command: list[str], events_file: Path, events: list[Event], **options: object) -> Client:
    transport = stdio(command[0], command[1:], env={EVENTS_ENV: str(events_file)})
    return Client(transport, timeout=POLICY, on_event=events.append, probe_timeout=PROBE, **options)  # type: ignore[arg-type]


async def test_fastmcp_tasks_completes_through_polling_and_answers_input(
    fastmcp_tasks_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    async with _fastmcp_stdio(fastmcp_tasks_command, events_file, events, elicitation=_elicit_colour) as client:
        assert client.protocol_version == "2026-07-28"
        added = await client.call_tool("slow_add", {"a": 2, "b": 40, "seconds": 0.5, "tag": "add"})
        assert added.structured_content == {"result": 42}
        coloured = await client.call_tool("ask_colour", {"tag": "colour"})
        assert _text(coloured) == "colour: teal"
    assert events_file.read_text().splitlines() == ["add completed", "colour completed"]
    statuses = [e.status for e in events if isinstance(e, TaskStatus)]
    assert statuses == ["working", "completed", "working", "input_required", "completed"]
    updates = [e for e in events if isinstance(e, RequestSent) and e.method == "tasks/update"]
    assert len(updates) == 1  # the input key is repeated by every poll until the worker picks the answer up
    assert not any(isinstance(e, TaskCancelSent) for e in events)


async def test_fastmcp_tasks_maximum_cancels_the_task_on_the_server(
    fastmcp_tasks_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    async with _fastmcp_stdio(fastmcp_tasks_command, events_file, events) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("slow_add", {"a": 1, "b": 1, "seconds": 30, "tag": "max"}, timeout=1.5)
        assert anyio.current_time() - start < 1.6
        task_id = _task_id(events)
        await _await_status(client, task_id, "cancelled")
        await _await_line(events_file, "max cancelled")
    _cancelled_only_by_tasks_cancel(events, task_id)


async def test_fastmcp_tasks_call_cancel_cancels_the_task_on_the_server(
    fastmcp_tasks_command: list[str], events_file: Path
) -> None:
    events: list[Event] = []
    async with _fastmcp_stdio(fastmcp_tasks_command, events_file, events) as client:
        async with client.tool_call("slow_add", {"a": 1, "b": 1, "seconds": 30, "tag": "stop"}) as call:
            with anyio.fail_after(10):
                while call.task_id is None:
                    await anyio.sleep(0.02)
            await anyio.sleep(0.3)
            call.cancel("user pressed stop")
            with pytest.raises(RequestCancelled):
                await call.result()
        await _await_status(client, call.task_id, "cancelled")
        await _await_line(events_file, "stop cancelled")
    _cancelled_only_by_tasks_cancel(events, call.task_id)


@pytest.fixture
def fastmcp_tasks_url(fastmcp_tasks_command: list[str], events_file: Path) -> Iterator[str]:
    port = free_port()
    env = dict(os.environ, **{EVENTS_ENV: str(events_file)})
    yield from serve_http([*fastmcp_tasks_command, "--http", "--port", str(port)], port, env, "fastmcp-tasks")


async def test_fastmcp_tasks_over_http_survives_a_cut_connection(fastmcp_tasks_url: str, events_file: Path) -> None:
    events: list[Event] = []
    upstream = int(fastmcp_tasks_url.rsplit(":", 1)[1].split("/")[0])
    async with CuttingProxy(upstream).serving() as proxy:
        proxy.drop(b'"tasks/get"', times=2)
        url = f"http://127.0.0.1:{proxy.port}/mcp"
        async with Client(http(url), timeout=POLICY, on_event=events.append, retry=None, probe_timeout=PROBE) as client:
            added = await client.call_tool("slow_add", {"a": 20, "b": 22, "seconds": 1.0, "tag": "cut"})
    assert added.structured_content == {"result": 42}
    assert proxy.cuts == 2
    # Each cut comes after the poll was written and before any answer to it could pass the proxy: each reaches
    # the poller as a failure, and the poller goes on.
    assert sum(isinstance(e, TransportFailure) for e in events) == 2
    assert events_file.read_text().splitlines() == ["cut completed"]


async def test_fastmcp_tasks_over_http_maximum_cancels_by_tasks_cancel_only(
    fastmcp_tasks_url: str, events_file: Path
) -> None:
    events: list[Event] = []
    async with Client(http(fastmcp_tasks_url), timeout=POLICY, on_event=events.append, probe_timeout=PROBE) as client:
        with pytest.raises(MaxTimeout):
            await client.call_tool("slow_add", {"a": 1, "b": 1, "seconds": 30, "tag": "http-max"}, timeout=1.5)
        task_id = _task_id(events)
        await _await_status(client, task_id, "cancelled")
        await _await_line(events_file, "http-max cancelled")
    _cancelled_only_by_tasks_cancel(events, task_id)


# -- server-everything, 2025-11-25 ----------------------------------------------------------------------------------


def _everything_stdio(command: list[str], events: list[Event], **options: object) -> Client:
    return Client(stdio(command[0], command[1:]), timeout=POLICY, on_event=events.append, **options)  # type: ignore[arg-type]


async def test_research_query_completes_through_polling_with_a_mid_task_elicitation(
    server_everything_command: list[str],
) -> None:
    events: list[Event] = []
    async with _everything_stdio(server_everything_command, events, elicitation=_elicit_interpretation) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("simulate-research-query", {"topic": "python", "ambiguous": True})
    assert "Clarification**: historical" in _text(result)
    statuses = [e.status for e in events if isinstance(e, TaskStatus)]
    assert statuses[0] == "working"
    assert "input_required" in statuses
    sent = [e.method for e in events if isinstance(e, RequestSent)]
    assert "tasks/get" in sent
    assert "tasks/result" in sent
    assert "tasks/cancel" not in sent


async def test_research_query_maximum_cancels_the_task(server_everything_command: list[str]) -> None:
    events: list[Event] = []
    async with _everything_stdio(server_everything_command, events) as client:
        with pytest.raises(MaxTimeout):
            await client.call_tool("simulate-research-query", {"topic": "tasks"}, timeout=1.5)
        task_id = _task_id(events)
        await _await_status(client, task_id, "cancelled")
    _cancelled_only_by_tasks_cancel(events, task_id)


async def test_research_query_call_cancel_cancels_the_task(server_everything_command: list[str]) -> None:
    events: list[Event] = []
    async with _everything_stdio(server_everything_command, events) as client:
        async with client.tool_call("simulate-research-query", {"topic": "tasks"}) as call:
            with anyio.fail_after(10):
                while call.task_id is None:
                    await anyio.sleep(0.02)
            call.cancel("user pressed stop")
            with pytest.raises(RequestCancelled):
                await call.result()
        await _await_status(client, call.task_id, "cancelled")
    _cancelled_only_by_tasks_cancel(events, call.task_id)


@pytest.fixture
def everything_url(server_everything_command: list[str]) -> Iterator[str]:
    port = free_port()
    command = [*server_everything_command[:-1], "streamableHttp"]
    yield from serve_http(command, port, dict(os.environ, PORT=str(port)), "server-everything")


async def test_research_query_over_http_survives_a_cut_connection(everything_url: str) -> None:
    events: list[Event] = []
    upstream = int(everything_url.rsplit(":", 1)[1].split("/")[0])
    async with CuttingProxy(upstream).serving() as proxy:
        proxy.drop(b'"tasks/get"', times=2)
        url = f"http://127.0.0.1:{proxy.port}/mcp"
        async with Client(http(url), timeout=POLICY, on_event=events.append, retry=None) as client:
            result = await client.call_tool("simulate-research-query", {"topic": "resilience"})
            assert "Research Report: resilience" in _text(result)
            task_id = _task_id(events)
            assert (await client.get_task(task_id)).status == "completed"
    assert proxy.cuts == 2
    # Each cut comes after the poll was written and before any answer to it could pass the proxy: each reaches
    # the poller as a failure, and the poller goes on.
    assert sum(isinstance(e, TransportFailure) for e in events) == 2
