"""The client the MCP conformance suite runs: ``conformance client --command "python tests/conformance/client.py"``.

The suite starts a scenario server, appends its URL to the command line, and sets ``MCP_CONFORMANCE_SCENARIO``
(the scenario's name), ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the version of this run) and, for some scenarios,
``MCP_CONFORMANCE_CONTEXT`` (JSON). This script does what each scenario expects of a client, using only
mcp_client's public API, and exits 0 on success, 1 when something failed, 2 for a scenario it does not know.

The verdict is the suite's: it judges what reached its server. Exiting non-zero here marks the run as failed too.

``MCP_CONFORMANCE_HTTP_ENGINE=httpx2`` (``run.py --engine httpx2``) sends every scenario through the httpx2 client
that ``http()`` makes when an auth flow or an environment proxy needs one, rather than through httpcore2's pool
(the engine of a plain ``http(url)``): a proxy is named here for every host but the local ones, and each
connection checks that it got the engine asked for.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import mcp_types

from mcp_client import Client, MCPClientError, TimeoutPolicy
from mcp_client.auth import (
    AuthorizationCode,
    ClientCredentials,
    ClientIdentity,
    ClientInformation,
    EnterpriseManaged,
    JwtBearer,
    OAuth,
    PrivateKeyJwt,
)
from mcp_client.extensions import SKILLS
from mcp_client.extensions.skills import SkillVerificationError
from mcp_client.transports.http import http
from mcp_client.transports.http._transport import engine_kind

logger = logging.getLogger("conformance-client")

Scenario = Callable[[str, dict[str, Any]], Awaitable[None]]
POLICY = TimeoutPolicy(idle=20, maximum=25, connect=20)
"""Below the suite's 30 s per-scenario timeout, so a hang ends here with a message rather than a kill."""
CLIENT_INFO = {"name": "mcp-client-conformance", "version": "0"}


def _protocol() -> str:
    """The version the suite runs this scenario at (it always sets it); ``auto`` if it did not."""
    return os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "auto"


ENGINE = os.environ.get("MCP_CONFORMANCE_HTTP_ENGINE")
"""The engine every connection must send through (None: whichever ``http()`` picks)."""
if ENGINE == "httpx2":
    os.environ["ALL_PROXY"] = "http://127.0.0.1:9"  # never used: the suite's servers are local, and so exempt
    os.environ["NO_PROXY"] = "127.0.0.1,localhost,::1"


def _client(url: str, *, auth: httpx.Auth | None = None, **options: Any) -> Client:
    options.setdefault("protocol", _protocol())
    transport = http(url, auth=auth)
    if ENGINE is not None and engine_kind(transport) != ENGINE:
        raise SystemExit(f"asked for the {ENGINE} engine, got {engine_kind(transport)} for {url}")
    return Client(transport, timeout=POLICY, client_info=CLIENT_INFO, **options)


def _text(result: mcp_types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


async def _accept_with_defaults(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    """A host whose user accepts every form untouched: the client fills in the schema's defaults (SEP-1034)."""
    return mcp_types.ElicitResult(action="accept", content={})


async def _confirm(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    """A host whose user ticks ``confirmed`` (the multi-round-trip scenario's form)."""
    return mcp_types.ElicitResult(action="accept", content={"confirmed": True})


# -- scenarios -------------------------------------------------------------------------------------------------


async def initialize(url: str, context: dict[str, Any]) -> None:
    """Handshake, then list tools (the scenario answers with none)."""
    async with _client(url) as client:
        await client.list_tools()


async def tools_call(url: str, context: dict[str, Any]) -> None:
    """List the tools and call ``add_numbers``; the answer must be the sum."""
    async with _client(url) as client:
        names = [tool.name for tool in await client.list_tools()]
        if "add_numbers" not in names:
            raise AssertionError(f"add_numbers is not among the tools: {names}")
        result = await client.call_tool("add_numbers", {"a": 5, "b": 3}, raise_on_error=True)
        if "8" not in _text(result):
            raise AssertionError(f"unexpected answer from add_numbers: {_text(result)!r}")


async def elicitation_defaults(url: str, context: dict[str, Any]) -> None:
    """The server asks for a form on the standalone GET stream while the tool call waits; accept it untouched."""
    async with _client(url, elicitation=_accept_with_defaults) as client:
        tools = [tool.name for tool in await client.list_tools()]
        result = await client.call_tool(tools[0], {}, raise_on_error=True)
        logger.info("tool answered: %s", _text(result))


async def sse_retry(url: str, context: dict[str, Any]) -> None:
    """The call's stream closes after a priming event: the transport resumes it with GET + Last-Event-ID."""
    async with _client(url) as client:
        await client.list_tools()
        result = await client.call_tool("test_reconnection", {}, raise_on_error=True)
        logger.info("tool answered: %s", _text(result))


async def request_metadata(url: str, context: dict[str, Any]) -> None:
    """Stateless requests with per-request ``_meta`` and the version header; the first one is refused (-32022)."""
    async with _client(url, elicitation=_accept_with_defaults) as client:
        await client.list_tools()
        await client.call_tool("anything", {})


async def standard_headers(url: str, context: dict[str, Any]) -> None:
    """Exercise every method whose ``Mcp-Method``/``Mcp-Name`` headers the scenario checks."""
    async with _client(url) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool.name, {})
        for resource in await client.list_resources():
            await client.read_resource(str(resource.uri))
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt.name)


async def custom_headers(url: str, context: dict[str, Any]) -> None:
    """Call the tools the context names with its arguments; ``Mcp-Param-*`` headers come from ``x-mcp-header``."""
    calls = context.get("toolCalls")
    if not isinstance(calls, list):
        raise AssertionError("MCP_CONFORMANCE_CONTEXT has no toolCalls")
    async with _client(url) as client:
        listed = {tool.name for tool in await client.list_tools()}
        for call in calls:
            if call["name"] not in listed:
                raise AssertionError(f"{call['name']} was not listed (or was excluded as invalid)")
            await client.call_tool(call["name"], call.get("arguments") or {})


async def invalid_tool_headers(url: str, context: dict[str, Any]) -> None:
    """Call every tool ``list_tools`` kept: tools with invalid ``x-mcp-header`` annotations must not be among them."""
    async with _client(url) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool.name, {"region": "us-west1"} if tool.name == "valid_tool" else {})


async def ref_no_deref(url: str, context: dict[str, Any]) -> None:
    """List tools whose schema has a network ``$ref``: nothing may fetch it."""
    async with _client(url) as client:
        tools = await client.list_tools()
        if not tools:
            raise AssertionError("no tools listed")


async def schema_preservation(url: str, context: dict[str, Any]) -> None:
    """List tools, then echo the focal tool's ``inputSchema`` back exactly as the client holds it."""
    async with _client(url) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        focal = next(tool for name, tool in tools.items() if name != "json_schema_echo")
        await client.call_tool("json_schema_echo", {"schema": focal.input_schema}, raise_on_error=True)


async def request_state(url: str, context: dict[str, Any]) -> None:
    """Multi-round-trip calls: state echoed, absent state omitted, an unrelated call between rounds stays clean."""
    async with _client(url, elicitation=_confirm) as client:
        await client.list_tools()
        expected = {
            "test_mrtr_echo_state": "echo-state-ok",
            "test_mrtr_unrelated": "unrelated-ok",
            "test_mrtr_no_state": "no-state-ok",
            "test_mrtr_no_result_type": "no-result-type-test-ok",
        }
        for name, answer in expected.items():
            got = _text(await client.call_tool(name, {}, raise_on_error=True))
            if got != answer:
                raise AssertionError(f"{name} answered {got!r}, expected {answer!r}")


async def skills_lazy(url: str, context: dict[str, Any]) -> None:
    """``sep-2640-client-no-prefetch``: list the skills and stop there: listing must read no skill file."""
    async with _client(url, extensions={SKILLS: {}}) as client:
        entries = await client.skills.list()
        logger.info("listed %d skills: %s", len(entries), [entry.name for entry in entries])


async def skills_verify(url: str, context: dict[str, Any]) -> None:
    """``sep-2640-client-verify-*``: a host using each listed skill: load it, then read every file it lists.

    The scenario serves a ``SKILL.md`` whose digest, size or frontmatter does not match its entry: the load must
    fail and no further file of that skill may be read. (A skill that loads has all its files read, so a client
    that let a tampered skill through would be caught reading the supporting file.)
    """
    async with _client(url, extensions={SKILLS: {}}) as client:
        for entry in await client.skills.list():
            try:
                skill = await client.skills.load(entry)
            except SkillVerificationError as exc:
                logger.info("refused skill %s (%s): %s", entry.uri, exc.kind, exc)
                continue
            for file in entry.files or ():
                await skill.read(file.uri)


REDIRECT_URI = "http://localhost:3000/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""What ``auth/basic-cimd`` expects as the client id (a Client ID Metadata Document URL)."""
REFUSAL_IS_THE_PASS = frozenset(
    {
        "auth/resource-mismatch",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "auth/scope-retry-limit",
    }
)
"""Scenarios where the client must refuse to go on (the suite allows the client's error exit there)."""


async def _follow_authorization(url: str) -> str:
    """The user's browser: the suite's authorization endpoint redirects at once, with the code."""
    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as browser:
        response = await browser.get(url)
    return response.headers["location"]


async def _configured_issuer(url: str) -> str:
    """The authorization server a host would have bound its static credentials to when it was set up.

    The suite hands over credentials without their issuer; an operator reads it from the server's protected
    resource metadata once, and so does this harness (the client itself never takes the server's word for it).
    """
    path = httpx.URL(url).path.rstrip("/")
    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as operator:
        for well_known in (f"/.well-known/oauth-protected-resource{path}", "/.well-known/oauth-protected-resource"):
            answer = await operator.get(httpx.URL(url).copy_with(path=well_known, query=None))
            if answer.status_code == 200:
                return str(answer.json()["authorization_servers"][0])
    raise RuntimeError(f"no protected resource metadata for {url}")


async def _oauth(scenario: str, context: dict[str, Any], url: str) -> OAuth:
    """The sign-in each auth scenario calls for, from the credentials the suite hands over in its context."""
    if scenario == "auth/client-credentials-jwt":
        key = PrivateKeyJwt.from_pem(context["private_key_pem"], context.get("signing_algorithm", "ES256"))
        return OAuth(ClientCredentials(context["client_id"], issuer=await _configured_issuer(url), private_key=key))
    if scenario == "auth/client-credentials-basic":
        issuer = await _configured_issuer(url)
        return OAuth(ClientCredentials(context["client_id"], issuer=issuer, client_secret=context["client_secret"]))
    if scenario == "auth/wif-jwt-bearer":
        issuer = await _configured_issuer(url)
        return OAuth(JwtBearer(context["valid_jwt"], issuer=issuer, client_id=context.get("client_id")))
    if scenario == "auth/enterprise-managed-authorization":
        return OAuth(
            EnterpriseManaged(
                id_token=context["idp_id_token"],
                idp_token_endpoint=context["idp_token_endpoint"],
                idp_client_id=context["idp_client_id"],
                idp_issuer=context.get("idp_issuer"),
                client_id=context["client_id"],
                client_secret=context.get("client_secret"),
                issuer=await _configured_issuer(url),
            )
        )
    registered = (
        (ClientInformation(context["client_id"], context.get("client_secret"), issuer=context.get("issuer")),)
        if "client_id" in context
        else ()
    )
    identity = ClientIdentity(
        client_name="mcp-client-conformance", client_metadata_url=CLIENT_METADATA_URL, pre_registered=registered
    )
    return OAuth(AuthorizationCode(REDIRECT_URI, _follow_authorization, identity=identity))


async def auth_session(url: str, context: dict[str, Any]) -> None:
    """``auth/*``: sign in as the scenario asks, then list and call the tools; refuse where refusing is right."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        async with _client(url, auth=await _oauth(scenario, context, url)) as client:
            for tool in await client.list_tools():
                await client.call_tool(tool.name, {})
    except MCPClientError as exc:
        if scenario not in REFUSAL_IS_THE_PASS:
            raise
        logger.info("%s: refused as expected: %s", scenario, exc)


SCENARIOS: dict[str, Scenario] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "request-metadata": request_metadata,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": ref_no_deref,
    "json-schema-2020-12-preservation": schema_preservation,
    "sep-2322-client-request-state": request_state,
    "sep-2640-client-no-prefetch": skills_lazy,
    "sep-2640-client-verify-digest": skills_verify,
    "sep-2640-client-verify-size": skills_verify,
    "sep-2640-client-verify-frontmatter": skills_verify,
}


def main(argv: list[str]) -> int:
    """Run the scenario the suite named against the URL it appended; the exit status is the verdict."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
    if len(argv) < 2:
        print("usage: client.py <server-url>", file=sys.stderr)
        return 2
    url = argv[-1]
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    scenario = SCENARIOS.get(name) or (auth_session if name.startswith("auth/") else None)
    if scenario is None:
        print(f"scenario {name!r} is not supported by this client", file=sys.stderr)
        return 2
    raw_context = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    context: dict[str, Any] = json.loads(raw_context) if raw_context else {}
    try:
        anyio.run(scenario, url, context)
    except (MCPClientError, AssertionError) as exc:
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"{name}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
