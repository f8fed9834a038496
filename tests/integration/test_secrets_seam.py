"""The secrets seam: an endpoint has one redacted name (no userinfo, query, path secret or session id) and it is
the only name errors, ``for_model``, log records and spans get; the package's log records are made visible and
scrubbed of the configured secrets whatever their call site formats into them; the package installs a
``NullHandler`` so a bare host's stderr gets no record raw."""

from __future__ import annotations

import ast
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

import mcp_client
from mcp_client import Client, MCPClientError, ServerError, TimeoutPolicy, TransportError, memory
from mcp_client._log_guard import package_logger
from mcp_client._redact import looks_secret, redacted_url, remember_secrets, scrub
from mcp_client.protocol.logs import LOG_TEXT_LIMIT, log_text
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.http import http
from mcp_client.transports.http._transport import engine_kind
from mcp_client.transports.sse import sse
from mcp_client.transports.stdio._transport import stdio
from tests.integration.sse_peer import SsePeer
from tests.integration.test_http_engines import Endpoint, serving

pytestmark = pytest.mark.anyio

KEY = "sk-live-0123456789abcdef"
PATH_KEY = "sk-path-9a8b7c6d5e4f3a2b"
HEADER = "hdr-secret-value-77"
PASSWORD = "pw-0x5ecret"
SESSION = "7f3e9a1c-session-of-the-server"
COOKIE = "c00kie-of-the-server-42"
POLICY = TimeoutPolicy(idle=5, maximum=10, connect=5)
SECRETS = (KEY, PATH_KEY, HEADER, PASSWORD, "session_id=")
HOSTILE_SERVER = Path(__file__).with_name("hostile_text_server.py")


def _url(host: str, path: str = "mcp") -> str:
    return f"http://bob:{PASSWORD}@{host}/u/{PATH_KEY}/{path};token={KEY}?api_key={KEY}"


def _ours(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(
        logging.Formatter().format(record) for record in caplog.records if record.name.startswith("mcp_client")
    )


def _assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} shown in {text!r}"


def _shown(error: BaseException) -> list[str]:
    """The texts of the package's errors in the chain (an HTTP library's own exception, chained as the cause,
    is that library's: it reaches a log record of the package only scrubbed)."""
    texts: list[str] = []
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, MCPClientError):
            texts += [str(seen), seen.for_model]
        seen = seen.__cause__ or seen.__context__
    return texts


def test_the_path_rule() -> None:
    assert redacted_url(f"https://h.example/u/{PATH_KEY}/mcp") == "https://h.example/u/***/mcp"
    assert redacted_url(f"https://h.example/mcp;key={KEY}/x") == "https://h.example/mcp;key=***/x"
    assert redacted_url(f"https://h.example/t/key={KEY}") == "https://h.example/t/key=***"
    uuid = "550e8400-e29b-41d4-a716-446655440000"
    assert redacted_url(f"https://h.example/servers/{uuid}/sse") == "https://h.example/servers/***/sse"
    for plain in ("https://h.example/mcp", "https://h.example/v1/2025-11-25/streamable-http", "http://[::1]:80/mcp"):
        assert redacted_url(plain) == plain
    assert looks_secret("ghp_" + "a" * 30)
    assert looks_secret("eyJhbGciOiJIUzI1NiJ9")
    assert not looks_secret("messages")
    assert not looks_secret("v2")


def test_scrub_hides_configured_values_urls_and_credentials() -> None:
    remember_secrets(_url("scrub.test"), {"X-Api-Key": HEADER, "Authorization": f"Bearer {KEY}"})
    text = f"GET {_url('other.test')} failed; header {HEADER}; Authorization: Bearer eyJhbGciOi.x9; {PASSWORD}"
    _assert_no_secret(scrub(text))
    assert "http://***@other.test/u/***/mcp;token=***?***" in scrub(text)
    assert "Bearer ***" in scrub(text)
    assert scrub("a Bearer token; Basic authentication.") == "a Bearer token; Basic authentication."
    assert scrub("Authorization: Basic dXNlcjpwYXNz") == "Authorization: Basic ***"
    assert "https://docs.example/a?b=1" in scrub("see https://docs.example/a?b=1", urls=False)


async def test_an_sse_endpoint_on_another_origin_shows_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    """The refusal of an endpoint event on another origin named the configured URL and the endpoint raw."""
    caplog.set_level(logging.DEBUG)
    peer = SsePeer(ScriptedPeer(era="legacy"), endpoint=f"http://elsewhere.test/messages?session_id={KEY}")
    url = f"http://bob:{PASSWORD}@sse.test/sse?api_key={KEY}"  # (the peer serves /sse only)
    async with peer.serving() as client_http:
        with pytest.raises(MCPClientError) as caught:
            async with Client(sse(url, client=client_http), timeout=POLICY, retry=None):
                pass
    assert "another origin" in str(caught.value)
    _assert_no_secret(*_shown(caught.value), caught.value.for_model, _ours(caplog))


def _http_library_records(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        logging.Formatter().format(record)
        for record in caplog.records
        if record.name.split(".")[0] in ("httpx2", "httpcore2")
    ]


async def test_the_http_librarys_own_request_lines_name_no_secret_of_an_sse_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """httpx2 logs each request's whole URL at INFO ("HTTP Request: POST http://…"): over HTTP+SSE that named the
    configured URL's ``?api_key=`` and the session's id (a capability) on every POST, in a host that logs at INFO."""
    caplog.set_level(logging.DEBUG)
    peer = SsePeer(ScriptedPeer(era="legacy"))  # (its endpoint: /messages?session_id=<the session's id>)
    url = f"http://sse.test/sse?api_key={KEY}"
    async with (
        peer.serving() as client_http,
        Client(sse(url, client=client_http), timeout=POLICY, retry=None) as client,
    ):
        await client.call_tool("echo", {"text": "hi"})
    lines = _http_library_records(caplog)
    assert any("HTTP Request: POST" in line and "sse.test/messages" in line for line in lines)
    _assert_no_secret(*lines)


def _refuse(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError(f"connection to {request.url} refused", request=request)


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_http_and_sse_errors_show_no_secret_of_the_configuration(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A URL with userinfo, a path secret, a path parameter and a query, and a secret header; the HTTP library's
    own error names the full URL: none of it reaches the error, its for_model or a log record."""
    caplog.set_level(logging.DEBUG)
    headers = {"X-Api-Key": HEADER}
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(_refuse)) as client_http:
        transport = (http if kind == "http" else sse)(_url(f"{kind}.test"), headers=headers, client=client_http)
        _assert_no_secret(transport.description)
        with pytest.raises(MCPClientError) as caught:
            async with Client(transport, timeout=POLICY, retry=None):
                pass
    _assert_no_secret(*_shown(caught.value), caught.value.for_model, _ours(caplog))


@pytest.mark.real_clock
@pytest.mark.parametrize("engine", ["httpcore2", "httpx2"])
async def test_a_refused_connection_on_either_engine_shows_no_secret(
    engine: str, caplog: pytest.LogCaptureFixture
) -> None:
    """No client given, to a loopback port nothing listens on: httpcore2's pool, or (credentials in the URL)
    an httpx2 client of the transport's own."""
    caplog.set_level(logging.DEBUG)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = _url(f"127.0.0.1:{port}")
    if engine == "httpcore2":
        url = url.replace(f"bob:{PASSWORD}@", "")
    transport = http(url, headers={"X-Api-Key": HEADER})
    assert engine_kind(transport) == engine
    with pytest.raises(MCPClientError) as caught:
        async with Client(transport, timeout=POLICY, retry=None):
            pass
    _assert_no_secret(*_shown(caught.value), _ours(caplog))


@pytest.mark.real_clock
async def test_a_stdio_server_that_dies_shows_no_secret_argument(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    code = "import sys; sys.stderr.write(' '.join(sys.argv)); sys.exit(3)"
    transport = stdio(sys.executable, ["-c", code, "--api-key", KEY, f"--password={PASSWORD}", PATH_KEY])
    with pytest.raises(MCPClientError) as caught:
        async with Client(transport, timeout=POLICY, retry=None):
            pass
    _assert_no_secret(*_shown(caught.value), _ours(caplog))


async def test_a_server_message_naming_a_configured_secret_is_scrubbed() -> None:
    """The last line of defence: an error's text never holds a configured secret, whoever wrote it."""
    remember_secrets(headers={"X-Api-Key": HEADER})
    error = TransportError(f"the server echoed {HEADER}", written=True)
    _assert_no_secret(str(error), error.for_model, error.message)


def test_log_records_are_visible_and_scrubbed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    remember_secrets(headers={"X-Api-Key": HEADER})
    logger = package_logger("mcp_client.session")
    logger.info("server says %s", f"\x1b]52;c;ZXZpbA==\x07 {HEADER} \u202e")
    try:
        raise ValueError(f"boom \x1b[2J {HEADER}")
    except ValueError:
        logger.exception("failed at %s", _url("log.test"))
    text = caplog.text + _ours(caplog)
    _assert_no_secret(text)
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "\\x1b]52;c;ZXZpbA==\\x07" in text


def test_every_module_logs_through_the_guard() -> None:
    """A module that made its logger with ``logging.getLogger`` would log unguarded: none does."""
    package = Path(mcp_client.__file__).parent
    offenders = []
    for path in package.rglob("*.py"):
        if "testing" in path.parts or path.name == "_log_guard.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "logging.getLogger":
                offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []


def _bare_host_calls(tool: str) -> subprocess.CompletedProcess[bytes]:
    """A host that configured no logging and catches nothing, in a process of its own, calls ``tool`` of the
    hostile stdio server."""
    script = f"""
import anyio
from mcp_client import Client, stdio

async def main():
    async with Client(stdio({sys.executable!r}, [{str(HOSTILE_SERVER)!r}]), protocol="2025-11-25") as client:
        await client.call_tool({tool!r}, {{}})

anyio.run(main)
"""
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(mcp_client.__file__).parent.parent)},
    )


def test_a_bare_library_host_gets_no_server_text_on_its_stderr() -> None:
    """A host that configured no logging calls a tool of a server that logs hostile text at level error: Python's
    last-resort handler would write the record to stderr; the package's NullHandler keeps it off."""
    done = _bare_host_calls("hostile")
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stderr + done.stdout
    assert b"pwned" not in done.stderr


@pytest.mark.real_clock
async def test_a_server_log_message_enters_its_record_visible(caplog: pytest.LogCaptureFixture) -> None:
    """The session logs a server's ``notifications/message``: the record's own message (what any handler of the
    host formats) holds the server's escapes made visible."""
    caplog.set_level(logging.DEBUG, logger="mcp_client")
    async with Client(stdio(sys.executable, [str(HOSTILE_SERVER)]), protocol="2025-11-25", timeout=POLICY) as client:
        await client.call_tool("hostile", {})
    (record,) = [record for record in caplog.records if record.getMessage().startswith("server log:")]
    assert record.levelno == logging.ERROR
    assert "\\x1b]52;c;ZXZpbA==\\x07" in record.getMessage()
    for raw in ("\x1b", "\x9b", "\x85", "\u202e", "\r"):
        assert raw not in record.getMessage()


def test_a_server_log_message_is_cut() -> None:
    text = log_text("\x1b[2J" + "x" * 10_000)
    assert text.startswith("\\x1b[2J")
    assert len(text) < LOG_TEXT_LIMIT + 100
    assert text.endswith(f"({10_004 - LOG_TEXT_LIMIT} more characters)")
    assert log_text({"a": "\x1b"}) == "{'a': '\\x1b'}"


async def test_a_server_error_on_memory_echoing_the_configuration_shows_no_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server (here over the memory transport) that echoes another endpoint's configured URL and header in its
    error message: the configured values are scrubbed from the error, its for_model and the logs."""
    caplog.set_level(logging.DEBUG)
    configured = _url("echoed.test")
    http(configured, headers={"X-Api-Key": HEADER})  # configured (never connected): its secrets are known
    async with Client(memory(ScriptedPeer().serve), timeout=POLICY, retry=None) as client:
        with pytest.raises(ServerError) as caught:
            await client.call_tool("fail", {"message": f"upstream {configured} refused {HEADER}"})
    assert "echoed.test" in str(caught.value)
    _assert_no_secret(*_shown(caught.value), _ours(caplog))


def test_a_transport_shows_only_its_redacted_name() -> None:
    """repr() of a transport (in a host's log line, a traceback with locals, a debugger, a durable engine's payload)
    showed the URL's password and query, every header value, every argument and the environment whole, even
    short secrets that the scrub does not keep. Every transport shows its one redacted name instead."""
    short = "pw7"  # shorter than any value the scrub remembers
    transports = [
        http(f"http://user:{short}@127.0.0.1:1/mcp?key={short}", headers={"Authorization": f"Bearer {short}"}),
        sse(f"http://user:{short}@127.0.0.1:1/sse?key={short}", headers={"X-Api-Key": short}),
        stdio("server", ["--token", short], env={"API_KEY": short}),
    ]
    for transport in transports:
        shown = repr(transport)
        assert short not in shown, shown
        assert transport.description in shown


def test_a_server_error_a_bare_host_leaves_uncaught_reaches_its_terminal_visible() -> None:
    """A host that does not catch a server's error: Python writes the traceback, with the error's text, to stderr.
    The error's text carried the server's escapes raw (a title change and a screen clear here; OSC 52 would write
    the clipboard), as did ``error.message`` in a Temporal failure's details. Every error's text is made visible
    where it is made, as it is scrubbed there."""
    done = _bare_host_calls("missing")
    assert b"InvalidParams" in done.stderr, done.stderr
    assert b"\\x1b]0;pwned" in done.stderr  # made visible, not dropped
    assert b"\x1b" not in done.stderr + done.stdout


class _SessionEndpoint(Endpoint):
    """An endpoint whose every answer names a session id and sets a session cookie."""

    def answer(self, body: dict[str, Any]) -> bytes:
        head = f"HTTP/1.1 200 OK\r\nMcp-Session-Id: {SESSION}\r\nSet-Cookie: sid={COOKIE}; Path=/\r\n"
        return super().answer(body).replace(b"HTTP/1.1 200 OK\r\n", head.encode(), 1)


@pytest.mark.real_clock
async def test_the_http_engines_debug_traces_name_no_session_id_or_cookie(
    http_engine: str, caplog: pytest.LogCaptureFixture
) -> None:
    """httpcore2's loggers (children of ``httpcore2``, which a filter on that logger does not see) trace each
    answer's headers at DEBUG, on either engine: they named the ``Mcp-Session-Id`` and the ``Set-Cookie`` raw."""
    caplog.set_level(logging.DEBUG)
    async with (
        serving(_SessionEndpoint()) as url,
        Client(http(f"{url}?api_key={KEY}"), protocol="2026-07-28", timeout=POLICY, retry=None) as client,
    ):
        await client.call_tool("echo", {"text": "hi"})
    lines = _http_library_records(caplog)
    assert any("receive_response_headers.complete" in line and "Mcp-Session-Id" in line for line in lines)
    _assert_no_secret(*lines)
    assert not any(SESSION in line or COOKIE in line for line in lines)
