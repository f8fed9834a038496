"""Red team of the backends (room 2): a client opened in one event loop and used from another (a second
``asyncio.run``, a trio run, another thread) fails that call at once with a typed error that says nothing was
sent, instead of anyio's or asyncio's RuntimeError from deep in a lock or a future; the loop that owns it goes on."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import anyio
import pytest

from mcp_client import Client, TimeoutPolicy, TransportError
from mcp_client.testing.peer import ScriptedPeer
from mcp_client.transports.memory import memory

POLICY = TimeoutPolicy(idle=5, maximum=5, connect=5)


def _run_asyncio(use: Callable[[], Awaitable[object]]) -> object:
    async def main() -> object:
        return await use()

    return asyncio.run(main())


def _run_trio(use: Callable[[], Awaitable[object]]) -> object:
    async def main() -> object:
        return await use()

    return anyio.run(main, backend="trio")


@pytest.mark.real_clock
@pytest.mark.parametrize("run", [_run_asyncio, _run_trio], ids=["asyncio", "trio"])
def test_a_call_from_another_loop_is_refused_typed_and_unsent(run: Callable[..., object]) -> None:
    peer = ScriptedPeer()
    client = Client(memory(peer.serve), timeout=POLICY)
    opened, release = threading.Event(), threading.Event()
    after: list[str] = []

    async def owner() -> None:
        async with client:
            await client.call_tool("echo", {"text": "a"})
            opened.set()
            await anyio.to_thread.run_sync(release.wait, abandon_on_cancel=True)
            result = await client.call_tool("echo", {"text": "still here"})
            after.append(result.content[0].text)  # type: ignore[union-attr]

    thread = threading.Thread(target=asyncio.run, args=(owner(),), daemon=True)
    thread.start()
    try:
        assert opened.wait(10)

        async def elsewhere() -> object:
            with anyio.fail_after(10):
                return await client.call_tool("echo", {"text": "b"})

        with pytest.raises(TransportError, match="another event loop") as caught:
            run(elsewhere)
        assert caught.value.written is False
        assert caught.value.may_have_run is not True
    finally:
        release.set()
        thread.join(10)
    assert after == ["still here"]
    assert peer.stats.calls_by_tool["echo"] == 2  # "b" never reached the server
