"""Durable MCP calls on Temporal (the ``temporal`` extra): a worker crash never re-runs a side effect.

* Worker side, :class:`MCPPlugin` (:mod:`.plugin`): one shared client per server per worker, the MCP activities
  (:mod:`.activities`), their heartbeat (:mod:`.heartbeat`) and the mapping of outcomes to Temporal's retries
  (:mod:`.failures`), the connections (:mod:`.connections`).
* Workflow side, :class:`MCPWorkflowClient` (:mod:`.workflow`), deterministic and sandbox-safe; what crosses
  between the two is in :mod:`.wire`.

Names load lazily: a workflow that imports only ``MCPWorkflowClient`` loads neither the client nor its transports.
See docs/temporal.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_client.integrations.temporal.failures import WorkerLost
    from mcp_client.integrations.temporal.plugin import MCPPlugin
    from mcp_client.integrations.temporal.wire import Checkpoint, activity_name
    from mcp_client.integrations.temporal.workflow import MCPWorkflowClient

__all__ = ["Checkpoint", "MCPPlugin", "MCPWorkflowClient", "WorkerLost", "activity_name"]

_LAZY = {
    "Checkpoint": "mcp_client.integrations.temporal.wire",
    "MCPPlugin": "mcp_client.integrations.temporal.plugin",
    "MCPWorkflowClient": "mcp_client.integrations.temporal.workflow",
    "WorkerLost": "mcp_client.integrations.temporal.failures",
    "activity_name": "mcp_client.integrations.temporal.wire",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
