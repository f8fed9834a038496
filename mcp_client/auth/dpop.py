"""DPoP (RFC 9449): a per-client key, proofs for token requests and resource requests, and server nonces.

A proof is a JWT signed with the client's key and carrying the public key in its header; it names the HTTP method
and URL (without query or fragment), a fresh ``jti`` and ``iat``, the server's nonce when it asked for one
(``use_dpop_nonce``), and for resource requests ``ath``, the hash of the access token. Signing is joserfc's.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey

from mcp_client.auth._http import origin

__all__ = ["DPoPKey", "htu"]

_ALGORITHMS = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}


def htu(url: str) -> str:
    """The ``htu`` claim for ``url``: the URL without query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DPoPKey:
    """An EC key for DPoP proofs, and the nonces servers handed out for it (per origin).

    By default a new P-256 key is made (ES256, the algorithm every DPoP server supports). Pass a key to keep
    tokens usable across runs (tokens are bound to the key's thumbprint).
    """

    def __init__(self, key: ECKey | None = None) -> None:
        self._key = key if key is not None else ECKey.generate_key("P-256")
        curve = self._key.as_dict(private=False).get("crv")
        if not isinstance(curve, str) or curve not in _ALGORITHMS:
            raise ValueError(f"unsupported DPoP key curve {curve!r}")
        self.algorithm = _ALGORITHMS[curve]
        """The JWS algorithm of the proofs (``ES256`` for the default key)."""
        self._public = dict(self._key.as_dict(private=False))
        self.thumbprint: str = self._key.thumbprint()
        """RFC 7638 SHA-256 thumbprint of the public key (the ``jkt`` a bound token carries)."""
        self._nonces: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"DPoPKey({self.algorithm}, jkt={self.thumbprint})"

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """A fresh proof for one request (new ``jti``; the origin's latest nonce if it gave one)."""
        claims: dict[str, object] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        nonce = self._nonces.get(origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self._public}
        return jwt.encode(header, claims, self._key)

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep the ``DPoP-Nonce`` a server at ``url``'s origin sent; True if it is new."""
        if not nonce:
            return False
        key = origin(url)
        if self._nonces.get(key) == nonce:
            return False
        self._nonces[key] = nonce
        return True

    def nonce_for(self, url: str) -> str | None:
        """The nonce last received from ``url``'s origin."""
        return self._nonces.get(origin(url))
