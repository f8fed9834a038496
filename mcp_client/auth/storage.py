"""Where tokens and registered clients are kept between requests (and, with a file store, between runs).

Tokens are keyed by the resource they were issued for (the MCP server); client registrations by the issuer of the
authorization server that made them, so that a client registered with one authorization server is never shown to
another (SEP-2352). Stores hold secrets: nothing here logs them, and their ``repr`` hides them.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
import anyio.to_thread

from mcp_client.auth._file_lock import exclusive_file_lock, make_private_dirs

__all__ = ["ClientInformation", "FileTokenStorage", "InMemoryTokenStorage", "StoredTokens", "TokenStorage"]

_REFRESH_MARGIN = 30.0
"""Seconds before expiry at which a token counts as expired (so it does not expire on the way), at most a quarter of
its lifetime: a token issued for 20 s is renewed 5 s before its end, not at once (a margin longer than the lifetime
made every fresh token count as expired, and every request renew it)."""


@dataclass(frozen=True, slots=True)
class StoredTokens:
    """An access token (and maybe a refresh token) for one resource, and where it came from."""

    access_token: str = field(repr=False)
    token_type: str
    issuer: str
    """The authorization server that issued it: a token is never refreshed at, or used after a move to, another."""
    resource: str
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    """Wall-clock time (``time.time()``) after which the token is expired; None if the server did not say."""
    scopes: tuple[str, ...] | None = None
    """The scopes granted (the token response's ``scope``; the requested ones when it had none)."""
    requested_scopes: tuple[str, ...] | None = None
    """The scopes asked for (None: the ``scope`` parameter was omitted)."""
    dpop_jkt: str | None = None
    """RFC 7638 thumbprint of the DPoP key the token is bound to, if any."""
    issued_at: float | None = None
    """Wall-clock time the token response arrived (None in tokens stored by older versions: the full margin)."""

    def expired(self, now: float | None = None) -> bool:
        """True when the token has expired or is about to."""
        if self.expires_at is None:
            return False
        margin = _REFRESH_MARGIN
        if self.issued_at is not None:
            margin = min(margin, max(self.expires_at - self.issued_at, 0.0) / 4)
        return (now if now is not None else time.time()) >= self.expires_at - margin

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (secrets included: for stores only)."""
        data = asdict(self)
        for key in ("scopes", "requested_scopes"):
            if data[key] is not None:
                data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoredTokens:
        """The inverse of :meth:`to_json` (unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("scopes", "requested_scopes"):
            if values.get(key) is not None:
                values[key] = tuple(values[key])
        return cls(**values)


@dataclass(frozen=True, slots=True)
class ClientInformation:
    """A client identity at one authorization server: pre-registered, a Client ID Metadata Document URL, or the
    result of dynamic registration."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    """``none``, ``client_secret_basic``, ``client_secret_post`` or ``private_key_jwt``; None: chosen from the
    secret and the server's metadata."""
    redirect_uris: tuple[str, ...] = ()
    issuer: str | None = None
    """The authorization server this identity belongs to; None (pre-registered only): any."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (secret included: for stores only)."""
        data = asdict(self)
        data["redirect_uris"] = list(self.redirect_uris)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientInformation:
        """The inverse of :meth:`to_json` (unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["redirect_uris"] = tuple(values.get("redirect_uris") or ())
        return cls(**values)


@runtime_checkable
class TokenStorage(Protocol):
    """Keeps tokens per resource and registered clients per issuer. Implementations must be safe to call from
    concurrent tasks (the OAuth flow serializes its own writes) and must never log what they hold.

    A store shared between processes may also offer ``renewal_lock()``, returning an async context manager that
    excludes the other processes: OAuth holds it around every token renewal (see :class:`FileTokenStorage`)."""

    async def get_tokens(self, resource: str) -> StoredTokens | None:
        """The tokens for ``resource`` (the MCP server URL), if any."""
        ...

    async def set_tokens(self, resource: str, tokens: StoredTokens | None) -> None:
        """Keep ``tokens`` for ``resource``; None forgets them."""
        ...

    async def get_client(self, issuer: str) -> ClientInformation | None:
        """The client registered with the authorization server ``issuer``, if any."""
        ...

    async def set_client(self, issuer: str, client: ClientInformation | None) -> None:
        """Keep ``client`` for ``issuer``; None forgets it."""
        ...


class InMemoryTokenStorage:
    """The default store: forgotten when the process ends."""

    def __init__(self) -> None:
        self._tokens: dict[str, StoredTokens] = {}
        self._clients: dict[str, ClientInformation] = {}

    def __repr__(self) -> str:
        return f"InMemoryTokenStorage({len(self._tokens)} token sets, {len(self._clients)} clients)"

    async def get_tokens(self, resource: str) -> StoredTokens | None:
        return self._tokens.get(resource)

    async def set_tokens(self, resource: str, tokens: StoredTokens | None) -> None:
        if tokens is None:
            self._tokens.pop(resource, None)
        else:
            self._tokens[resource] = tokens

    async def get_client(self, issuer: str) -> ClientInformation | None:
        return self._clients.get(issuer)

    async def set_client(self, issuer: str, client: ClientInformation | None) -> None:
        if client is None:
            self._clients.pop(issuer, None)
        else:
            self._clients[issuer] = client


class FileTokenStorage:
    """A JSON file readable and writable by its owner only (mode 0600, every folder it creates 0700).

    ``~`` in the path is the user's home. Every write replaces the file atomically (a new 0600 file renamed over
    it), so a crash never leaves half a file and the secrets never sit in a file with wider permissions, even for
    a moment. An existing file with wider permissions is narrowed to 0600 on the first write. File access runs in a
    worker thread.

    Processes sharing the file renew tokens one at a time: :meth:`renewal_lock` takes an exclusive ``flock`` on
    ``<path>.lock`` (POSIX; elsewhere only the tasks of one process are kept apart).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock: anyio.Lock | None = None

    def __repr__(self) -> str:
        return f"FileTokenStorage({str(self.path)!r})"

    async def get_tokens(self, resource: str) -> StoredTokens | None:
        data = (await self._read()).get("tokens", {}).get(resource)
        return StoredTokens.from_json(data) if isinstance(data, dict) else None

    async def set_tokens(self, resource: str, tokens: StoredTokens | None) -> None:
        await self._update("tokens", resource, None if tokens is None else tokens.to_json())

    async def get_client(self, issuer: str) -> ClientInformation | None:
        data = (await self._read()).get("clients", {}).get(issuer)
        return ClientInformation.from_json(data) if isinstance(data, dict) else None

    async def set_client(self, issuer: str, client: ClientInformation | None) -> None:
        await self._update("clients", issuer, None if client is None else client.to_json())

    def renewal_lock(self) -> AbstractAsyncContextManager[None]:
        """An exclusive lock on ``<path>.lock`` shared with every process (a no-op where ``fcntl`` is missing)."""
        return exclusive_file_lock(self.path.with_name(self.path.name + ".lock"))

    async def _read(self) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(self._read_sync)

    def _read_sync(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            return {}  # a damaged store is treated as empty; the next write replaces it
        return data if isinstance(data, dict) else {}

    async def _update(self, section: str, key: str, value: dict[str, Any] | None) -> None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            await anyio.to_thread.run_sync(self._update_sync, section, key, value)

    def _update_sync(self, section: str, key: str, value: dict[str, Any] | None) -> None:
        data = self._read_sync()
        entries = data.setdefault(section, {})
        if not isinstance(entries, dict):
            entries = data[section] = {}
        if value is None:
            entries.pop(key, None)
        else:
            entries[key] = value
        directory = self.path.parent
        make_private_dirs(directory)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)  # created 0600
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
