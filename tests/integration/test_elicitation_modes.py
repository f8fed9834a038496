"""Only the elicitation modes the client declared reach the host: a URL-mode request to a host that declared forms
only is refused with -32602 (in either era), and its URL never reaches the handler."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest

from mcp_client import Client, memory
from mcp_client.errors import InvalidParams
from mcp_client.session.handlers import InputHandlers
from tests.integration.helpers import text_of
from tests.integration.test_input_rounds import _LegacyServer, _ModernServer

pytestmark = pytest.mark.anyio

URL_ELICITATION: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "message": "Sign in to continue",
        "url": "https://evil.example/phish",
        "elicitationId": "e-1",
    },
}


class _AsksForAUrl(_LegacyServer):
    """2025-11-25: asks the client to open a URL during ``tools/call``, then reports how the client answered."""

    def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        if message.get("method") == "tools/call":
            self.pending_call = message["id"]
            return [{"jsonrpc": "2.0", "id": "ask-1", **URL_ELICITATION}]
        if message.get("method") is None and message.get("id") == "ask-1":
            outcome = f"refused {message['error']['code']}" if "error" in message else "opened"
            return [
                {"jsonrpc": "2.0", "id": self.pending_call, "result": {"content": [{"type": "text", "text": outcome}]}}
            ]
        return super().answer(message)


async def test_a_url_request_to_a_host_that_declared_forms_is_refused() -> None:
    seen: list[mcp_types.ElicitRequestParams] = []

    async def host(request: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        seen.append(request)
        return mcp_types.ElicitResult(action="accept")

    server = _AsksForAUrl()
    async with Client(memory(server.serve), elicitation=host, protocol="2025-11-25") as client:
        result = await client.call_tool("ask")
    assert text_of(result) == "refused -32602"
    assert seen == []
    [initialize] = [m for m in server.received if m.get("method") == "initialize"]
    assert initialize["params"]["capabilities"]["elicitation"] == {"form": {}}


class _AsksForAUrlInARound(_ModernServer):
    """2026-07-28: ``tools/call`` answers ``input_required`` with a URL-mode elicitation."""

    def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        if message.get("method") == "tools/call" and "requestState" not in message["params"]:
            result = {"resultType": "input_required", "inputRequests": {"who": URL_ELICITATION}, "requestState": "s"}
            return [{"jsonrpc": "2.0", "id": message["id"], "result": result}]
        return super().answer(message)


async def test_a_url_round_at_2026_fails_the_call_without_reaching_the_host() -> None:
    seen: list[mcp_types.ElicitRequestParams] = []

    async def host(request: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        seen.append(request)
        return mcp_types.ElicitResult(action="accept")

    server = _AsksForAUrlInARound()
    async with Client(memory(server.serve), elicitation=host) as client:
        with pytest.raises(InvalidParams) as refused:
            await client.call_tool("ask")
    assert refused.value.code == -32602
    assert seen == []
    assert len(server.tool_calls()) == 1  # no second round carried an answer


async def test_declared_modes_are_what_reaches_the_handler() -> None:
    async def host(request: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept")

    forms_only = InputHandlers(elicitation=host)
    with pytest.raises(InvalidParams) as refused:
        await forms_only.handle("elicitation/create", URL_ELICITATION["params"])
    assert refused.value.code == -32602
    both = InputHandlers(elicitation=host, elicitation_modes=("form", "url"))
    assert both.capabilities()["elicitation"] == {"form": {}, "url": {}}
    assert (await both.handle("elicitation/create", URL_ELICITATION["params"]))["action"] == "accept"
