"""Server log messages: the levels, the per-request opt-in of 2026-07-28, and ``notifications/message`` as events.

Logging is deprecated at 2026-07-28 (SEP-2577) but still served. There, a request opts in to log messages with
``_meta["io.modelcontextprotocol/logLevel"]``, and the server sends them only for such requests, on that
request's own response stream, before its answer. At 2025-11-25 ``logging/setLevel`` sets one level for the
session. This module is pure: it checks levels, builds the ``_meta`` entry and turns a notification's params into
a :class:`~mcp_client.events.ServerLog`; the session routes it.
"""

from __future__ import annotations

import logging
from typing import Any, Final, Literal, TypeAlias, get_args

from mcp_client._types import RequestId
from mcp_client.events import ServerLog
from mcp_client.outcomes import visible

__all__ = [
    "LOG_LEVELS",
    "LOG_LEVEL_KEY",
    "LogLevel",
    "asks_for_logs",
    "check_level",
    "log_text",
    "python_level",
    "server_log",
    "with_log_level",
]

LogLevel: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""The syslog levels of MCP (RFC 5424), least severe first."""
LOG_LEVELS: Final[tuple[LogLevel, ...]] = get_args(LogLevel)
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
"""The ``_meta`` key of a 2026-07-28 request's log level."""

_PYTHON_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def check_level(level: object) -> LogLevel:
    """``level`` if it is one of :data:`LOG_LEVELS`; else ``ValueError`` (the server would answer -32602)."""
    for known in LOG_LEVELS:
        if level == known:
            return known
    raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}; got {level!r}")


def python_level(level: object) -> int:
    """The :mod:`logging` level a server's level maps to (``INFO`` for anything unknown)."""
    return _PYTHON_LEVELS.get(level, logging.INFO) if isinstance(level, str) else logging.INFO


def server_log(params: dict[str, Any], request_id: RequestId | None) -> ServerLog:
    """The event for one ``notifications/message`` (a level that is not a string is reported as ``"info"``)."""
    level = params.get("level")
    logger_name = params.get("logger")
    return ServerLog(
        level if isinstance(level, str) else "info",
        params.get("data"),
        logger_name if isinstance(logger_name, str) else None,
        request_id,
    )


def asks_for_logs(params: dict[str, Any]) -> bool:
    """Do these (stamped) params ask for the request's log messages (``_meta`` log level, 2026-07-28)?"""
    meta = params.get("_meta")
    return isinstance(meta, dict) and LOG_LEVEL_KEY in meta


def with_log_level(params: dict[str, Any], level: LogLevel | None, *, modern: bool) -> dict[str, Any]:
    """``params`` (the caller's own dict, changed in place) asking for log messages at ``level`` and above.

    Only 2026-07-28 has a per-request level; at 2025-11-25 the session's level (``logging/setLevel``) applies.
    """
    if level is None or not modern:
        return params
    meta = params.get("_meta")
    params["_meta"] = {**(meta if isinstance(meta, dict) else {}), LOG_LEVEL_KEY: check_level(level)}
    return params


def log_text(data: object) -> str:
    """A server log message's ``data`` as the text of a Python log record: a string with its control characters
    (and lone surrogates) written as escapes, anything else as its ``repr`` made so too. A host's log handler
    writes the record to a terminal or a file: an OSC 52 clipboard write or a screen clear that a server chose
    reached both raw."""
    return visible(data if isinstance(data, str) else repr(data))
