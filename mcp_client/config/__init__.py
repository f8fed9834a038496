"""A host's ``mcp.json``: the servers to start and our ``policy`` block of timeout and retry rules.

:mod:`.load` reads a file or mapping into a :class:`GroupConfig`; :mod:`.values` holds the value checks, :mod:`.env`
the ``${VAR}`` expansion and the allowed environment, :mod:`.transports` what an entry's ``type`` builds,
:mod:`.problems` the errors and warnings, :mod:`.tool_filter` the tools a server offers, and :mod:`.dialects` other
hosts' files (Claude Code, VS Code, Gemini CLI, Codex, LibreChat, Goose...).
"""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:
    from mcp_client.config.dialects.inputs import ConfigInput as ConfigInput
    from mcp_client.config.load import (
        ConfigError as ConfigError,
        ConfigProblem as ConfigProblem,
        GroupConfig as GroupConfig,
        PolicyConfig as PolicyConfig,
        RetryConfig as RetryConfig,
        ServerConfig as ServerConfig,
        ServerSpec as ServerSpec,
        TimeoutConfig as TimeoutConfig,
        load_config as load_config,
        parse_policy as parse_policy,
    )
    from mcp_client.config.problems import ConfigWarning as ConfigWarning
    from mcp_client.config.tool_filter import ToolFilter as ToolFilter, ToolNotAllowed as ToolNotAllowed

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
