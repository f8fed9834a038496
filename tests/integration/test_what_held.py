"""What a hostile server could not get, kept with tests: the stdio child runs without a shell, in its own session,
and its stderr is handed on in bounded pieces; an HTTP session id that is not printable ASCII is never sent back;
side documents of authorization are size-capped.

(The rest of what held is covered where it lives: the allow-listed environment in ``test_stdio_process``, redirects
of side requests and the secrets of a full client-credentials + DPoP flow in ``test_auth_trust``, PKCE, ``state``,
``iss``, issuer and resource checks in ``test_auth_flow`` and ``test_auth_discovery``, ``Mcp-Param-*`` encoding in
``test_tool_headers``, body caps in ``test_errors`` and ``test_http_transport``.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from mcp_client import Client, ConnectError, TimeoutPolicy
from mcp_client.auth._http import MAX_DOCUMENT, fetch
from mcp_client.transports.stdio._transport import stdio
from tests.integration.http_lines import mock_client
from tests.integration.test_http_transport import Server, client_for

pytestmark = pytest.mark.anyio

POLICY = TimeoutPolicy(idle=10, maximum=20, connect=10)
PEER = ["-m", "mcp_client.testing.peer"]


@pytest.mark.real_clock
async def test_the_command_runs_without_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    with pytest.raises(ConnectError):
        async with Client(stdio(f"true; touch {marker}"), timeout=POLICY):
            pass
    seen = tmp_path / "argv"
    record = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text(repr(sys.argv[2:]))"
    hostile = [f"; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", "*"]
    with pytest.raises(ConnectError):  # it records its arguments and exits: no session
        async with Client(stdio(sys.executable, ["-c", record, str(seen), *hostile]), timeout=POLICY):
            pass
    assert seen.read_text() == repr(hostile)  # each argument arrived as written
    assert not marker.exists()


@pytest.mark.real_clock
@pytest.mark.skipif(sys.platform == "win32", reason="sessions are a POSIX notion")
async def test_the_child_runs_in_a_session_of_its_own() -> None:
    async with Client(stdio(sys.executable, PEER), timeout=POLICY) as client:
        pid = client.server_process_id
        assert pid is not None
        assert os.getsid(pid) == pid  # it leads its own session: a terminal's signals to us do not reach it
        assert os.getsid(pid) != os.getsid(0)


@pytest.mark.real_clock
async def test_a_runaway_stderr_line_is_handed_on_in_bounded_pieces() -> None:
    pieces: list[str] = []
    script = "import sys; sys.stderr.write('x' * 1_000_000); sys.stderr.flush()"
    with pytest.raises(ConnectError):
        async with Client(stdio(sys.executable, ["-c", script], on_stderr=pieces.append), timeout=POLICY):
            pass
    assert sum(len(piece) for piece in pieces) == 1_000_000
    assert max(len(piece) for piece in pieces) <= 2 * 65536


@pytest.mark.parametrize(
    ("session_id", "echoed"),
    [("session-1", True), ("has space", False), ("tab\there", False), ("bell\x07", False), ("del\x7f", False)],
)
async def test_a_session_id_that_is_not_printable_ascii_is_never_sent_back(
    http_line: str, session_id: str, echoed: bool
) -> None:
    server = Server(legacy=True, session_id=session_id)
    async with (
        mock_client(http_line, server) as http_client,
        client_for(server, http_client, [], protocol="2025-11-25") as client,
    ):
        await client.call_tool("echo", {"text": "hi"})
    after_initialize = [r for r in server.requests if r.method == "POST"][1:]
    assert after_initialize
    assert [r.headers.get("mcp-session-id") for r in after_initialize] == [session_id if echoed else None] * len(
        after_initialize
    )


async def test_authorization_documents_are_size_capped() -> None:
    sent: list[int] = []

    async def endless() -> AsyncIterator[bytes]:
        for _ in range(4 * MAX_DOCUMENT // 65536):
            sent.append(65536)
            yield b"{" + b" " * 65535

    def huge(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=endless())

    async with httpx.AsyncClient(transport=httpx.MockTransport(huge)) as http:
        answer = await fetch(http, "GET", "https://as.test/.well-known/oauth-authorization-server")
    assert answer.body is None
    assert sum(sent) <= MAX_DOCUMENT + 2 * 65536  # reading stopped at the cap
