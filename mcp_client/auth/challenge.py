"""``WWW-Authenticate`` parsing (RFC 9110 §11.6.1) and what MCP reads from it (RFC 6750 §3, RFC 9728 §5.1,
RFC 9449 §7.1).

A header may hold several challenges (``Bearer realm="a", DPoP algs="ES256"``) and a response several headers;
each challenge is a scheme followed by a token68 or by comma-separated ``name=value`` parameters whose values may
be quoted strings with backslash escapes. Parameter names are case-insensitive; values are kept as sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Challenge", "parse_www_authenticate", "pick_challenge"]

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68 = _TCHAR | frozenset("/=")


@dataclass(frozen=True, slots=True)
class Challenge:
    """One authentication challenge: its scheme (lower-cased) and parameters (names lower-cased)."""

    scheme: str
    params: Mapping[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def resource_metadata(self) -> str | None:
        """RFC 9728: the URL of the protected resource metadata."""
        return self.params.get("resource_metadata") or None

    @property
    def scopes(self) -> tuple[str, ...] | None:
        """RFC 6750 ``scope``: the scopes needed, in order; None when the parameter is absent."""
        value = self.params.get("scope")
        return None if value is None else tuple(dict.fromkeys(value.split()))

    @property
    def error(self) -> str | None:
        """RFC 6750 ``error`` (``invalid_token``, ``insufficient_scope``) or RFC 9449 ``use_dpop_nonce``."""
        return self.params.get("error") or None


def parse_www_authenticate(headers: Iterable[str]) -> list[Challenge]:
    """Every challenge in ``headers`` (the values of all ``WWW-Authenticate`` fields), in order.

    Malformed parts are skipped rather than failing the whole header: a client must make the most of what the
    server sent.
    """
    challenges: list[Challenge] = []
    for header in headers:
        challenges.extend(_Parser(header).challenges())
    return challenges


def pick_challenge(challenges: Iterable[Challenge]) -> Challenge | None:
    """The challenge MCP acts on: ``DPoP`` if offered (it is the stronger binding), else ``Bearer``."""
    by_scheme = {c.scheme: c for c in reversed(list(challenges))}
    return by_scheme.get("dpop") or by_scheme.get("bearer")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def challenges(self) -> list[Challenge]:
        found: list[Challenge] = []
        while True:
            self._skip(" \t,")
            scheme = self._token(_TCHAR)
            if not scheme:
                if self.pos >= len(self.text):
                    return found
                self.pos += 1  # garbage: step over it
                continue
            found.append(self._rest_of_challenge(scheme.lower()))

    def _rest_of_challenge(self, scheme: str) -> Challenge:
        self._skip(" \t")
        start = self.pos
        token68 = self._token(_TOKEN68)
        after = self.pos
        self._skip(" \t")
        ends = self.pos >= len(self.text) or self._at(",")
        if token68 and ends and "=" not in token68.rstrip("="):
            return Challenge(scheme, {}, token68)
        self.pos = start
        if after == start:
            return Challenge(scheme)
        params: dict[str, str] = {}
        while True:
            self._skip(" \t")
            mark = self.pos
            name = self._token(_TCHAR)
            self._skip(" \t")
            if not name or not self._at("="):
                self.pos = mark  # the next challenge's scheme (or garbage)
                return Challenge(scheme, params)
            self.pos += 1
            self._skip(" \t")
            value = self._quoted() if self._at('"') else self._token(_TCHAR)
            params.setdefault(name.lower(), value)
            self._skip(" \t")
            if not self._at(","):
                return Challenge(scheme, params)
            self._skip(" \t,")

    def _at(self, char: str) -> bool:
        return self.text.startswith(char, self.pos)

    def _skip(self, chars: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def _token(self, allowed: frozenset[str]) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in allowed:
            self.pos += 1
        return self.text[start : self.pos]

    def _quoted(self) -> str:
        self.pos += 1  # the opening quote
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char == "\\" and self.pos < len(self.text):
                out.append(self.text[self.pos])
                self.pos += 1
            elif char == '"':
                break
            else:
                out.append(char)
        return "".join(out)
