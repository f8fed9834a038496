"""Who a client's cached answers belong to: the server key and the authorization context (the partition of
``private`` entries) of a transport, as strings a :class:`~mcp_client.cache.result_cache.ResultCache` store can keep.

Pure (no I/O); it reads a transport's ``url``, ``headers``, ``auth`` and ``client`` attributes and never changes
them. The rules:

* An identity is never reused. An object that signs requests in (an ``auth`` object, a caller's own ``httpx``
  client) gets a token of its own, held by a weak reference: a later object at the same address gets a new one.
  Tokens also carry a per-process nonce, so a store shared between processes never mixes two processes' clients.
* Every header may carry a credential except a short allow-list of ones known to be harmless
  (:data:`HARMLESS_HEADERS`); the URL's userinfo (``user:password@``) and query (``?api_key=``) count too. They
  are hashed, never kept in the clear.
* A host that knows its users passes an explicit partition; it replaces the derived context (the host vouches
  that everything signed in under one partition may see the same private answers).
* A stdio or in-memory server is its client's own: both keys are the client's token.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import secrets
import threading
import weakref
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

__all__ = ["HARMLESS_HEADERS", "authorization_context", "identity_token", "new_token", "server_key"]

HARMLESS_HEADERS: Final = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "connection",
        "content-type",
        "mcp-protocol-version",
        "pragma",
        "traceparent",
        "tracestate",
        "user-agent",
    }
)
"""Headers that never carry a credential; every other header (an unknown one too) is part of the context."""

_PROCESS: Final = secrets.token_hex(8)
_counter = itertools.count(1)
_lock = threading.RLock()  # re-entrant: a weakref callback may run during an allocation made while it is held
_tokens: dict[int, tuple[weakref.ref[object], str]] = {}


def new_token() -> str:
    """A token no other object of any process is ever given."""
    return f"{_PROCESS}-{next(_counter)}"


def identity_token(obj: object) -> str | None:
    """This object's token, the same for as long as it lives and never given to another; ``None`` when the object
    cannot be weakly referenced (the caller then falls back to an identity of its own)."""
    address = id(obj)  # only a lookup hint: the weak reference below says whether it is still this object
    with _lock:
        held = _tokens.get(address)
        if held is not None and held[0]() is obj:
            return held[1]

        def forget(ref: weakref.ref[object]) -> None:
            with _lock:
                current = _tokens.get(address)
                if current is not None and current[0] is ref:
                    del _tokens[address]

        try:
            ref = weakref.ref(obj, forget)
        except TypeError:
            return None
        token = new_token()
        _tokens[address] = (ref, token)
        return token


def _split(transport: object) -> tuple[str, str, str] | None:
    url = getattr(transport, "url", None)
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:  # (no one can connect to it: starting fails, typed) its context is that exact URL's
        return url, url, ""
    userinfo = parts.netloc.rpartition("@")[0]
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}", userinfo, parts.query


def server_key(transport: object, owner: str) -> str:
    """The server a transport talks to: an HTTP endpoint (origin, path and query, without userinfo), else the
    owning client's own (``owner`` is its token)."""
    split = _split(transport)
    if split is None:
        return f"client:{owner}"
    endpoint, _, query = split
    return f"http:{endpoint}?{query}" if query else f"http:{endpoint}"


def authorization_context(transport: object, owner: str, partition: str | None = None) -> str:
    """The authorization context a transport's requests run in: ``private`` entries are served only within it.

    Args:
        transport: The client's transport; over HTTP its credentials count (see the module docstring).
        owner: The owning client's token (:func:`new_token`): the context of a stdio or in-memory server, and the
            fallback identity of a sign-in object that cannot be weakly referenced.
        partition: The host's own name for the context; it replaces the derived one.

    Raises:
        ValueError: ``partition`` is empty.
    """
    if partition is not None:
        if not isinstance(partition, str) or not partition:
            raise ValueError(f"the cache partition must be a non-empty string, got {partition!r}")
        return f"partition:{partition}"
    split = _split(transport)
    headers = getattr(transport, "headers", None)
    auth = getattr(transport, "auth", None)
    client = getattr(transport, "client", None)
    if split is None and headers is None and auth is None and client is None:
        return f"client:{owner}"
    _, userinfo, query = split if split is not None else ("", "", "")
    credentials = sorted(
        (str(name).lower(), str(value))
        for name, value in (dict(headers) if isinstance(headers, Mapping) else {}).items()
        if str(name).lower() not in HARMLESS_HEADERS
    )
    signers = [None if obj is None else (identity_token(obj) or owner) for obj in (auth, client)]
    material = json.dumps([credentials, userinfo, query, signers])
    return "http:" + hashlib.sha256(material.encode()).hexdigest()
