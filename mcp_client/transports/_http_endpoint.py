"""What both HTTP transports (Streamable HTTP and HTTP+SSE) do alike with their endpoint: the key a server's era
and cached results are kept under, and an OAuth sign-in that waits for a person pausing the calls' idle clocks.

Pure helpers on a URL and an auth object; no I/O.
"""

from __future__ import annotations

from typing import Any

import httpx2

from mcp_client.transports.base import MessageHandler

__all__ = ["endpoint_key", "pause_clocks_while_signing_in"]


def endpoint_key(url: str) -> str:
    """The endpoint's origin and path (no userinfo, no query): the era is a property of the server behind it."""
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL:
        return url  # (no one can connect to it: its requests fail, typed, as they are built)
    return f"{parsed.scheme}://{parsed.netloc.decode('ascii')}{parsed.path}"


def pause_clocks_while_signing_in(auth: Any, handler: MessageHandler) -> None:
    """A sign-in hook that waits for a person (our OAuth's ``waiting_on_a_person``, unset) stops the idle clocks
    of the calls waiting on it: give it the session's hook."""
    if auth is not None and getattr(auth, "waiting_on_a_person", "absent") is None:
        auth.waiting_on_a_person = getattr(handler, "waiting_on_a_person", None)
