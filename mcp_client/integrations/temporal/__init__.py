"""Durable MCP calls on Temporal (the ``temporal`` extra): a worker crash never re-runs a side effect.

* Worker side, :class:`MCPPlugin` (:mod:`.plugin`): one shared client per server per worker, the MCP activities
  (:mod:`.activities`), their heartbeat (:mod:`.heartbeat`) and the mapping of outcomes to Temporal's retries
  (:mod:`.failures`), the connections (:mod:`.connections`).
* Workflow side, :class:`MCPWorkflowClient` (:mod:`.workflow`), deterministic and sandbox-safe; what crosses
  between the two is in :mod:`.wire`.

Names load lazily: a workflow that imports only ``MCPWorkflowClient`` loads neither the client nor its transports.
See docs/temporal.md.
"""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:
    from mcp_client.integrations.temporal.failures import (
        CheckpointNotRecorded as CheckpointNotRecorded,
        WorkerLost as WorkerLost,
    )
    from mcp_client.integrations.temporal.plugin import MCPPlugin as MCPPlugin
    from mcp_client.integrations.temporal.wire import Checkpoint as Checkpoint, activity_name as activity_name
    from mcp_client.integrations.temporal.workflow import MCPWorkflowClient as MCPWorkflowClient

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
