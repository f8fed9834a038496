"""PKCE (RFC 7636) with the ``S256`` method, and the ``state`` value of an authorization request."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field

__all__ = ["Pkce", "new_state", "s256"]


def s256(verifier: str) -> str:
    """``BASE64URL(SHA256(ASCII(code_verifier)))`` without padding (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, slots=True)
class Pkce:
    """A fresh code verifier (64 random bytes: 86 characters of the unreserved set) and its S256 challenge."""

    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(64), repr=False)

    def __post_init__(self) -> None:
        if not 43 <= len(self.verifier) <= 128:
            raise ValueError("a PKCE code verifier has 43 to 128 characters")

    @property
    def challenge(self) -> str:
        """The ``code_challenge`` for the authorization request."""
        return s256(self.verifier)

    method = "S256"
    """The ``code_challenge_method``: always S256 (``plain`` is never used)."""


def new_state() -> str:
    """An unguessable ``state`` value (32 random bytes) binding the authorization response to this request."""
    return secrets.token_urlsafe(32)
