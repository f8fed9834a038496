"""The worker side's entry point: :class:`MCPPlugin`, a Temporal plugin for ``Client.connect`` or a ``Worker``.

It adds the MCP activities of every named server to each worker built from the client, opens the worker's
connections with the worker and closes them at its shutdown (``run_context``), installs the pydantic payload
converter so results travel as the SDK's ``mcp_types`` models, and lets what workflows import (the workflow side's
modules, the policies, ``mcp_types``) through the workflow sandbox. Touches ``temporalio.plugin``/``converter``/
``worker``, the configuration loader and this package's activities and connections.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import DataConverter, DefaultPayloadConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from mcp_client.client.client import Client
from mcp_client.config.load import load_config
from mcp_client.integrations.temporal.activities import MCPActivities
from mcp_client.integrations.temporal.connections import Connections

__all__ = ["MCPPlugin"]

_PASSED_THROUGH = (
    "mcp_types",
    "pydantic",
    "mcp_client._lazy",
    "mcp_client._moved",
    "mcp_client._version",
    "mcp_client.policy",
    "mcp_client.integrations.temporal.wire",
    "mcp_client.integrations.temporal.workflow",
    "mcp_client.integrations._tools",
    "mcp_client.integrations.pydantic_ai",
)
"""What a workflow imports to build an ``MCPWorkflowClient`` and its policies, and nothing else: the client, its
transports and anyio are not let through (a workflow never runs them). A pydantic-ai agent's workflow imports our
``MCPToolset``, whose module loads the client (and so a per-process token made at import, which the sandbox refuses
to make inside a workflow): it is let through whole, as loaded by the worker, and never runs the client there.
``mcp_client`` itself and the packages on the way are re-imported inside the sandbox; they only load names lazily,
and ``_moved``'s finder is installed once."""


class MCPPlugin(SimplePlugin):
    """MCP servers for Temporal workflows: one shared :class:`~mcp_client.Client` per server per worker.

    ```python
    plugin = MCPPlugin({"builds": lambda: Client(http("https://ci.example/mcp"))})
    temporal = await TemporalClient.connect("localhost:7233", plugins=[plugin])
    worker = Worker(temporal, task_queue="agents", workflows=[BuildWorkflow])   # the plugin adds its activities
    ```

    Args:
        clients: Server name to a factory of an (unconnected) ``Client``. The names are what workflows use
            (:class:`~mcp_client.integrations.temporal.MCPWorkflowClient`); URLs, commands and credentials stay
            in the factories, on the worker.
        heartbeat_throttle: The longest a worker holds back a heartbeat after the first of an attempt (its
            ``max_heartbeat_throttle_interval``, lowered to this unless set lower already), so that progress beats
            reach Temporal promptly.
        per_workflow: Give each workflow (by workflow id) a client of its own from the factory, started for its
            activities and closed when none runs, instead of one client per server shared by every workflow of the
            worker (its cache context, tool pins, retry budget and slots). For hosts whose workflows act for users
            who must be kept apart; it costs a connection per workflow.
    """

    def __init__(
        self,
        clients: Mapping[str, Callable[[], Client]],
        *,
        heartbeat_throttle: timedelta = timedelta(seconds=1),
        per_workflow: bool = False,
    ) -> None:
        if heartbeat_throttle <= timedelta(0):
            raise ValueError(f"heartbeat_throttle must be positive, got {heartbeat_throttle}")
        self.heartbeat_throttle = heartbeat_throttle
        for name in clients:
            if not isinstance(name, str) or not name or "/" in name:
                raise ValueError(f"an MCP server name must be a non-empty string without '/', got {name!r}")
        self.connections = Connections(clients, per_workflow=per_workflow)
        activities = MCPActivities(self.connections)
        super().__init__(
            "mcp_client.MCPPlugin",
            data_converter=_with_pydantic,
            activities=activities.definitions(),
            workflow_runner=_with_passthrough,
            run_context=self.connections.running,
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """Add the activities and the sandbox passthrough (see ``SimplePlugin``) and bound the heartbeat throttle."""
        config = super().configure_worker(config)
        current = config.get("max_heartbeat_throttle_interval")
        if current is None or current > self.heartbeat_throttle:
            config["max_heartbeat_throttle_interval"] = self.heartbeat_throttle
        return config

    @classmethod
    def from_config(cls, source: str | os.PathLike[str] | Mapping[str, Any]) -> MCPPlugin:
        """A plugin for every server of an ``mcp.json`` (see :func:`~mcp_client.load_config`), each with its rules.

        Raises:
            ConfigError: The configuration is not valid (every problem listed).
        """
        specs = load_config(source).specs()
        return cls(
            {
                name: (lambda spec=spec: Client(spec.transport, policies=spec.policies))  # type: ignore[misc]
                for name, spec in specs.items()
            }
        )


def _with_pydantic(existing: DataConverter | None) -> DataConverter:
    """The client's converter with pydantic payloads (mcp_types models), unless it already has its own payloads."""
    if existing is None:
        return DataConverter(payload_converter_class=PydanticPayloadConverter)
    if existing.payload_converter_class is DefaultPayloadConverter:
        return dataclasses.replace(existing, payload_converter_class=PydanticPayloadConverter)
    return existing


def _with_passthrough(runner: WorkflowRunner | None) -> WorkflowRunner:
    """Let the workflow side's modules through the sandbox: a workflow that builds an MCPWorkflowClient imports them."""
    if runner is None:
        raise ValueError("the MCP plugin needs the worker's workflow runner")
    if isinstance(runner, SandboxedWorkflowRunner):
        restrictions = runner.restrictions.with_passthrough_modules(*_PASSED_THROUGH)
        return dataclasses.replace(runner, restrictions=restrictions)
    return runner
