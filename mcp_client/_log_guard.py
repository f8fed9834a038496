"""The package's loggers: every record made visible and scrubbed of secrets before a host's handler sees it.

Each module of the package gets its logger from :func:`package_logger` (never ``logging.getLogger``; a test holds
every module to it). The first call installs a ``logging.NullHandler`` on the ``mcp_client`` logger, so that
Python's last-resort handler never writes a record of the package to the stderr of a host that configured no
logging; and each logger gets :class:`LogRecordGuard`, because a filter on a logger sees only the records logged
to that very logger (not its children's). The guard makes a record's message, its formatted traceback and its
stack visible (:func:`mcp_client._visible.visible`: a server's text never reaches a terminal raw, whatever the
call site formats into it) and scrubbed (:func:`mcp_client._redact.scrub`: URLs redacted, credentials and the
configured secret values hidden). A record that needs neither keeps its template and arguments.

The HTTP libraries' own loggers (:data:`HTTP_LIBRARY_LOGGERS`) get the same guard once a transport connects
(:func:`guard_http_library_logs`): httpx2 and httpx log each request's whole URL at INFO, which names an HTTP+SSE
session's id (a capability) and any ``?api_key=`` of the configured URL, and httpcore2 traces each answer's headers
at DEBUG, which name a session id and a cookie. Only those records' text changes.
"""

from __future__ import annotations

import logging

from mcp_client._redact import scrub
from mcp_client._visible import visible

__all__ = ["HTTP_LIBRARY_LOGGERS", "LogRecordGuard", "guard_http_library_logs", "package_logger"]

HTTP_LIBRARY_LOGGERS = (
    "httpx2",
    "httpx",
    *(
        f"{core}.{part}"
        for core in ("httpcore2", "httpcore")
        for part in ("connection", "http11", "http2", "proxy", "socks")
    ),
)
"""The loggers of the HTTP libraries a transport sends through (httpx 0.28's and httpcore's, for a caller's own
client): httpx2 and httpx name each request's URL at INFO; httpcore2's and httpcore's trace each answer's headers
at DEBUG (a session id, a cookie the server sets). Each is named: a filter on a logger does not see its children's
records."""


class LogRecordGuard(logging.Filter):
    """Makes a record's message and traceback visible and scrubbed; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        clean = scrub(visible(message))
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = scrub(visible(logging.Formatter().formatException(record.exc_info)))
        if record.stack_info:
            record.stack_info = scrub(visible(record.stack_info))
        return True


_GUARD = LogRecordGuard()


def package_logger(name: str) -> logging.Logger:
    """The logger ``name`` (under ``mcp_client``) with :class:`LogRecordGuard`; the package's ``NullHandler``."""
    package = logging.getLogger("mcp_client")
    if not any(isinstance(handler, logging.NullHandler) for handler in package.handlers):
        package.addHandler(logging.NullHandler())
    logger = logging.getLogger(name)
    if _GUARD not in logger.filters:
        logger.addFilter(_GUARD)
    return logger


def guard_http_library_logs() -> None:
    """Put :class:`LogRecordGuard` on the HTTP libraries' own loggers (once; a host's own records there are scrubbed
    too, which hides only secrets and URL parts)."""
    for name in HTTP_LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _GUARD not in logger.filters:
            logger.addFilter(_GUARD)
