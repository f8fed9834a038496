"""mcp_client: an MCP client SDK built around a request policy engine.

Every request gets a unique id and progress token, an idle timeout that progress resets, a hard maximum that
nothing extends, a cancellation that matches the transport, and silence for answers that arrive too late.

```python
from mcp_client import Client, TimeoutPolicy, stdio

async with Client(stdio("python", ["server.py"]), timeout=TimeoutPolicy(idle=30, maximum=600)) as client:
    result = await client.call_tool("reindex", {"collection": "docs"}, on_progress=print)
```

Names load with their modules when first used (``from mcp_client import Client`` loads the client, the models it
parses with and its transports' common parts; ``mcp_client.http`` loads the HTTP stack): ``import mcp_client``
alone costs next to nothing.
"""

from typing import TYPE_CHECKING, Any

from mcp_client._version import __version__

if TYPE_CHECKING:
    from mcp_client.cache import CacheMode, ResultCache
    from mcp_client.cache_store import CacheEntry, CacheKey, CacheStore, MemoryCacheStore
    from mcp_client.call import Call
    from mcp_client.client import USE_CLIENT_DEFAULT, Client, TimeoutArg, UseClientDefault
    from mcp_client.config import ConfigError, GroupConfig, ServerSpec, load_config, parse_policy
    from mcp_client.config_env import AllowedEnvironment
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
        TaskFailed,
        TaskNotFound,
        ToolChanged,
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
        SlotWaited,
        Slow,
        TaskCancelSent,
        TaskCreated,
        TaskStatus,
        TimedOut,
        ToolDefinitionChanged,
        TransportFailure,
    )
    from mcp_client.group import ClientGroup, ServerStatus
    from mcp_client.handlers import ElicitationHandler, RootsHandler, SamplingHandler
    from mcp_client.logs import LogLevel
    from mcp_client.policy import DEFAULT_TIMEOUT, Progress, TimeoutKind, TimeoutPolicy
    from mcp_client.policy.restart import RestartPolicy
    from mcp_client.policy.retry import DEFAULT_RETRY, RetryBudget, RetryPolicy
    from mcp_client.policy.tasks import PollPolicy
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
    from mcp_client.tasks import Task, TaskPolicy
    from mcp_client.tasks.reference import TaskReference
    from mcp_client.tool_pins import ToolPins
    from mcp_client.transports.base import Transport
    from mcp_client.transports.http import HttpTransport, http
    from mcp_client.transports.memory import MemoryTransport, memory
    from mcp_client.transports.sse import SseTransport, sse
    from mcp_client.transports.stdio import StdioTransport, stdio

__all__ = [
    "AllowedEnvironment",
    "Attempt",
    "CacheEntry",
    "CacheKey",
    "CacheMode",
    "CacheStore",
    "Call",
    "CancelMethod",
    "CancelSent",
    "Change",
    "Client",
    "ClientGroup",
    "ConfigError",
    "ConnectError",
    "DEFAULT_LISTEN_POLICY",
    "DEFAULT_RETRY",
    "DEFAULT_TIMEOUT",
    "ElicitationHandler",
    "Event",
    "GroupConfig",
    "HeaderMismatch",
    "HttpTransport",
    "SseTransport",
    "IdleTimeout",
    "IdleTimerReset",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LateMessage",
    "ListenPolicy",
    "LogLevel",
    "MCPClientError",
    "MaxTimeout",
    "MemoryCacheStore",
    "MemoryTransport",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "PartialRetry",
    "PartialTimeout",
    "PolicyLayer",
    "PolicyRegistry",
    "PollPolicy",
    "Progress",
    "ProgressAccepted",
    "ProgressCallback",
    "ProgressRejected",
    "PromptsListChanged",
    "ProtocolError",
    "ProtocolViolation",
    "Relistened",
    "RequestCancelled",
    "RequestFinished",
    "RequestSent",
    "RequestTimeout",
    "ResourceNotFound",
    "ResourceUpdated",
    "ResourcesListChanged",
    "RestartPolicy",
    "ResultCache",
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
    "SlotWaited",
    "Slow",
    "StdioTransport",
    "StructuredOutputError",
    "Task",
    "TaskCancelSent",
    "TaskCreated",
    "TaskFailed",
    "TaskNotFound",
    "TaskPolicy",
    "TaskReference",
    "TaskStatus",
    "Subscription",
    "SubscriptionError",
    "SubscriptionFilter",
    "SubscriptionLost",
    "TimedOut",
    "TimeoutArg",
    "TimeoutKind",
    "TimeoutPolicy",
    "ToolChanged",
    "ToolDefinitionChanged",
    "ToolError",
    "ToolPins",
    "ToolsListChanged",
    "Transport",
    "TransportError",
    "TransportFailure",
    "USE_CLIENT_DEFAULT",
    "UnsupportedProtocolVersion",
    "UseClientDefault",
    "http",
    "sse",
    "load_config",
    "memory",
    "parse_policy",
    "stdio",
    "__version__",
]

_LAZY: dict[str, str] = {
    "AllowedEnvironment": "mcp_client.config_env",
    "Attempt": "mcp_client.errors",
    "CacheEntry": "mcp_client.cache_store",
    "CacheKey": "mcp_client.cache_store",
    "CacheMode": "mcp_client.cache",
    "CacheStore": "mcp_client.cache_store",
    "Call": "mcp_client.call",
    "CancelMethod": "mcp_client.events",
    "CancelSent": "mcp_client.events",
    "Change": "mcp_client.subscriptions",
    "Client": "mcp_client.client",
    "ClientGroup": "mcp_client.group",
    "ConfigError": "mcp_client.config",
    "ConnectError": "mcp_client.errors",
    "DEFAULT_LISTEN_POLICY": "mcp_client.subscriptions",
    "DEFAULT_RETRY": "mcp_client.policy.retry",
    "DEFAULT_TIMEOUT": "mcp_client.policy",
    "ElicitationHandler": "mcp_client.handlers",
    "Event": "mcp_client.events",
    "GroupConfig": "mcp_client.config",
    "HeaderMismatch": "mcp_client.errors",
    "HttpTransport": "mcp_client.transports.http",
    "SseTransport": "mcp_client.transports.sse",
    "IdleTimeout": "mcp_client.errors",
    "IdleTimerReset": "mcp_client.events",
    "InternalError": "mcp_client.errors",
    "InvalidParams": "mcp_client.errors",
    "InvalidRequest": "mcp_client.errors",
    "LateMessage": "mcp_client.events",
    "ListenPolicy": "mcp_client.subscriptions",
    "LogLevel": "mcp_client.logs",
    "MCPClientError": "mcp_client.errors",
    "MaxTimeout": "mcp_client.errors",
    "MemoryCacheStore": "mcp_client.cache_store",
    "MemoryTransport": "mcp_client.transports.memory",
    "MethodNotFound": "mcp_client.errors",
    "MissingClientCapability": "mcp_client.errors",
    "ParseError": "mcp_client.errors",
    "PartialRetry": "mcp_client.registry",
    "PartialTimeout": "mcp_client.registry",
    "PolicyLayer": "mcp_client.registry",
    "PolicyRegistry": "mcp_client.registry",
    "PollPolicy": "mcp_client.policy.tasks",
    "Progress": "mcp_client.policy",
    "ProgressAccepted": "mcp_client.events",
    "ProgressCallback": "mcp_client.progress",
    "ProgressRejected": "mcp_client.events",
    "PromptsListChanged": "mcp_client.subscriptions",
    "ProtocolError": "mcp_client.errors",
    "ProtocolViolation": "mcp_client.events",
    "Relistened": "mcp_client.events",
    "RequestCancelled": "mcp_client.errors",
    "RequestFinished": "mcp_client.events",
    "RequestSent": "mcp_client.events",
    "RequestTimeout": "mcp_client.errors",
    "ResourceNotFound": "mcp_client.errors",
    "ResourceUpdated": "mcp_client.subscriptions",
    "ResourcesListChanged": "mcp_client.subscriptions",
    "RestartPolicy": "mcp_client.policy.restart",
    "ResultCache": "mcp_client.cache",
    "RetryBudget": "mcp_client.policy.retry",
    "RetryPolicy": "mcp_client.policy.retry",
    "RetryScheduled": "mcp_client.events",
    "RootsHandler": "mcp_client.handlers",
    "SamplingHandler": "mcp_client.handlers",
    "ServerError": "mcp_client.errors",
    "ServerLog": "mcp_client.events",
    "ServerNotification": "mcp_client.events",
    "ServerRestarted": "mcp_client.events",
    "ServerSpec": "mcp_client.config",
    "ServerStatus": "mcp_client.group",
    "ServerStderr": "mcp_client.events",
    "SessionExpired": "mcp_client.errors",
    "SlotWaited": "mcp_client.events",
    "Slow": "mcp_client.events",
    "StdioTransport": "mcp_client.transports.stdio",
    "StructuredOutputError": "mcp_client.errors",
    "Task": "mcp_client.tasks",
    "TaskCancelSent": "mcp_client.events",
    "TaskCreated": "mcp_client.events",
    "TaskFailed": "mcp_client.errors",
    "TaskNotFound": "mcp_client.errors",
    "TaskPolicy": "mcp_client.tasks",
    "TaskReference": "mcp_client.tasks.reference",
    "TaskStatus": "mcp_client.events",
    "Subscription": "mcp_client.subscriptions",
    "SubscriptionError": "mcp_client.subscriptions",
    "SubscriptionFilter": "mcp_client.subscriptions",
    "SubscriptionLost": "mcp_client.subscriptions",
    "TimedOut": "mcp_client.events",
    "TimeoutArg": "mcp_client.client",
    "TimeoutKind": "mcp_client.policy",
    "TimeoutPolicy": "mcp_client.policy",
    "ToolChanged": "mcp_client.errors",
    "ToolDefinitionChanged": "mcp_client.events",
    "ToolError": "mcp_client.errors",
    "ToolPins": "mcp_client.tool_pins",
    "ToolsListChanged": "mcp_client.subscriptions",
    "Transport": "mcp_client.transports.base",
    "TransportError": "mcp_client.errors",
    "TransportFailure": "mcp_client.events",
    "USE_CLIENT_DEFAULT": "mcp_client.client",
    "UnsupportedProtocolVersion": "mcp_client.errors",
    "UseClientDefault": "mcp_client.client",
    "http": "mcp_client.transports.http",
    "sse": "mcp_client.transports.sse",
    "load_config": "mcp_client.config",
    "memory": "mcp_client.transports.memory",
    "parse_policy": "mcp_client.config",
    "stdio": "mcp_client.transports.stdio",
}
"""The module each public name lives in: imported on first use (PEP 562)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_client' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
