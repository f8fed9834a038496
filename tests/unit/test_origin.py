"""One reading of a URL's origin for every same-origin check (issue 29, item 15): a port in non-ASCII digits,
which httpx2 connects to as written (fullwidth digits for 8443) while ``urlsplit`` cannot read it, is refused."""

from __future__ import annotations

import httpx2
import pytest

from mcp_client import TransportError
from mcp_client.auth._http import resource_covers, same_origin as auth_same_origin
from mcp_client.transports.origin import origin, same_origin
from mcp_client.transports.sse._endpoint import message_endpoint

FULLWIDTH_8443 = "\uff18\uff14\uff14\uff13"


def test_httpx2_connects_to_what_the_fullwidth_digits_say() -> None:
    assert httpx2.URL(f"https://host:{FULLWIDTH_8443}/m").port == 8443  # (why the check must not read it as 443)


def test_a_port_not_in_ascii_digits_is_refused() -> None:
    with pytest.raises(ValueError, match="ASCII digits"):
        origin(f"https://host:{FULLWIDTH_8443}/messages")
    assert not same_origin(f"https://host:{FULLWIDTH_8443}/messages", "https://host/sse")
    assert not auth_same_origin(f"https://host:{FULLWIDTH_8443}/", "https://host/")


def test_an_endpoint_event_naming_such_a_port_is_refused() -> None:
    with pytest.raises(TransportError, match="another origin"):
        message_endpoint("https://host/sse", f"https://host:{FULLWIDTH_8443}/messages".encode())
    with pytest.raises(TransportError, match="another origin"):
        message_endpoint("https://host/sse", f"//host:{FULLWIDTH_8443}/messages".encode())


def test_origins_as_the_connection_reads_them() -> None:
    assert origin("https://Host.Example/a") == ("https", "host.example", 443)
    assert origin("http://[::1]:8080/x") == ("http", "::1", 8080)
    assert same_origin("https://host:443/a", "https://HOST/b")
    assert not same_origin("https://host/a", "http://host/a")
    assert not same_origin("https://host:8443/a", "https://host/a")
    assert message_endpoint("https://host:8443/sse", b"/messages?s=1") == "https://host:8443/messages?s=1"
    assert resource_covers("https://host/mcp", "https://host:443/mcp/x")
    assert not resource_covers(f"https://host:{FULLWIDTH_8443}/mcp", "https://host/mcp")
