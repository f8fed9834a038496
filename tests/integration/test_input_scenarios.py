"""Input from the host (elicitation, sampling, roots) against the scripted peer, in both eras.

2026-07-28: the peer's ``ask`` tool answers ``input_required`` (one elicitation, ``requestState`` "opaque-<n>")
``rounds`` times, then answers with the name it received; ``ask_many`` asks for a name, a sampling answer and the
roots in one round. 2025-11-25: ``elicit_client`` sends the client an ``elicitation/create`` (or sampling, roots)
request mid-call and answers with the client's result.

Timing tests run on trio's MockClock (``fake_clock``); the rest on asyncio and trio alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types
import pytest

from mcp_client import (
    Client,
    Event,
    IdleTimeout,
    MaxTimeout,
    MCPClientError,
    ProtocolError,
    RequestCancelled,
    ServerError,
    TimeoutPolicy,
)
from mcp_client.protocol.era import CLIENT_CAPABILITIES_KEY
from mcp_client.testing.peer import ScriptedPeer
from tests.integration.helpers import text_of

pytestmark = pytest.mark.anyio

Connect = Callable[..., Client]
JSON = dict[str, Any]

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "default": "anon"}}}


def tool_calls(peer: ScriptedPeer) -> list[JSON]:
    return [m for m in peer.stats.received if m.get("method") == "tools/call"]


def meta_of(message: JSON) -> JSON:
    meta: JSON = message["params"].get("_meta", {})
    return meta


class Elicitor:
    """An elicitation handler that records what it was asked and answers ``answer`` after ``delay`` seconds."""

    def __init__(self, answer: mcp_types.ElicitResult | None = None, delay: float = 0.0) -> None:
        self.answer = answer or mcp_types.ElicitResult(action="accept", content={"name": "bob"})
        self.delay = delay
        self.asked: list[mcp_types.ElicitRequestParams] = []

    async def __call__(self, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        self.asked.append(params)
        if self.delay == float("inf"):
            await anyio.sleep_forever()
        await anyio.sleep(self.delay)
        return self.answer


async def sampler(params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
    assert params.max_tokens == 100
    question = params.messages[0].content
    assert isinstance(question, mcp_types.TextContent)
    assert question.text == "What is the capital of France?"
    return mcp_types.CreateMessageResult(
        role="assistant", content=mcp_types.TextContent(type="text", text="Paris"), model="test-model"
    )


async def roots_lister(params: mcp_types.RequestParams) -> mcp_types.ListRootsResult:
    return mcp_types.ListRootsResult(roots=[mcp_types.Root.model_validate({"uri": "file:///work", "name": "work"})])


# -- 2026-07-28: input_required rounds -----------------------------------------------------------------------


async def test_each_round_gets_a_fresh_id_and_token_and_echoes_request_state(connect: Connect) -> None:
    """Three rounds: four requests, each with its own id and progress token; requestState echoed exactly; the
    original arguments kept; the answers sent as bare results under the request's key."""
    peer = ScriptedPeer(era="modern")
    elicitor = Elicitor()
    async with connect(peer, elicitation=elicitor) as client:
        result = await client.call_tool("ask", {"rounds": 3})

    assert text_of(result) == "bob"
    calls = tool_calls(peer)
    assert len(calls) == 4
    ids = [m["id"] for m in calls]
    tokens = [meta_of(m).get("progressToken") for m in calls]
    assert len(set(ids)) == 4
    assert None not in tokens
    assert len(set(tokens)) == 4
    assert [m["params"].get("requestState") for m in calls] == [None, "opaque-1", "opaque-2", "opaque-3"]
    assert "requestState" not in calls[0]["params"]
    assert "inputResponses" not in calls[0]["params"]
    assert all(m["params"]["arguments"] == {"rounds": 3} for m in calls)
    assert all(m["params"]["name"] == "ask" for m in calls)
    for later in calls[1:]:
        assert later["params"]["inputResponses"] == {"name": {"action": "accept", "content": {"name": "bob"}}}
    assert len(elicitor.asked) == 3


async def test_request_state_is_never_added_when_the_server_sent_none(connect: Connect) -> None:
    """state=false: the server sends no requestState, and the retry carries none."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, elicitation=Elicitor()) as client:
        result = await client.call_tool("ask", {"state": False})

    assert text_of(result) == "bob"
    first, second = tool_calls(peer)
    assert "requestState" not in first["params"]
    assert "requestState" not in second["params"]
    assert second["params"]["inputResponses"] == {"name": {"action": "accept", "content": {"name": "bob"}}}


async def test_the_handler_receives_mcp_types_form_params(connect: Connect) -> None:
    """The elicitation handler gets an ElicitRequestFormParams, as sent."""
    peer = ScriptedPeer(era="modern")
    elicitor = Elicitor()
    async with connect(peer, elicitation=elicitor) as client:
        await client.call_tool("ask")

    (asked,) = elicitor.asked
    assert isinstance(asked, mcp_types.ElicitRequestFormParams)
    assert asked.mode == "form"
    assert asked.message == "Your name?"
    assert asked.requested_schema == NAME_SCHEMA


async def test_schema_defaults_fill_an_accepted_form_left_empty(connect: Connect) -> None:
    """A handler accepting with {} answers with the schema's defaults."""
    peer = ScriptedPeer(era="modern")
    elicitor = Elicitor(mcp_types.ElicitResult(action="accept", content={}))
    async with connect(peer, elicitation=elicitor) as client:
        result = await client.call_tool("ask")

    assert text_of(result) == "anon"
    assert tool_calls(peer)[1]["params"]["inputResponses"] == {
        "name": {"action": "accept", "content": {"name": "anon"}}
    }


async def test_a_declined_form_gets_no_defaults(connect: Connect) -> None:
    """Declining sends the decline as is: no content is made up."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, elicitation=Elicitor(mcp_types.ElicitResult(action="decline"))) as client:
        result = await client.call_tool("ask")

    assert text_of(result) == "<decline>"
    assert tool_calls(peer)[1]["params"]["inputResponses"] == {"name": {"action": "decline"}}


async def test_rounds_are_capped_by_max_input_rounds(connect: Connect) -> None:
    """A server that keeps asking: after max_input_rounds answered rounds the call fails with ProtocolError."""
    peer = ScriptedPeer(era="modern")
    elicitor = Elicitor()
    async with connect(peer, elicitation=elicitor, max_input_rounds=3) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("ask", {"rounds": 20})

    assert len(tool_calls(peer)) == 4
    assert len(elicitor.asked) == 3
    assert caught.value.method == "tools/call"
    assert len(caught.value.request_ids) == 4


async def test_without_any_handler_input_required_is_a_protocol_error(connect: Connect) -> None:
    """No handler: the server asked for what the client never offered (its _meta declares no elicitation)."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer) as client:
        with pytest.raises(ProtocolError):
            await client.call_tool("ask")

    (only,) = tool_calls(peer)
    assert "elicitation" not in meta_of(only)[CLIENT_CAPABILITIES_KEY]


async def test_capabilities_in_meta_follow_the_handlers(connect: Connect) -> None:
    """Each handler that exists is declared in every request's _meta, and only those."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, elicitation=Elicitor(), roots=roots_lister) as client:
        await client.call_tool("echo", {"text": "x"})

    capabilities = meta_of(tool_calls(peer)[0])[CLIENT_CAPABILITIES_KEY]
    assert "elicitation" in capabilities
    assert "roots" in capabilities
    assert "sampling" not in capabilities


async def test_an_input_request_without_its_handler_is_a_protocol_error(connect: Connect) -> None:
    """Only a sampling handler, and the server asks for elicitation (undeclared): ProtocolError, like no handler."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, sampling=sampler) as client:
        with pytest.raises(ProtocolError):
            await client.call_tool("ask")

    assert len(tool_calls(peer)) == 1


async def test_sampling_elicitation_and_roots_in_one_round(connect: Connect) -> None:
    """ask_many: three input requests in one round, each answered by its handler; bare results, keyed as asked."""
    peer = ScriptedPeer(era="modern")
    async with connect(peer, elicitation=Elicitor(), sampling=sampler, roots=roots_lister) as client:
        result = await client.call_tool("ask_many")

    responses = json.loads(text_of(result))
    assert responses == {
        "name": {"action": "accept", "content": {"name": "bob"}},
        "capital": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "test-model"},
        "roots": {"roots": [{"uri": "file:///work", "name": "work"}]},
    }
    assert all("resultType" not in answer for answer in responses.values())


async def test_a_failing_handler_ends_the_call_and_nothing_more_is_sent(connect: Connect) -> None:
    """A handler that raises aborts the call locally: no further round goes to the server."""
    peer = ScriptedPeer(era="modern")

    async def broken(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        raise RuntimeError("the UI crashed")

    async with connect(peer, elicitation=broken) as client:
        with pytest.raises(MCPClientError) as caught:
            await client.call_tool("ask")

    assert "the UI crashed" in str(caught.value)
    assert len(tool_calls(peer)) == 1


@pytest.mark.fake_clock
async def test_handlers_of_one_round_run_concurrently(connect: Connect) -> None:
    """The three handlers of one round run side by side: 10 s each, 10 s in all."""
    peer = ScriptedPeer(era="modern")

    async def slow_sampler(params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        await anyio.sleep(10)
        return await sampler(params)

    async def slow_roots(params: mcp_types.RequestParams) -> mcp_types.ListRootsResult:
        await anyio.sleep(10)
        return await roots_lister(params)

    policy = TimeoutPolicy(idle=5, maximum=100)
    async with connect(
        peer, timeout=policy, elicitation=Elicitor(delay=10), sampling=slow_sampler, roots=slow_roots
    ) as client:
        start = anyio.current_time()
        await client.call_tool("ask_many")
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(10)


@pytest.mark.fake_clock
async def test_idle_clock_stops_while_the_handler_runs(connect: Connect) -> None:
    """A handler taking 100 s under idle=5 causes no IdleTimeout."""
    peer = ScriptedPeer(era="modern")
    policy = TimeoutPolicy(idle=5, maximum=1000)
    async with connect(peer, timeout=policy, elicitation=Elicitor(delay=100)) as client:
        start = anyio.current_time()
        result = await client.call_tool("ask", {"rounds": 2})
        elapsed = anyio.current_time() - start

    assert text_of(result) == "bob"
    assert elapsed == pytest.approx(200)


@pytest.mark.fake_clock
async def test_a_handler_that_never_returns_ends_by_the_maximum(connect: Connect) -> None:
    """The maximum keeps running while a person answers (pause_maximum off): MaxTimeout at exactly 50."""
    peer = ScriptedPeer(era="modern")
    policy = TimeoutPolicy(idle=5, maximum=50)
    async with connect(peer, timeout=policy, elicitation=Elicitor(delay=float("inf"))) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout) as caught:
            await client.call_tool("ask")
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(50)
    assert caught.value.elapsed == pytest.approx(50)
    assert caught.value.timeout == 50
    assert len(tool_calls(peer)) == 1


@pytest.mark.fake_clock
async def test_pause_maximum_lets_a_person_take_longer_than_the_maximum(connect: Connect) -> None:
    """With pause_maximum the maximum stops too while the handler runs."""
    peer = ScriptedPeer(era="modern")
    policy = TimeoutPolicy(idle=5, maximum=50, pause_maximum=True)
    async with connect(peer, timeout=policy, elicitation=Elicitor(delay=80)) as client:
        result = await client.call_tool("ask")

    assert text_of(result) == "bob"


@pytest.mark.fake_clock
async def test_the_call_handle_cancels_a_call_waiting_on_a_person(connect: Connect) -> None:
    """Cancelling the handle while the handler runs ends the call with RequestCancelled at once."""
    peer = ScriptedPeer(era="modern")
    policy = TimeoutPolicy(idle=5, maximum=1000)
    client = connect(peer, timeout=policy, elicitation=Elicitor(delay=float("inf")))
    async with client, client.tool_call("ask") as handle:
        await anyio.sleep(3)
        start = anyio.current_time()
        handle.cancel("changed my mind")
        with pytest.raises(RequestCancelled):
            await handle.result()
        assert anyio.current_time() == pytest.approx(start)


# -- 2025-11-25: server requests mid-call ----------------------------------------------------------------------


def initialize_capabilities(peer: ScriptedPeer) -> JSON:
    (initialize,) = [m for m in peer.stats.received if m.get("method") == "initialize"]
    capabilities: JSON = initialize["params"]["capabilities"]
    return capabilities


@pytest.mark.fake_clock
async def test_legacy_elicitation_request_is_answered_with_the_idle_clock_paused(
    connect: Connect, events: list[Event]
) -> None:
    """elicit_client: the handler (100 s, under idle=5) answers the server's request; the call completes."""
    peer = ScriptedPeer(era="legacy")
    elicitor = Elicitor(delay=100)
    policy = TimeoutPolicy(idle=5, maximum=1000)
    async with connect(peer, timeout=policy, elicitation=elicitor) as client:
        assert not client.era.modern
        result = await client.call_tool("elicit_client")

    assert not result.is_error
    assert json.loads(text_of(result)) == {"action": "accept", "content": {"name": "bob"}}
    assert isinstance(elicitor.asked[0], mcp_types.ElicitRequestFormParams)
    assert "elicitation" in initialize_capabilities(peer)
    assert not [e for e in events if isinstance(e, IdleTimeout)]


@pytest.mark.fake_clock
async def test_legacy_pause_covers_every_call_in_flight_and_idle_runs_again_after(connect: Connect) -> None:
    """While the handler runs, the idle clocks of all calls in flight stop; after it answers they run again: a
    silent call started at 0 (paused from 1 to 101) ends by IdleTimeout at 105, not at 5."""
    peer = ScriptedPeer(era="legacy")
    policy = TimeoutPolicy(idle=5, maximum=1000)
    ended: list[float] = []
    async with connect(peer, timeout=policy, elicitation=Elicitor(delay=100)) as client:
        start = anyio.current_time()

        async def silent() -> None:
            with pytest.raises(IdleTimeout):
                await client.call_tool("silent")
            ended.append(anyio.current_time() - start)

        async with anyio.create_task_group() as tg:
            tg.start_soon(silent)
            await anyio.sleep(1)
            result = await client.call_tool("elicit_client")
            assert anyio.current_time() - start == pytest.approx(101)

    assert not result.is_error
    assert ended == [pytest.approx(105)]


async def test_legacy_schema_defaults_are_applied(connect: Connect) -> None:
    peer = ScriptedPeer(era="legacy")
    async with connect(peer, elicitation=Elicitor(mcp_types.ElicitResult(action="accept", content={}))) as client:
        result = await client.call_tool("elicit_client")

    assert json.loads(text_of(result)) == {"action": "accept", "content": {"name": "anon"}}


async def test_legacy_without_a_handler_the_capability_is_not_declared_and_the_request_refused(
    connect: Connect,
) -> None:
    peer = ScriptedPeer(era="legacy")
    async with connect(peer) as client:
        result = await client.call_tool("elicit_client")

    assert initialize_capabilities(peer) == {}
    assert result.is_error
    assert "-32601" in text_of(result)


async def test_legacy_sampling_and_roots_requests(connect: Connect) -> None:
    peer = ScriptedPeer(era="legacy")
    async with connect(peer, sampling=sampler, roots=roots_lister) as client:
        sampled = await client.call_tool("elicit_client", {"kind": "sampling"})
        roots = await client.call_tool("elicit_client", {"kind": "roots"})
        elicited = await client.call_tool("elicit_client", {"kind": "elicitation"})

    assert json.loads(text_of(sampled)) == {
        "role": "assistant",
        "content": {"type": "text", "text": "Paris"},
        "model": "test-model",
    }
    assert json.loads(text_of(roots)) == {"roots": [{"uri": "file:///work", "name": "work"}]}
    assert elicited.is_error  # no elicitation handler
    capabilities = initialize_capabilities(peer)
    assert "sampling" in capabilities
    assert "roots" in capabilities
    assert "elicitation" not in capabilities


@pytest.mark.fake_clock
async def test_legacy_handler_that_never_returns_ends_by_the_maximum(connect: Connect) -> None:
    peer = ScriptedPeer(era="legacy")
    policy = TimeoutPolicy(idle=5, maximum=50)
    async with connect(peer, timeout=policy, elicitation=Elicitor(delay=float("inf"))) as client:
        start = anyio.current_time()
        with pytest.raises(MaxTimeout):
            await client.call_tool("elicit_client")
        elapsed = anyio.current_time() - start

    assert elapsed == pytest.approx(50)


async def test_legacy_handler_refusing_with_a_server_error_is_sent_as_that_error(connect: Connect) -> None:
    peer = ScriptedPeer(era="legacy")

    async def refuse(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        raise ServerError("not now", code=-32042)

    async with connect(peer, elicitation=refuse) as client:
        result = await client.call_tool("elicit_client")

    assert result.is_error
    assert '"code": -32042' in text_of(result)
    (response,) = peer.stats.client_responses
    assert response["error"] == {"code": -32042, "message": "not now"}


@pytest.mark.fake_clock
async def test_legacy_server_cancelling_its_request_stops_the_handler_and_gets_no_response(connect: Connect) -> None:
    """A server may cancel its own elicitation/create (notifications/cancelled): the handler is stopped, no
    response is sent for it, and the clocks of the call run again (2025-11-25: either side can cancel)."""
    peer = ScriptedPeer(era="legacy")
    outcome: list[str] = []

    async def patient(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        try:
            await anyio.sleep(1000)
        except anyio.get_cancelled_exc_class():
            outcome.append(f"cancelled at {anyio.current_time() - start:g}")
            raise
        outcome.append("answered")
        return mcp_types.ElicitResult(action="accept", content={"name": "bob"})

    policy = TimeoutPolicy(idle=50, maximum=5000)
    async with connect(peer, timeout=policy, elicitation=patient) as client:
        start = anyio.current_time()
        result = await client.call_tool("elicit_then_cancel", {"after": 2, "then": 1})
        await anyio.sleep(2000)

    assert text_of(result) == "gave up asking"
    assert outcome == ["cancelled at 2"]
    assert [r for r in peer.stats.client_responses if r.get("id") == "elicit-then-cancel"] == []
