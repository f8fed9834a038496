"""Which URLs and authorization servers the OAuth flow will talk to, as rules applied before anything is sent.

* A URL learned from a server (the 401 challenge's ``resource_metadata``, an entry of ``authorization_servers``,
  the endpoints of the authorization server's metadata) is used only when it is ``https``, or ``http`` on a
  loopback host, or ``http`` on an origin the host itself configured (the MCP server's, a grant's ``issuer``):
  :class:`~mcp_client.auth.UnsafeURL` otherwise. That keeps credentials off plain-text links the host never chose,
  and ``file:``, ``javascript:`` or cloud-metadata URLs out of the browser hook and the side client.
* A grant bound to an issuer (its static credentials were made for one authorization server) is used with that
  issuer only: :class:`~mcp_client.auth.UntrustedIssuer` before any request to another.

Pure functions of strings: no I/O here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from mcp_client.auth._http import same_origin, shown
from mcp_client.auth.errors import UnsafeURL, UntrustedIssuer

__all__ = ["check_bound_issuer", "check_learned_url", "is_loopback_host", "pick_issuer"]

_SHOWN = 200
"""Characters of a refused URL shown in the error (a hostile server may send a long one)."""


def is_loopback_host(host: str) -> bool:
    """Exactly ``localhost`` (any case) or a literal loopback address (127.0.0.0/8, ``::1``, bracketed or not).

    The one loopback rule of the package: every check that lets plain ``http`` through on a loopback host asks it.
    A name that is loopback only by convention is not enough: ``localhost.`` (the absolute name) and names under
    ``.localhost`` (RFC 6761 asks resolvers to keep them local, but many hand them to DNS) can point anywhere,
    and a token sent over ``http`` to them would cross the network in clear. Short address forms (``127.1``) are
    not literal addresses either; no name is resolved here."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False


def check_learned_url(url: str, what: str, *, trusted: Iterable[str] = ()) -> str:
    """``url`` if it may be used; else :class:`UnsafeURL` naming ``what`` it was.

    ``trusted``: URLs whose origins the host configured (plain ``http`` is accepted on those).
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is not None and host:
        scheme = parts.scheme.lower()
        if scheme == "https":
            return url
        if scheme == "http" and (is_loopback_host(host) or any(same_origin(url, t) for t in trusted)):
            return url
    shown = url if len(url) <= _SHOWN else url[:_SHOWN] + "…"
    raise UnsafeURL(
        f"the {what} {shown!r} is neither https nor http on a loopback host or an origin the host configured: "
        "refusing to use it"
    )


def pick_issuer(authorization_servers: Sequence[str], bound: str | None, *, server_url: str) -> str:
    """The authorization server to use among those the protected resource metadata lists.

    With a grant bound to the issuer ``bound``: that one, if listed (exact string comparison, RFC 8414 §3.3),
    else :class:`UntrustedIssuer`. Without: the first listed, which must pass :func:`check_learned_url`.
    """
    if bound is not None:
        if bound in authorization_servers:
            return bound
        raise UntrustedIssuer(
            f"the MCP server {shown(server_url)!r} names the authorization server(s) "
            f"{list(authorization_servers)[:5]}, but the grant's credentials are for {bound!r}: "
            "nothing was sent to them"
        )
    return check_learned_url(authorization_servers[0], "authorization server", trusted=(server_url,))


def check_bound_issuer(issuer: str, bound: str | None, *, server_url: str) -> None:
    """Raise :class:`UntrustedIssuer` unless ``issuer`` is the one a bound grant is for (None: any)."""
    if bound is not None and issuer != bound:
        raise UntrustedIssuer(
            f"the authorization server of the MCP server {shown(server_url)!r} is {issuer!r}, but the grant's "
            f"credentials are for {bound!r}: nothing was sent to it"
        )
