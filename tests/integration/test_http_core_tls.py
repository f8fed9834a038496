"""The engine over httpcore2 on ``https``: its own network backend wraps the socket in TLS (anyio's TLS stream, the
context httpx2 would make) and a call is answered through it, on a real local TLS socket with a certificate made
for the test (``cryptography``, which the dev install brings with ``joserfc``)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import anyio.streams.tls
import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mcp_client import Client, ConnectError, TimeoutPolicy
from mcp_client.transports.http import http
from mcp_client.transports.http._transport import engine_kind
from tests.integration.test_http_engines import Endpoint

pytestmark = [pytest.mark.anyio, pytest.mark.real_clock]

POLICY = TimeoutPolicy(idle=30, maximum=60, connect=30)


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@asynccontextmanager
async def serving_tls(endpoint: Endpoint, cert_file: Path, key_file: Path) -> AsyncIterator[str]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    tls = anyio.streams.tls.TLSListener(listener, context, standard_compatible=False)
    async with anyio.create_task_group() as tg:
        tg.start_soon(tls.serve, endpoint.serve)
        yield f"https://127.0.0.1:{port}/mcp"
        tg.cancel_scope.cancel()


async def test_a_call_over_tls_is_answered(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    cert_file, key_file = certificate
    trusting = ssl.create_default_context(cafile=str(cert_file))
    monkeypatch.setattr(httpx2, "create_ssl_context", lambda: trusting)  # the engine's TLS context: trusts ours
    endpoint = Endpoint()
    async with serving_tls(endpoint, cert_file, key_file) as url:
        assert engine_kind(http(url)) == "httpcore2"
        async with Client(http(url), protocol="2026-07-28", timeout=POLICY) as client:
            result = await client.call_tool("echo", {"text": "sealed"})
    assert result.content[0].text == "sealed"  # type: ignore[union-attr]
    assert endpoint.heads[1]["mcp-method"] == "tools/call"


async def test_an_untrusted_certificate_fails_the_call(certificate: tuple[Path, Path]) -> None:
    cert_file, key_file = certificate
    endpoint = Endpoint()
    async with serving_tls(endpoint, cert_file, key_file) as url:
        with pytest.raises(ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            async with Client(http(url), protocol="2026-07-28", timeout=POLICY) as client:
                await client.call_tool("echo", {"text": "nope"})
    assert endpoint.heads == []
