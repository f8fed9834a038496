"""The package's loggers: every record made visible and scrubbed of secrets before a host's handler sees it.

Each module of the package gets its logger from :func:`package_logger` (never ``logging.getLogger``; a test holds
every module to it). The first call installs a ``logging.NullHandler`` on the ``mcp_client`` logger, so that
Python's last-resort handler never writes a record of the package to the stderr of a host that configured no
logging; and each logger gets :class:`LogRecordGuard`, because a filter on a logger sees only the records logged
to that very logger (not its children's). The guard makes a record's message, its formatted traceback and its
stack visible (:func:`mcp_client._visible.visible`: a server's text never reaches a terminal raw, whatever the
call site formats into it) and scrubbed (:func:`mcp_client._redact.scrub`: URLs redacted, credentials and the
configured secret values hidden). A record that needs neither keeps its template and arguments.
"""

from __future__ import annotations

import logging

from mcp_client._redact import scrub
from mcp_client._visible import visible

__all__ = ["LogRecordGuard", "package_logger"]


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
