"""How endpoints are named in errors, logs and spans without the secrets their configuration may hold.

A stdio command's arguments often carry keys (``--api-key sk-...``) and a URL's userinfo, query and path may too
(``https://user:password@host/u/sk-live-.../mcp?api_key=...``). An endpoint has one redacted name, and it is the
only name any error, ``for_model``, log record, span or failure reason gets:

* :func:`command_summary` shows the command and how many arguments it has, never their values;
* :func:`redacted_url` keeps scheme, host, port and path, replaces userinfo and a query with ``***``, drops the
  fragment, and replaces each path segment that :func:`looks_secret` with ``***`` (the keys of ``key=value``
  path parameters stay, their values go).

The path rule (:func:`looks_secret`), after percent-decoding a segment:

* a known key prefix followed by at least 8 more characters (``sk-``, ``sk_``, ``pk_``, ``rk_``, ``ghp_``,
  ``github_pat_``, ``xoxb-``, ``glpat-``, ``AKIA``, ``eyJ`` (a JWT), ``Bearer``, ``key-``, ``token-``...);
* or, with no ``/``, ``\\``, ``.``, ``:``, ``@`` or space in it (those make a file path, a host name, an address
  or a sentence), 20 characters or more with at least one letter and one digit (a random token, a UUID, a hash),
  or 32 characters or more of letters only (a random token without digits).

Plain words, versions and dates (``mcp``, ``v1``, ``2025-11-25``, ``streamable-http``) stay.

As a last line of defence, :func:`remember_secrets` keeps the values a host configured (header values, the URL's
userinfo and query values, secret-looking path segments, command arguments and the values of secret-named flags
and environment variables; values of 8 characters or more; at most :data:`REMEMBERED` of them, the oldest forgotten
first) and :func:`scrub` replaces them, every URL in the text (by :func:`redacted_url`),
``Bearer``/``Basic``/``DPoP`` credentials, and the value of a header written the way the HTTP libraries' debug
traces write one (``(b'Set-Cookie', b'...')``) whose name says secret, with ``***``. The package's loggers scrub
every record with it (:mod:`mcp_client._log_guard`), and so do the OpenTelemetry spans, every error's message and
``for_model`` (those two leave other URLs whole). Pure functions of strings and that one bounded memory; nothing of
the package.
"""

from __future__ import annotations

import _thread
import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["REMEMBERED", "command_summary", "looks_secret", "redacted_url", "remember_secrets", "scrub"]

HIDDEN = "***"

_KEY_PREFIXES = re.compile(
    r"^(sk|pk|rk|sess|whsec|ak)[-_]|^(ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs]|shpat|shpss|AKIA|ASIA|AIza"
    r"|eyJ|Bearer|key-|token-|api[-_]?key)",
    re.IGNORECASE,
)
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"[0-9]")
_ONLY_LETTERS = re.compile(r"^[A-Za-z]+$")
_NOT_A_TOKEN = re.compile(r"[/\\.:@ ]")


def looks_secret(segment: str) -> bool:
    """Does one path segment (or argument) look like a secret? See the module docstring for the rule."""
    from urllib.parse import unquote

    text = unquote(segment)
    match = _KEY_PREFIXES.match(text)
    if match and len(text) - match.end() >= 8:
        return True
    if _NOT_A_TOKEN.search(text):
        return False  # a file path, a host name, an address, a sentence
    if len(text) >= 20 and _LETTER.search(text) and _DIGIT.search(text):
        return True
    return len(text) >= 32 and bool(_ONLY_LETTERS.match(text))


def command_summary(command: str, args: Sequence[str]) -> str:
    """``npx (3 arguments)``: the command as given and the number of its arguments, never their values."""
    if not args:
        return command
    return f"{command} ({len(args)} argument{'s' if len(args) != 1 else ''})"


def _redacted_segment(segment: str) -> str:
    if "=" in segment:  # path parameters: /x;key=value, /key=value
        return ";".join(
            f"{part.partition('=')[0]}={HIDDEN}" if "=" in part else _redacted_segment(part)
            for part in segment.split(";")
        )
    return HIDDEN if looks_secret(segment) else segment


def redacted_path(path: str) -> str:
    """``path`` with each segment that :func:`looks_secret` as ``***`` and path parameters' values hidden."""
    return "/".join(_redacted_segment(segment) for segment in path.split("/"))


def redacted_url(url: str) -> str:
    """``url`` without its userinfo, query, fragment and path secrets (each shown as ``***``)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return HIDDEN  # not a URL one can take apart: show none of it
    if not parts.scheme or host is None:
        return url if "@" not in url and "?" not in url and not looks_secret(url) else HIDDEN
    shown_host = f"[{host}]" if ":" in host else host
    netloc = shown_host if port is None else f"{shown_host}:{port}"
    if "@" in parts.netloc:  # a user name can be a token too (https://<token>@host)
        netloc = f"{HIDDEN}@{netloc}"
    query = f"?{HIDDEN}" if parts.query else ""
    return f"{parts.scheme}://{netloc}{redacted_path(parts.path)}{query}"


REMEMBERED = 512
"""How many configured secret values :func:`remember_secrets` keeps (the oldest are forgotten first)."""
_MIN_LENGTH = 8
"""Shorter values are not kept (``1``, ``true``, ``europe``): they would hide common words, and guard no secret."""
_PUBLIC_HEADERS = frozenset({"accept", "content-type", "user-agent", "mcp-protocol-version", "accept-encoding"})
_secrets: dict[str, None] = {}
_longest_first: tuple[str, ...] = ()
"""The same values, longest first (one that holds another is replaced whole); rebuilt by :func:`_keep`, read
without a lock."""
_lock = _thread.allocate_lock()  # (threading and urllib.parse load on first use: errors.py imports this)


def _keep(values: Iterable[str]) -> None:
    global _longest_first
    with _lock:
        new = False
        for value in values:
            if len(value) < _MIN_LENGTH:
                continue
            new = new or value not in _secrets
            _secrets.pop(value, None)
            _secrets[value] = None  # (kept again: now the newest)
            while len(_secrets) > REMEMBERED:
                del _secrets[next(iter(_secrets))]
        if new:
            _longest_first = tuple(sorted(_secrets, key=len, reverse=True))


def _secrets_of_url(url: str) -> list[str]:
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        found += [userinfo, *userinfo.split(":"), *(unquote(value) for value in userinfo.split(":"))]
    if parts.query:
        found.append(parts.query)
        for _, value in parse_qsl(parts.query, keep_blank_values=True):
            found.append(value)
    for segment in parts.path.split("/"):
        for part in segment.split(";"):
            value = part.partition("=")[2] if "=" in part else part
            if "=" in part or looks_secret(part):
                found += [value, unquote(value)]
    return found


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL|COOKIE|SESSION", re.IGNORECASE)


def remember_secrets(
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> None:
    """Keep the secrets of an endpoint's configuration for :func:`scrub`: ``url``'s userinfo, query values and
    secret-looking path segments, every header value but those of a few public headers (and a credential's token
    after its scheme), each argument that :func:`looks_secret` (and the value of ``--name=value``), and the
    values of environment variables whose names say secret (``API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``)."""
    values: list[str] = [value for name, value in (env or {}).items() if _SECRET_NAME.search(name)]
    if url:
        values += _secrets_of_url(url)
    for name, value in (headers or {}).items():
        if name.lower() in _PUBLIC_HEADERS:
            continue
        scheme, space, credential = value.partition(" ")  # Bearer <token>: the token is the secret
        values.append(credential if space and scheme.isalpha() else value)
    values += [arg for arg in args if looks_secret(arg)]
    for arg, following in zip(args, [*args[1:], ""], strict=False):  # (no args: no pairs)
        flag, equals, value = arg.partition("=")
        if flag.startswith("-") and _SECRET_NAME.search(flag):  # --api-key=VALUE, --token VALUE
            values.append(value if equals else following)
    _keep(values)


_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+")
_CREDENTIAL = re.compile(r"\b(Bearer|Basic|DPoP) +([A-Za-z0-9._~+/=-]{8,})")
"""An ``Authorization`` value as written in a header: the scheme as spelled there and a token of 8 characters or
more; :func:`_credential` hides it when it looks like one (prose such as "a Bearer token" stays)."""
_TOKENISH = re.compile(r"[0-9_~+/=]|.[A-Z]")
"""A digit, a base64 symbol, or a capital after the first letter: what a token has and a word of prose has not."""
_HEADER_PAIR = re.compile(r"""\((b?)(['"])([A-Za-z0-9_.-]+)\2, (b?)(['"])(.*?)\5\)""")
"""A header as the HTTP libraries' debug traces write it, ``(b'Mcp-Session-Id', b'...')``: its value is hidden when
its name says secret (a session id, a cookie, an authorization or a key the server sets or the client sends)."""


def _credential(match: re.Match[str]) -> str:
    return f"{match.group(1)} {HIDDEN}" if _TOKENISH.search(match.group(2)) else match.group()


def scrub(text: str, *, urls: bool = True) -> str:
    """``text`` with every value :func:`remember_secrets` kept and ``Bearer``/``Basic``/``DPoP`` credentials
    replaced by ``***`` (and so the value of a secret-named header written ``(b'Name', b'value')``), and (``urls``)
    every URL redacted. Errors scrub without ``urls``: a server's message may
    name a URL of its own that its reader needs whole; logs and spans scrub with it."""
    if urls and "://" in text:
        text = _URL.sub(lambda match: _redacted_in_text(match.group()), text)
    text = _CREDENTIAL.sub(_credential, text)
    if "', b'" in text or "', '" in text:
        text = _HEADER_PAIR.sub(_header_pair, text)
    for value in _longest_first:
        if value in text:
            text = text.replace(value, HIDDEN)
    return text


def _header_pair(match: re.Match[str]) -> str:
    prefix, quote, name, value_prefix, value_quote, _ = match.groups()
    if not _SECRET_NAME.search(name):
        return match.group()
    return f"({prefix}{quote}{name}{quote}, {value_prefix}{value_quote}{HIDDEN}{value_quote})"


def _redacted_in_text(url: str) -> str:
    trail = ""
    while url and url[-1] in ".,;:)]}":  # a sentence's punctuation after the URL
        trail = url[-1] + trail
        url = url[:-1]
    return redacted_url(url) + trail
