"""Input from the host against real servers: elicitation and sampling, in both eras.

* The official Python SDK (mcp 2.3.0) at 2026-07-28: its ``greet_asking`` tool takes a parameter filled by a
  resolver that returns ``Elicit(...)``; the SDK turns it into an ``input_required`` result (``inputRequests`` plus a
  sealed ``requestState``), and resumes the tool when the client sends the request again with ``inputResponses``.
  At 2025-11-25 the same tool sends an ``elicitation/create`` request mid-call instead.
* ``@modelcontextprotocol/server-everything`` (2025-11-25): ``trigger-elicitation-request`` and
  ``trigger-sampling-request`` send ``elicitation/create`` / ``sampling/createMessage`` to the client mid-call and
  put the answer in their result. They are registered only for clients that declared the capability.

Real processes, real clocks, asyncio only.
"""

from __future__ import annotations

import json
import re

import mcp_types
import pytest

from mcp_client import Client, Event, MissingClientCapability, TimeoutPolicy, stdio

pytestmark = pytest.mark.anyio

POLICY = TimeoutPolicy(idle=20, maximum=60)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def texts(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


class Elicitor:
    def __init__(self, answer: mcp_types.ElicitResult) -> None:
        self.answer = answer
        self.asked: list[mcp_types.ElicitRequestParams] = []

    async def __call__(self, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        self.asked.append(params)
        return self.answer


ACCEPT_BOB = mcp_types.ElicitResult(action="accept", content={"name": "bob"})


# -- the official Python SDK ---------------------------------------------------------------------------------


async def test_python_sdk_input_required_round_is_answered_by_the_elicitation_handler(
    python_sdk_server_command: list[str],
) -> None:
    """2026-07-28: the SDK's input_required round reaches our handler; the retried call completes with the answer."""
    events: list[Event] = []
    elicitor = Elicitor(ACCEPT_BOB)
    command = python_sdk_server_command
    async with Client(
        stdio(command[0], command[1:]), timeout=POLICY, elicitation=elicitor, on_event=events.append
    ) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("greet_asking", {"greeting": "hi"})

    assert not result.is_error
    assert texts(result) == "hi bob"
    (asked,) = elicitor.asked
    assert isinstance(asked, mcp_types.ElicitRequestFormParams)
    assert asked.message == "Your name?"
    assert asked.requested_schema["properties"]["name"]["default"] == "anon"


async def test_python_sdk_gets_schema_defaults_for_an_empty_accept(python_sdk_server_command: list[str]) -> None:
    """Accepting with {}: the default ("anon") is filled in, so the SDK's validation passes."""
    command = python_sdk_server_command
    elicitor = Elicitor(mcp_types.ElicitResult(action="accept", content={}))
    async with Client(stdio(command[0], command[1:]), timeout=POLICY, elicitation=elicitor) as client:
        result = await client.call_tool("greet_asking")

    assert texts(result) == "hello anon"


async def test_python_sdk_refuses_to_ask_a_client_without_the_capability(python_sdk_server_command: list[str]) -> None:
    """No elicitation handler, so no capability in _meta: the SDK answers -32021 (missing client capability)."""
    command = python_sdk_server_command
    async with Client(stdio(command[0], command[1:]), timeout=POLICY) as client:
        with pytest.raises(MissingClientCapability):
            await client.call_tool("greet_asking")


async def test_python_sdk_legacy_elicitation_request_mid_call(python_sdk_server_command: list[str]) -> None:
    """2025-11-25: the same tool sends elicitation/create mid-call; our handler answers it."""
    command = python_sdk_server_command
    elicitor = Elicitor(ACCEPT_BOB)
    async with Client(
        stdio(command[0], command[1:]), timeout=POLICY, protocol="2025-11-25", elicitation=elicitor
    ) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("greet_asking", {"greeting": "hey"})

    assert texts(result) == "hey bob"
    assert len(elicitor.asked) == 1


# -- server-everything (2025-11-25) --------------------------------------------------------------------------


async def test_server_everything_elicitation_request(server_everything_command: list[str]) -> None:
    """trigger-elicitation-request: our handler gets the form; the defaults we fill in and our answer come back."""
    command = server_everything_command
    elicitor = Elicitor(mcp_types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True}))
    async with Client(stdio(command[0], command[1:]), timeout=POLICY, elicitation=elicitor) as client:
        assert client.protocol_version == "2025-11-25"
        assert "trigger-elicitation-request" in {tool.name for tool in await client.list_tools()}
        result = await client.call_tool("trigger-elicitation-request")

    assert not result.is_error
    text = texts(result)
    assert "User provided the requested information" in text
    assert "- Name: Ada Lovelace" in text
    assert "- Agreed to terms: true" in text
    assert "- Favorite Integer: 42" in text  # a schema default we filled in
    assert "- Favorite Number: 3.14" in text
    raw = json.loads(text.split("Raw result:", 1)[1])
    assert raw["action"] == "accept"
    assert raw["content"]["firstLine"] == "It was a dark and stormy night."
    assert raw["content"]["untitledMultipleSelectEnum"] == ["Guitar"]
    (asked,) = elicitor.asked
    assert isinstance(asked, mcp_types.ElicitRequestFormParams)
    assert asked.requested_schema["required"] == ["name"]


async def test_server_everything_elicitation_declined(server_everything_command: list[str]) -> None:
    command = server_everything_command
    elicitor = Elicitor(mcp_types.ElicitResult(action="decline"))
    async with Client(stdio(command[0], command[1:]), timeout=POLICY, elicitation=elicitor) as client:
        result = await client.call_tool("trigger-elicitation-request")

    assert "User declined" in texts(result)


async def test_server_everything_sampling_request(server_everything_command: list[str]) -> None:
    """trigger-sampling-request: our sampling handler gets the prompt and maxTokens; its answer is in the result."""
    asked: list[mcp_types.CreateMessageRequestParams] = []

    async def sample(params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        asked.append(params)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text="The capital of France is Paris."),
            model="test-model",
            stop_reason="endTurn",
        )

    command = server_everything_command
    async with Client(stdio(command[0], command[1:]), timeout=POLICY, sampling=sample) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert "trigger-sampling-request" in names
        assert "trigger-elicitation-request" not in names  # no elicitation handler, no capability
        result = await client.call_tool("trigger-sampling-request", {"prompt": "capital of France?", "maxTokens": 50})

    assert not result.is_error
    text = texts(result)
    payload = json.loads(re.sub(r"^LLM sampling result: \s*", "", text))
    assert payload["model"] == "test-model"
    assert payload["content"] == {"type": "text", "text": "The capital of France is Paris."}
    assert payload["role"] == "assistant"
    (params,) = asked
    assert params.max_tokens == 50
    message = params.messages[0].content
    assert isinstance(message, mcp_types.TextContent)
    assert message.text.endswith("capital of France?")
    assert params.system_prompt == "You are a helpful test server."
