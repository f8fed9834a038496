"""``mcp-client call`` against server-everything: structured content that a text block already carries as JSON (as
the spec asks servers to send it) is printed once."""

from __future__ import annotations

import json

import pytest

from mcp_client.cli import main


def test_structured_content_is_printed_once(
    capsys: pytest.CaptureFixture[str], server_everything_command: list[str]
) -> None:
    code = main(["call", "get-structured-content", '{"location": "New York"}', "--", *server_everything_command])
    out = capsys.readouterr().out

    assert code == 0
    assert out.count("temperature") == 1
    assert set(json.loads(out)) >= {"temperature", "conditions", "humidity"}
