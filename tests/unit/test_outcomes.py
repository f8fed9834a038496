"""``exc.for_model``: the text a model gets for every error a call can end in.

Each error class says what happened, whether the server was told to stop, and whether the tool may have run
(from ``TransportError.written``, whether a request went out, and the tool's annotations).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from mcp_client import (
    Attempt,
    ConnectError,
    IdleTimeout,
    InternalError,
    InvalidParams,
    MaxTimeout,
    MCPClientError,
    MethodNotFound,
    ProtocolError,
    RequestCancelled,
    ServerError,
    ToolError,
    TransportError,
)
from mcp_client.errors import SessionExpired
from mcp_client.outcomes import Ran, may_have_run

READ_ONLY = mcp_types.ToolAnnotations(read_only_hint=True)
IDEMPOTENT = mcp_types.ToolAnnotations(idempotent_hint=True, read_only_hint=False)
DESTRUCTIVE = mcp_types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)

SENT: dict[str, Any] = {"method": "tools/call", "request_ids": (7,), "elapsed": 30.4}


def test_idle_timeout_of_a_sent_call_says_the_server_was_told_and_to_check_before_a_retry() -> None:
    error = IdleTimeout("tools/call: no sign of life from the server for 30 s", timeout=30, **SENT)
    error.about_tool("send_email", None)

    text = error.for_model
    assert text.startswith("The tool 'send_email' timed out after 30.4 s")
    assert "no sign of life for 30 s" in text
    assert "The client told the server to stop it." in text
    assert "check its effects before calling it again" in text
    assert may_have_run(error) is Ran.MAYBE


def test_max_timeout_names_its_limit() -> None:
    error = MaxTimeout("tools/call: the 600 s maximum passed", timeout=600, **SENT).about_tool("reindex", None)

    assert "did not finish within its time limit of 600 s" in error.for_model
    assert "told the server to stop" in error.for_model


@pytest.mark.parametrize(("hints", "word"), [(READ_ONLY, "read-only"), (IDEMPOTENT, "idempotent")])
def test_a_tool_safe_to_repeat_is_said_to_be(hints: mcp_types.ToolAnnotations, word: str) -> None:
    error = IdleTimeout("no sign of life", timeout=5, **SENT).about_tool("search", hints)

    assert f"it is {word}, so calling it again is safe" in error.for_model
    assert "check its effects" not in error.for_model


def test_a_destructive_tool_that_may_have_run_is_flagged() -> None:
    error = TransportError("the server process exited", written=True, **SENT).about_tool("drop_table", DESTRUCTIVE)

    text = error.for_model
    assert "the connection to the server broke during the call" in text
    assert "check its effects before calling it again" in text
    assert "It is marked destructive." in text
    assert "told the server to stop" not in text  # a dead channel carries no cancellation


def test_a_request_that_never_left_did_not_run() -> None:
    error = TransportError("broken pipe", written=False, retry_after=2.0, **SENT).about_tool("send_email", DESTRUCTIVE)

    text = error.for_model
    assert "could not be sent" in text
    assert "The tool did not run, so it is safe to try again after 2 s" in text
    assert may_have_run(error) is Ran.NO


def test_http_status_is_named() -> None:
    error = TransportError("HTTP 503 Service Unavailable", written=True, status_code=503, **SENT)

    assert "(HTTP 503)" in error.for_model


def test_a_call_cancelled_before_it_was_sent_did_not_run_and_nothing_was_told() -> None:
    error = RequestCancelled("tools/call was cancelled: stop", reason="stop", method="tools/call")

    assert "was cancelled (stop)" in error.for_model
    assert "told the server" not in error.for_model
    assert "did not run" in error.for_model


def test_a_cancelled_call_that_went_out_was_told_to_stop() -> None:
    error = RequestCancelled("tools/call was cancelled: user", reason="user", **SENT).about_tool("reindex", None)

    assert "The client told the server to stop it." in error.for_model
    assert may_have_run(error) is Ran.MAYBE


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (InvalidParams("unknown tool: nope", code=-32602, **SENT), "correct the arguments"),
        (MethodNotFound("tools/call not supported", code=-32601, **SENT), "is not available on the server"),
        (ConnectError("could not start 'srv'"), "could not be started or reached"),
        (SessionExpired("session gone", session_id="abc", **SENT), "ended the session"),
    ],
)
def test_refusals_say_the_tool_did_not_run(error: MCPClientError, expected: str) -> None:
    assert expected in error.for_model
    assert may_have_run(error) is Ran.NO
    assert "did not run" in error.for_model


@pytest.mark.parametrize(
    "error",
    [
        InternalError("database locked", code=-32603, **SENT),
        ServerError("odd", code=4242, **SENT),
        ProtocolError("tools/call: unknown resultType 'weird'", **SENT),
    ],
)
def test_a_failure_after_the_server_took_the_call_may_have_run(error: MCPClientError) -> None:
    assert may_have_run(error) is Ran.MAYBE
    assert "check its effects" in error.for_model


def test_tool_error_ran_and_reported() -> None:
    result = mcp_types.CallToolResult(content=[mcp_types.TextContent(text="disk full")], is_error=True)
    error = ToolError("tool 'save' failed: disk full", result=result, method="tools/call").about_tool("save", None)

    assert error.for_model.startswith("The tool 'save' ran and reported an error: tool 'save' failed: disk full.")
    assert may_have_run(error) is Ran.YES


def test_retries_are_counted_and_no_wire_details_leak() -> None:
    first = IdleTimeout("tools/call: no sign of life from the server for 5 s", timeout=5, request_ids=(3,))
    error = IdleTimeout("tools/call: no sign of life from the server for 5 s", timeout=5, **SENT)
    error.attempts = (Attempt(3, first, 0.0, 5.0), Attempt(7, error, 5.5, 10.5))
    error.about_tool("search", None)

    assert "(2 attempts)" in error.for_model
    assert "tools/call" not in error.for_model  # the method prefix of the message is left out
    assert "7" not in error.for_model  # request ids are wire details


def test_about_tool_keeps_what_is_known() -> None:
    error = IdleTimeout("x", timeout=1).about_tool("first", READ_ONLY).about_tool("second", None)

    assert (error.tool, error.tool_annotations) == ("first", READ_ONLY)


def test_an_authorization_failure_did_not_run() -> None:
    from mcp_client.auth import Unauthorized

    error = Unauthorized("the server refused the token it was just given").about_tool("send_email", DESTRUCTIVE)

    assert may_have_run(error) is Ran.NO
    assert "authorization with the server failed" in error.for_model
    assert "The tool did not run; calling it again needs the authorization fixed first." in error.for_model


def _runtime_imports(module: str) -> set[str]:
    """The package modules ``module`` imports when it runs (imports under ``if TYPE_CHECKING:`` left out)."""
    tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text())  # type: ignore[arg-type,union-attr]
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mcp_client"):
            found.add(node.module)
    return found


def test_errors_and_outcomes_import_one_way_the_text_is_the_outcomes_own() -> None:
    shared_core = {"mcp_client._visible", "mcp_client._redact"}  # the one escape and the one scrub: pure text
    assert _runtime_imports("mcp_client.outcomes") <= shared_core
    # Nothing else, not even for the type checker: outcomes reads an error through its ErrorFacts Protocol.
    source = Path(importlib.util.find_spec("mcp_client.outcomes").origin).read_text()  # type: ignore[arg-type,union-attr]
    assert (
        not {
            name
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for name in ([node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
            if name.split(".")[0] == "mcp_client"
        }
        - shared_core
    )
    assert "mcp_client.outcomes" in _runtime_imports("mcp_client.errors")
