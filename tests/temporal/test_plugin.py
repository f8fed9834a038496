"""What ``MCPPlugin`` does to a Temporal client and worker configuration, without a service."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from typing import Any, cast

import pytest
from temporalio.client import ClientConfig
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import DataConverter
from temporalio.worker import WorkerConfig
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from mcp_client import Client, http
from mcp_client.integrations.temporal import MCPPlugin, activity_name


def _plugin() -> MCPPlugin:
    return MCPPlugin({"builds": lambda: Client(http("https://ci.example/mcp"))})


def test_the_worker_gets_the_activities_a_bounded_throttle_and_the_passthrough() -> None:
    config = cast(
        WorkerConfig,
        {
            "activities": [],
            "max_heartbeat_throttle_interval": timedelta(seconds=60),
            "workflow_runner": SandboxedWorkflowRunner(),
        },
    )
    configured = _plugin().configure_worker(config)
    names = sorted(getattr(fn, "__temporal_activity_definition").name for fn in configured["activities"])
    assert names == sorted(
        activity_name("builds", op)
        for op in ("call_tool", "list_tools", "list_prompts", "get_prompt", "list_resources", "read_resource")
    )
    assert configured["max_heartbeat_throttle_interval"] == timedelta(seconds=1)
    runner = configured["workflow_runner"]
    assert isinstance(runner, SandboxedWorkflowRunner)
    passed = set(runner.restrictions.passthrough_modules)
    assert {"mcp_types", "mcp_client.integrations.temporal.workflow", "mcp_client.policy"} <= passed
    # Only what workflows import: not the whole package (its client and transports), not anyio.
    assert not {"mcp_client", "anyio", "mcp_client.integrations", "mcp_client.integrations.temporal"} & passed


def test_a_lower_throttle_of_the_worker_is_kept() -> None:
    config = cast(
        WorkerConfig,
        {"max_heartbeat_throttle_interval": timedelta(milliseconds=200), "workflow_runner": SandboxedWorkflowRunner()},
    )
    assert _plugin().configure_worker(config)["max_heartbeat_throttle_interval"] == timedelta(milliseconds=200)


def test_the_client_gets_pydantic_payloads_and_keeps_its_codec() -> None:
    codec: Any = object()
    existing = DataConverter(payload_codec=codec)
    configured = _plugin().configure_client(cast(ClientConfig, {"data_converter": existing}))
    converter = configured["data_converter"]
    assert converter.payload_converter_class is PydanticPayloadConverter
    assert converter.payload_codec is codec


def test_from_config_builds_a_plugin_per_server_and_bad_names_are_refused() -> None:
    plugin = MCPPlugin.from_config({"mcpServers": {"builds": {"url": "https://ci.example/mcp"}}})
    assert list(plugin.connections.factories) == ["builds"]
    assert isinstance(plugin.connections.factories["builds"](), Client)
    with pytest.raises(ValueError, match="without '/'"):
        MCPPlugin({"a/b": lambda: Client(http("https://ci.example/mcp"))})
    with pytest.raises(ValueError, match="unknown MCP operation"):
        activity_name("builds", "delete_everything")


def test_the_workflow_side_loads_neither_the_client_nor_a_transport() -> None:
    """What a workflow imports stays small and free of I/O: no client, no HTTP stack."""
    probe = (
        "import sys\n"
        "from mcp_client.integrations.temporal import MCPWorkflowClient\n"
        "print(sorted(m for m in ('mcp_client.client', 'httpx2', 'mcp_client.transports.stdio') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
