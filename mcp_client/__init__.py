"""mcp_client: an MCP client SDK built around a request policy engine.

Every request gets a unique id and progress token, an idle timeout that progress resets, a hard maximum that
nothing extends, a cancellation that matches the transport, and silence for answers that arrive too late.

```python
from mcp_client import Client, TimeoutPolicy, stdio

async with Client(stdio("python", ["server.py"]), timeout=TimeoutPolicy(idle=30, maximum=600)) as client:
    result = await client.call_tool("reindex", {"collection": "docs"}, on_progress=print)
```
"""

from mcp_client._version import __version__
from mcp_client.call import Call
from mcp_client.client import USE_CLIENT_DEFAULT, Client, TimeoutArg, UseClientDefault
from mcp_client.config import ConfigError, GroupConfig, ServerSpec, load_config, parse_policy
from mcp_client.errors import (
    Attempt,
    ConnectError,
    HeaderMismatch,
    IdleTimeout,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MaxTimeout,
    MCPClientError,
    MethodNotFound,
    MissingClientCapability,
    ParseError,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    ResourceNotFound,
    ServerError,
    SessionExpired,
    StructuredOutputError,
    ToolError,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_client.events import (
    CancelMethod,
    CancelSent,
    Event,
    IdleTimerReset,
    LateMessage,
    ProgressAccepted,
    ProgressRejected,
    ProtocolViolation,
    Relistened,
    RequestFinished,
    RequestSent,
    RetryScheduled,
    ServerLog,
    ServerNotification,
    ServerRestarted,
    ServerStderr,
    Slow,
    TimedOut,
    TransportFailure,
)
from mcp_client.group import ClientGroup, ServerStatus
from mcp_client.handlers import ElicitationHandler, RootsHandler, SamplingHandler
from mcp_client.logs import LogLevel
from mcp_client.policy import DEFAULT_TIMEOUT, Progress, TimeoutKind, TimeoutPolicy
from mcp_client.policy.restart import RestartPolicy
from mcp_client.policy.retry import DEFAULT_RETRY, RetryBudget, RetryPolicy
from mcp_client.progress import ProgressCallback
from mcp_client.registry import PartialRetry, PartialTimeout, PolicyLayer, PolicyRegistry
from mcp_client.subscriptions import (
    DEFAULT_LISTEN_POLICY,
    Change,
    ListenPolicy,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    Subscription,
    SubscriptionError,
    SubscriptionFilter,
    SubscriptionLost,
    ToolsListChanged,
)
from mcp_client.transports.base import Transport
from mcp_client.transports.http import HttpTransport, http
from mcp_client.transports.memory import MemoryTransport, memory
from mcp_client.transports.stdio import StdioTransport, stdio

__all__ = [
    "ToolsListChanged",
    "SubscriptionLost",
    "SubscriptionFilter",
    "SubscriptionError",
    "Subscription",
    "ResourcesListChanged",
    "ResourceUpdated",
    "Relistened",
    "PromptsListChanged",
    "ListenPolicy",
    "DEFAULT_LISTEN_POLICY",
    "Change",
    "Attempt",
    "Call",
    "CancelMethod",
    "CancelSent",
    "Client",
    "ClientGroup",
    "ConfigError",
    "ConnectError",
    "DEFAULT_RETRY",
    "DEFAULT_TIMEOUT",
    "ElicitationHandler",
    "Event",
    "GroupConfig",
    "HeaderMismatch",
    "HttpTransport",
    "IdleTimeout",
    "IdleTimerReset",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LateMessage",
    "LogLevel",
    "MCPClientError",
    "MaxTimeout",
    "MemoryTransport",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "PartialRetry",
    "PartialTimeout",
    "PolicyLayer",
    "PolicyRegistry",
    "Progress",
    "ProgressAccepted",
    "ProgressCallback",
    "ProgressRejected",
    "ProtocolError",
    "ProtocolViolation",
    "RequestCancelled",
    "RequestFinished",
    "RequestSent",
    "RequestTimeout",
    "ResourceNotFound",
    "RestartPolicy",
    "RetryBudget",
    "RetryPolicy",
    "RetryScheduled",
    "RootsHandler",
    "SamplingHandler",
    "ServerError",
    "ServerLog",
    "ServerNotification",
    "ServerRestarted",
    "ServerSpec",
    "ServerStatus",
    "ServerStderr",
    "SessionExpired",
    "Slow",
    "StdioTransport",
    "StructuredOutputError",
    "TimedOut",
    "TimeoutArg",
    "TimeoutKind",
    "TimeoutPolicy",
    "ToolError",
    "Transport",
    "TransportError",
    "TransportFailure",
    "USE_CLIENT_DEFAULT",
    "UnsupportedProtocolVersion",
    "UseClientDefault",
    "http",
    "load_config",
    "memory",
    "parse_policy",
    "stdio",
    "__version__",
]
