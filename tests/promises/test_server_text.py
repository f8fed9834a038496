"""A server's error message enters the client's errors as visible text: its control characters (a clipboard write, a
screen clear, a title change, an 8-bit CSI) are escapes in ``str(error)``, so a host that prints or logs the error
hands no terminal a character the server chose. (The matrix's ``hostile_text`` cells attack it on every path.)"""

from __future__ import annotations

import re

from mcp_client import InternalError, ServerError
from mcp_client._visible import visible

HOSTILE = "boom\x1b]52;c;aGk=\x07\x1b[2J\x1b]0;owned\x07\x9b31m\r"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_a_server_error_message_is_visible_text() -> None:
    error = ServerError.from_error({"code": -32603, "message": HOSTILE})
    assert isinstance(error, InternalError)
    assert not CONTROL.search(str(error)), repr(str(error))
    assert not CONTROL.search(error.message)
    assert str(error) == f"{visible(HOSTILE)} (code -32603)"  # (the package's one escape, whatever its spelling)
