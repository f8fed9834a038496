"""Importing mcp_client (and its integrations package) imports no agent framework: each comes with its adapter."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcp_client.integrations._tools import ToolSource

FRAMEWORKS = ("pydantic_ai", "langchain_core", "langgraph", "agents", "openai")


def test_importing_mcp_client_imports_no_framework() -> None:
    code = (
        "import sys, mcp_client, mcp_client.integrations, mcp_client.integrations._tools\n"
        f"print(','.join(name for name in {FRAMEWORKS!r} if name in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == ""


def test_importing_an_adapter_imports_its_framework() -> None:
    code = "import sys, mcp_client.integrations.pydantic_ai\nprint('pydantic_ai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "True"


def test_a_source_must_be_a_client_or_a_group() -> None:
    with pytest.raises(TypeError, match="expected a connected Client or ClientGroup, got str"):
        ToolSource("mcp.json")  # type: ignore[arg-type]


def test_the_pydantic_ai_adapter_imports_no_durable_engine() -> None:
    """A host without Temporal or DBOS gets neither from the toolset: each loads only when the host uses it."""
    engines = ("dbos", "temporalio", "mcp_client.integrations.dbos", "mcp_client.integrations.temporal")
    code = (
        "import sys, mcp_client.integrations.pydantic_ai\n"
        f"print(','.join(name for name in {engines!r} if name in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == ""
