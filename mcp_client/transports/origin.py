"""The origin of a URL (scheme, host, port) as the HTTP library connects to it: the one reading every same-origin
check uses (the HTTP+SSE endpoint event, OAuth's resource and token origins).

A check that reads a URL differently from the library that connects to it sends credentials to another origin.
Python's ``urlsplit`` refuses a port written in non-ASCII digits (fullwidth digits for 8443) while httpx2 connects
to 8443, so such a port is refused here outright (no check passes it), and everything else is read by httpx2's
own parser (host lower-cased and IDNA-encoded, the scheme's default port filled in). Pure: no I/O.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx2

__all__ = ["Origin", "origin", "same_origin"]

Origin = tuple[str, str, int | None]
"""Scheme, host and port (the scheme's default when none is written; None for a scheme without one)."""
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> Origin:
    """The origin ``url`` is connected to.

    Raises:
        ValueError: the URL cannot be read, or its port is not written in ASCII digits.
    """
    port_text = _written_port(url)
    if port_text and not (port_text.isascii() and port_text.isdigit()):
        raise ValueError(f"the port of the URL is not a number in ASCII digits: {port_text!r}")
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError) as exc:
        raise ValueError(f"the URL cannot be read: {exc}") from exc
    scheme = parsed.scheme.lower()
    port = parsed.port if parsed.port is not None else _DEFAULT_PORTS.get(scheme)
    return scheme, parsed.raw_host.decode("ascii").lower(), port


def same_origin(a: str, b: str) -> bool:
    """RFC 6454 origin equality as :func:`origin` reads them; a URL it cannot read is no one's origin."""
    try:
        return origin(a) == origin(b)
    except ValueError:
        return False


def _written_port(url: str) -> str:
    """The port as written in ``url``'s authority (empty when none is)."""
    netloc = urlsplit(url).netloc.rpartition("@")[2]
    if netloc.startswith("["):  # an IPv6 literal: the port follows the bracket
        _, _, after = netloc.partition("]")
        return after[1:] if after.startswith(":") else ""
    return netloc.rpartition(":")[2] if ":" in netloc else ""
