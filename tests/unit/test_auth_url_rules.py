"""The URL and issuer rules of :mod:`mcp_client.auth.trust`, as pure functions."""

from __future__ import annotations

import pytest

from mcp_client.auth import UnsafeURL, UntrustedIssuer
from mcp_client.auth.trust import check_bound_issuer, check_learned_url, is_loopback_host, pick_issuer

MCP = "http://mcp.internal:8080/mcp"


@pytest.mark.parametrize(
    "url",
    [
        "https://as.example/token",
        "HTTPS://AS.EXAMPLE/token",
        "http://localhost:9000/token",
        "http://127.0.0.1/token",
        "http://127.8.9.10/token",
        "http://[::1]:8000/token",
        "http://mcp.internal:8080/.well-known/oauth-protected-resource/mcp",  # the host's own origin
    ],
)
def test_accepted(url: str) -> None:
    assert check_learned_url(url, "token endpoint", trusted=(MCP,)) == url


@pytest.mark.parametrize(
    "url",
    [
        "http://as.example/token",
        "http://mcp.internal/mcp",  # another port: another origin
        "http://169.254.169.254/latest/meta-data/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "ftp://as.example/x",
        "https:///no-host",
        "http://[not-an-ip/x",
        "http://localhost.evil.example/x",
        "http://app.localhost/token",  # a name under .localhost goes to DNS on many systems: anything
        "http://localhost./token",  # the absolute name: resolvers may send it to DNS as well
        "http://LOCALHOST./token",
        "http://127.1/token",  # a short form the resolver reads as 127.0.0.1, but not a literal address
        "",
    ],
)
def test_refused(url: str) -> None:
    with pytest.raises(UnsafeURL, match="token endpoint"):
        check_learned_url(url, "token endpoint", trusted=(MCP,))


def test_a_long_refused_url_is_shortened_in_the_message() -> None:
    with pytest.raises(UnsafeURL) as caught:
        check_learned_url("file:///" + "a" * 10_000, "authorization endpoint")
    assert len(str(caught.value)) < 400


def test_loopback_hosts() -> None:
    """Exactly ``localhost`` or a literal loopback address: a name that only resolves to loopback by convention
    (``localhost.``, ``*.localhost``) may go to DNS and point anywhere."""
    assert is_loopback_host("LOCALHOST")
    assert is_loopback_host("::1")
    assert is_loopback_host("[::1]")
    assert is_loopback_host("127.0.0.1")
    assert is_loopback_host("127.8.9.10")
    assert not is_loopback_host("localhost.")
    assert not is_loopback_host("app.localhost")
    assert not is_loopback_host("app.localhost.")
    assert not is_loopback_host("localhost.example")
    assert not is_loopback_host("10.0.0.1")
    assert not is_loopback_host("")


@pytest.mark.parametrize(
    ("redirect_uri", "kind"),
    [
        ("http://127.0.0.1:8765/callback", "native"),
        ("http://localhost:8765/callback", "native"),
        ("http://[::1]:8765/callback", "native"),
        ("com.example.app:/callback", "native"),
        ("http://localhost.:8765/callback", "web"),
        ("http://app.localhost:8765/callback", "web"),
        ("https://app.example/callback", "web"),
    ],
)
def test_the_registration_calls_a_redirect_native_by_the_same_loopback_rule(redirect_uri: str, kind: str) -> None:
    from mcp_client.auth.registration import application_type

    assert application_type(redirect_uri) == kind


def test_a_bound_issuer_is_picked_exactly() -> None:
    listed = ["https://evil.example", "https://as.example"]
    assert pick_issuer(listed, "https://as.example", server_url=MCP) == "https://as.example"
    with pytest.raises(UntrustedIssuer, match="credentials are for"):
        pick_issuer(listed, "https://as.example/", server_url=MCP)  # no normalization (RFC 8414 §3.3)
    assert pick_issuer(listed, None, server_url=MCP) == "https://evil.example"  # unbound: the first, if it is safe
    with pytest.raises(UnsafeURL):
        pick_issuer(["http://evil.example"], None, server_url=MCP)
    check_bound_issuer("https://as.example", None, server_url=MCP)
    with pytest.raises(UntrustedIssuer):
        check_bound_issuer("https://evil.example", "https://as.example", server_url=MCP)
