"""How endpoints are named in errors, logs and spans without the secrets their configuration may hold.

A stdio command's arguments often carry keys (``--api-key sk-...``) and a URL's userinfo and query may too
(``https://user:password@host/mcp?api_key=...``): :func:`command_summary` shows the command and how many arguments
it has; :func:`redacted_url` keeps scheme, host, port and path, and replaces userinfo and a query with ``***``.
Pure functions of strings; nothing of the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = ["command_summary", "redacted_url"]

HIDDEN = "***"


def command_summary(command: str, args: Sequence[str]) -> str:
    """``npx (3 arguments)``: the command as given and the number of its arguments, never their values."""
    if not args:
        return command
    return f"{command} ({len(args)} argument{'s' if len(args) != 1 else ''})"


def redacted_url(url: str) -> str:
    """``url`` without its userinfo and query (each shown as ``***``) and without its fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return HIDDEN  # not a URL one can take apart: show none of it
    if not parts.scheme or host is None:
        return url if "@" not in url and "?" not in url else HIDDEN
    shown_host = f"[{host}]" if ":" in host else host
    netloc = shown_host if port is None else f"{shown_host}:{port}"
    if "@" in parts.netloc:  # a user name can be a token too (https://<token>@host)
        netloc = f"{HIDDEN}@{netloc}"
    query = f"?{HIDDEN}" if parts.query else ""
    return f"{parts.scheme}://{netloc}{parts.path}{query}"
