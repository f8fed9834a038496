"""Red team of for_model through the errors ↔ outcomes protocol (room 3): the text a model (and a host's terminal,
a Temporal history, an adapter's log) reads carries no raw control character of the error's own fields, whoever
wrote them (a server's error message, a tool's text), and no URL userinfo of the MCP server's URL."""

from __future__ import annotations

import re

import pytest

from mcp_client.auth.trust import check_bound_issuer, pick_issuer
from mcp_client.errors import MCPClientError, ServerError
from tests.unit.test_error_tree import _every_module, _subclasses

_every_module()
ERRORS = sorted(_subclasses(MCPClientError) | {MCPClientError}, key=lambda cls: (cls.__module__, cls.__qualname__))

RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What a terminal acts on: C0 (but tab and newline), DEL and C1."""
HOSTILE = "boom\x1b]0;owned\x07\x1b[2J\rgone\x9b31m\x00end"
KEY = "sk-live-0123456789"


def _made(cls: type[MCPClientError], message: str) -> MCPClientError:
    error = cls.__new__(cls, message)
    MCPClientError.__init__(error, message, method="tools/call", request_ids=(1,), elapsed=0.5)
    error.tool = "reindex\x1b[31m"
    facts = {"written": True, "code": -32000, "task_id": "t-1", "reason": "stop\x1b[2J", "changed": ("title\x07",)}
    vars(error).update({k: v for k, v in facts.items() if not isinstance(getattr(cls, k, None), property)})
    return error


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__qualname__)
def test_for_model_has_no_raw_control_character(cls: type[MCPClientError]) -> None:
    text = _made(cls, HOSTILE).for_model
    assert not RAW_CONTROL.search(text), repr(text)


def test_a_server_error_message_reaches_for_model_without_its_controls() -> None:
    error = ServerError.from_error({"code": -32000, "message": HOSTILE})
    assert not RAW_CONTROL.search(error.for_model)
    assert "boom\\x1b]0;owned\\x07" in error.for_model  # shown, its controls written as escapes
    assert "line one\nline two" in ServerError.from_error({"code": 1, "message": "line one\nline two"}).for_model


def test_the_issuer_checks_show_no_userinfo_of_the_server_url() -> None:
    server_url = f"https://bob:{KEY}@mcp.example/mcp"
    with pytest.raises(MCPClientError) as picked:
        pick_issuer(["https://as.example"], "https://other.example", server_url=server_url)
    with pytest.raises(MCPClientError) as checked:
        check_bound_issuer("https://as.example", "https://other.example", server_url=server_url)
    for caught in (picked, checked):
        assert KEY not in str(caught.value)
        assert KEY not in caught.value.for_model
        assert "https://***@mcp.example/mcp" in str(caught.value)


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__qualname__)
def test_for_model_can_be_written_as_utf8_whatever_the_server_wrote(cls: type[MCPClientError]) -> None:
    """Red team: a lone surrogate escape in a server's error message (``"\\ud800"``, which JSON allows and the reader
    accepts) reached ``for_model`` raw: no UTF-8 writer (a model's API body, a log file, a durable history written
    by pydantic) could write the text."""
    text = _made(cls, "boom \ud800 end").for_model
    text.encode("utf-8")
    assert "\ud800" not in text
