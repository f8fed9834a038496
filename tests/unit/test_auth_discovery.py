"""Discovery: where metadata is looked for and in which order, and the issuer / resource checks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from mcp_client.auth import DiscoveryError, IssuerMismatch, ResourceMismatch, discover
from mcp_client.auth._http import canonical, resource_covers, same_origin
from mcp_client.auth.discovery import authorization_server_metadata_urls, protected_resource_metadata_urls

pytestmark = pytest.mark.anyio

SERVER = "https://mcp.test/api/mcp"


def as_metadata(issuer: str) -> dict[str, object]:
    return {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token"}


class Documents:
    """A MockTransport serving JSON documents by URL, recording what was asked for."""

    def __init__(self, documents: dict[str, object]) -> None:
        self.documents = documents
        self.asked: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.asked.append(url)
        if url in self.documents:
            return httpx.Response(200, json=self.documents[url])
        return httpx.Response(404, text="not found")


@pytest.fixture
async def served() -> AsyncIterator[Callable[[dict[str, object]], tuple[Documents, httpx.AsyncClient]]]:
    clients: list[httpx.AsyncClient] = []

    def make(documents: dict[str, object]) -> tuple[Documents, httpx.AsyncClient]:
        served = Documents(documents)
        clients.append(httpx.AsyncClient(transport=httpx.MockTransport(served)))
        return served, clients[-1]

    yield make
    for client in clients:
        await client.aclose()


def test_protected_resource_metadata_order() -> None:
    header = "https://mcp.test/custom/prm.json"
    assert protected_resource_metadata_urls(SERVER, header) == [
        header,
        "https://mcp.test/.well-known/oauth-protected-resource/api/mcp",
        "https://mcp.test/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://mcp.test/", None) == [
        "https://mcp.test/.well-known/oauth-protected-resource"
    ]


def test_authorization_server_metadata_order() -> None:
    assert authorization_server_metadata_urls("https://as.test") == [
        "https://as.test/.well-known/oauth-authorization-server",
        "https://as.test/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://as.test/tenant1/") == [
        "https://as.test/.well-known/oauth-authorization-server/tenant1",
        "https://as.test/.well-known/openid-configuration/tenant1",
        "https://as.test/tenant1/.well-known/openid-configuration",
    ]


async def test_header_url_is_used_first(served: Callable[..., tuple[Documents, httpx.AsyncClient]]) -> None:
    header = "https://mcp.test/custom/prm.json"
    documents, http = served(
        {
            header: {"resource": SERVER, "authorization_servers": ["https://as.test"]},
            "https://as.test/.well-known/oauth-authorization-server": as_metadata("https://as.test"),
        }
    )
    found = await discover(http, SERVER, resource_metadata=header)
    assert found.resource == SERVER
    assert found.issuer == "https://as.test"
    assert documents.asked == [header, "https://as.test/.well-known/oauth-authorization-server"]


async def test_falls_back_path_then_root_then_openid(
    served: Callable[..., tuple[Documents, httpx.AsyncClient]],
) -> None:
    documents, http = served(
        {
            "https://mcp.test/.well-known/oauth-protected-resource": {
                "resource": "https://mcp.test",
                "authorization_servers": ["https://as.test/tenant1"],
                "scopes_supported": ["a"],
            },
            "https://as.test/tenant1/.well-known/openid-configuration": as_metadata("https://as.test/tenant1"),
        }
    )
    found = await discover(http, SERVER, resource_metadata="https://mcp.test/missing")
    assert found.resource == "https://mcp.test"  # exactly as published, for the resource parameter
    assert found.protected_resource is not None
    assert found.protected_resource.scopes_supported == ["a"]
    assert documents.asked == [
        "https://mcp.test/missing",
        "https://mcp.test/.well-known/oauth-protected-resource/api/mcp",
        "https://mcp.test/.well-known/oauth-protected-resource",
        "https://as.test/.well-known/oauth-authorization-server/tenant1",
        "https://as.test/.well-known/openid-configuration/tenant1",
        "https://as.test/tenant1/.well-known/openid-configuration",
    ]


async def test_issuer_must_match_exactly(served: Callable[..., tuple[Documents, httpx.AsyncClient]]) -> None:
    _, http = served(
        {
            "https://mcp.test/.well-known/oauth-protected-resource/api/mcp": {
                "resource": SERVER,
                "authorization_servers": ["https://as.test"],
            },
            "https://as.test/.well-known/oauth-authorization-server": as_metadata("https://as.test/"),
        }
    )
    with pytest.raises(IssuerMismatch, match=r"https://as\.test/"):
        await discover(http, SERVER)


async def test_resource_of_another_server_is_refused(
    served: Callable[..., tuple[Documents, httpx.AsyncClient]],
) -> None:
    documents, http = served(
        {
            "https://mcp.test/.well-known/oauth-protected-resource/api/mcp": {
                "resource": "https://evil.test/api/mcp",
                "authorization_servers": ["https://as.test"],
            },
        }
    )
    with pytest.raises(ResourceMismatch):
        await discover(http, SERVER)
    assert not any("as.test" in url for url in documents.asked)


async def test_legacy_fallback_uses_origin_and_default_endpoints(
    served: Callable[..., tuple[Documents, httpx.AsyncClient]],
) -> None:
    documents, http = served({})
    found = await discover(http, SERVER)
    assert found.legacy
    assert found.issuer == "https://mcp.test"
    assert found.metadata.authorization_endpoint == "https://mcp.test/authorize"
    assert found.metadata.token_endpoint == "https://mcp.test/token"
    assert found.metadata.registration_endpoint == "https://mcp.test/register"
    assert found.resource == SERVER
    assert documents.asked[-1] == "https://mcp.test/.well-known/oauth-authorization-server"
    with pytest.raises(DiscoveryError):
        await discover(http, SERVER, legacy_fallback=False)


async def test_invalid_documents_are_skipped(served: Callable[..., tuple[Documents, httpx.AsyncClient]]) -> None:
    _, http = served(
        {
            "https://mcp.test/.well-known/oauth-protected-resource/api/mcp": {"resource": 42},
            "https://mcp.test/.well-known/oauth-protected-resource": {
                "resource": SERVER,
                "authorization_servers": ["https://as.test"],
            },
            "https://as.test/.well-known/oauth-authorization-server": json.loads('{"issuer": "https://as.test"}'),
            "https://as.test/.well-known/openid-configuration": as_metadata("https://as.test"),
        }
    )
    found = await discover(http, SERVER)
    assert found.metadata.token_endpoint == "https://as.test/token"


@pytest.mark.parametrize(
    ("resource", "covers"),
    [
        ("https://mcp.test/api/mcp", True),
        ("https://mcp.test/api", True),
        ("https://mcp.test", True),
        ("https://MCP.test:443/api/mcp/", True),
        ("https://mcp.test/other", False),
        ("https://mcp.test/api/mc", False),
        ("http://mcp.test/api/mcp", False),
        ("https://mcp.test:8443/api/mcp", False),
        ("https://evil.test/api/mcp", False),
        ("https://mcp.test/api/mcp#frag", False),
    ],
)
def test_resource_covers(resource: str, covers: bool) -> None:
    assert resource_covers(resource, SERVER) is covers


def test_url_helpers() -> None:
    assert same_origin("https://a.test/x", "https://A.TEST:443/y")
    assert not same_origin("https://a.test", "http://a.test")
    assert canonical("HTTPS://Mcp.Test/api/mcp/?q=1#f") == "https://mcp.test/api/mcp"
