"""``exc.for_model`` on the errors real calls end in: the client names the tool and knows its annotations."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_client import Client, IdleTimeout, InvalidParams, TimeoutPolicy, ToolError, TransportError
from mcp_client.outcomes import Ran, may_have_run
from mcp_client.testing.peer import ScriptedPeer

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]

Connect = Callable[..., Client]


async def test_an_idle_timeout_of_a_listed_read_only_tool_says_it_is_safe_to_repeat(connect: Connect) -> None:
    async with connect(ScriptedPeer(era="modern")) as client:
        await client.list_tools()
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", timeout=TimeoutPolicy(idle=2, maximum=10))

    text = caught.value.for_model
    assert caught.value.tool == "silent"
    assert text.startswith("The tool 'silent' timed out after 2.0 s: the server showed no sign of life for 2 s.")
    assert "The client told the server to stop it." in text
    assert "it is read-only, so calling it again is safe" in text


async def test_before_list_tools_nothing_is_known_to_be_safe(connect: Connect) -> None:
    async with connect(ScriptedPeer(era="legacy")) as client:
        with pytest.raises(IdleTimeout) as caught:
            await client.call_tool("silent", timeout=TimeoutPolicy(idle=2, maximum=10))

    assert caught.value.tool_annotations is None
    assert "check its effects before calling it again" in caught.value.for_model


async def test_a_server_that_dies_during_a_destructive_tool(connect: Connect) -> None:
    async with connect(ScriptedPeer(era="modern")) as client:
        await client.list_tools()
        with pytest.raises(TransportError) as caught:
            await client.call_tool("die", {"after": 1})

    assert caught.value.written
    assert may_have_run(caught.value) is Ran.MAYBE
    assert "check its effects" in caught.value.for_model
    assert "It is marked destructive." in caught.value.for_model


async def test_an_unknown_tool_did_not_run(connect: Connect) -> None:
    async with connect(ScriptedPeer(era="modern")) as client:
        with pytest.raises(InvalidParams) as caught:
            await client.call_tool("no_such_tool")

    assert caught.value.tool == "no_such_tool"
    assert "The tool did not run: correct the arguments before trying again." in caught.value.for_model


async def test_a_tool_error_ran(connect: Connect) -> None:
    async with connect(ScriptedPeer(era="modern")) as client:
        with pytest.raises(ToolError) as caught:
            await client.call_tool("tool_error", raise_on_error=True)

    assert caught.value.for_model.startswith("The tool 'tool_error' ran and reported an error")
