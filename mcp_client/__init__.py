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

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face
from mcp_client._moved import install as install_moved_paths
from mcp_client._version import __version__ as __version__

if TYPE_CHECKING:
    from mcp_client.cache.result_cache import CacheMode as CacheMode, ResultCache as ResultCache
    from mcp_client.cache.store import (
        CacheEntry as CacheEntry,
        CacheKey as CacheKey,
        CacheStore as CacheStore,
        MemoryCacheStore as MemoryCacheStore,
    )
    from mcp_client.calls.progress import ProgressCallback as ProgressCallback
    from mcp_client.client.call import Call as Call
    from mcp_client.client.client import (
        USE_CLIENT_DEFAULT as USE_CLIENT_DEFAULT,
        Client as Client,
        TimeoutArg as TimeoutArg,
        UseClientDefault as UseClientDefault,
    )
    from mcp_client.client.task_reference import (
        TaskReference as TaskReference,
        TaskReferenceMismatch as TaskReferenceMismatch,
    )
    from mcp_client.client.tool_pins import (
        DuplicateToolName as DuplicateToolName,
        ToolNotReviewed as ToolNotReviewed,
        ToolPins as ToolPins,
    )
    from mcp_client.config.env import AllowedEnvironment as AllowedEnvironment
    from mcp_client.config.load import (
        ConfigError as ConfigError,
        GroupConfig as GroupConfig,
        ServerSpec as ServerSpec,
        load_config as load_config,
        parse_policy as parse_policy,
    )
    from mcp_client.errors import (
        Attempt as Attempt,
        ClientClosed as ClientClosed,
        ConnectError as ConnectError,
        HeaderMismatch as HeaderMismatch,
        IdleTimeout as IdleTimeout,
        InternalError as InternalError,
        InvalidParams as InvalidParams,
        InvalidRequest as InvalidRequest,
        MaxTimeout as MaxTimeout,
        MCPClientError as MCPClientError,
        MethodNotFound as MethodNotFound,
        MissingClientCapability as MissingClientCapability,
        ParseError as ParseError,
        ProtocolError as ProtocolError,
        RequestCancelled as RequestCancelled,
        RequestTimeout as RequestTimeout,
        ResourceNotFound as ResourceNotFound,
        ServerError as ServerError,
        SessionExpired as SessionExpired,
        StructuredOutputError as StructuredOutputError,
        TaskFailed as TaskFailed,
        TaskNotFound as TaskNotFound,
        ToolChanged as ToolChanged,
        ToolError as ToolError,
        TransportError as TransportError,
        UnsupportedProtocolVersion as UnsupportedProtocolVersion,
    )
    from mcp_client.events import (
        CancelMethod as CancelMethod,
        CancelSent as CancelSent,
        Event as Event,
        IdleTimerReset as IdleTimerReset,
        LateMessage as LateMessage,
        ProgressAccepted as ProgressAccepted,
        ProgressRejected as ProgressRejected,
        ProtocolViolation as ProtocolViolation,
        Relistened as Relistened,
        RequestFinished as RequestFinished,
        RequestSent as RequestSent,
        RetryScheduled as RetryScheduled,
        ServerLog as ServerLog,
        ServerNotification as ServerNotification,
        ServerRestarted as ServerRestarted,
        ServerStderr as ServerStderr,
        SlotWaited as SlotWaited,
        Slow as Slow,
        TaskCancelSent as TaskCancelSent,
        TaskCreated as TaskCreated,
        TaskStatus as TaskStatus,
        TimedOut as TimedOut,
        ToolDefinitionChanged as ToolDefinitionChanged,
        TransportFailure as TransportFailure,
    )
    from mcp_client.group import ClientGroup as ClientGroup, ServerStatus as ServerStatus
    from mcp_client.policy import (
        DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
        Progress as Progress,
        TimeoutKind as TimeoutKind,
        TimeoutPolicy as TimeoutPolicy,
    )
    from mcp_client.policy.registry import (
        PartialRetry as PartialRetry,
        PartialTimeout as PartialTimeout,
        PolicyLayer as PolicyLayer,
        PolicyRegistry as PolicyRegistry,
    )
    from mcp_client.policy.restart import RestartPolicy as RestartPolicy
    from mcp_client.policy.retry import (
        DEFAULT_RETRY as DEFAULT_RETRY,
        RetryBudget as RetryBudget,
        RetryPolicy as RetryPolicy,
    )
    from mcp_client.policy.tasks import PollPolicy as PollPolicy
    from mcp_client.protocol.logs import LogLevel as LogLevel
    from mcp_client.protocol.tasks import Task as Task, TaskPolicy as TaskPolicy
    from mcp_client.session.handlers import (
        ElicitationHandler as ElicitationHandler,
        RootsHandler as RootsHandler,
        SamplingHandler as SamplingHandler,
    )
    from mcp_client.subscriptions import (
        DEFAULT_LISTEN_POLICY as DEFAULT_LISTEN_POLICY,
        Change as Change,
        ListenPolicy as ListenPolicy,
        PromptsListChanged as PromptsListChanged,
        ResourcesListChanged as ResourcesListChanged,
        ResourceUpdated as ResourceUpdated,
        Subscription as Subscription,
        SubscriptionError as SubscriptionError,
        SubscriptionFilter as SubscriptionFilter,
        SubscriptionLost as SubscriptionLost,
        ToolsListChanged as ToolsListChanged,
    )
    from mcp_client.transports.base import Transport as Transport
    from mcp_client.transports.http import HttpTransport as HttpTransport, http as http
    from mcp_client.transports.memory import MemoryTransport as MemoryTransport, memory as memory
    from mcp_client.transports.sse import SseTransport as SseTransport, sse as sse
    from mcp_client.transports.stdio import StdioTransport as StdioTransport, stdio as stdio

if not TYPE_CHECKING:  # a type checker reads the imports above; run time loads each name on first use
    __getattr__, __dir__, __all__ = lazy_face(__name__, extra=("__version__",))

install_moved_paths()  # mcp_client.registry and the other paths of modules that moved into a folder
