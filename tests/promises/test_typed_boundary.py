"""Every failure typed: each public entry point hands its caller the one typed error, never an exception group, and
an environment the HTTP library cannot build a client in is a :class:`~mcp_client.ConnectError`.

The group is injected where the work of every call runs (the runner's ``run``), as a task group inside it would
raise it: one :class:`~mcp_client.TransportError` in an ``ExceptionGroup``. Each entry point must show that error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types
import pytest

from mcp_client import Client, ClientGroup, ConnectError, Transport, TransportError, http, memory, sse
from mcp_client.calls.runner import CallRunner
from mcp_client.cli.outcome import exit_code, single_error
from mcp_client.testing.peer import ScriptedPeer
from tests.conftest import PROXY_VARIABLES

pytestmark = pytest.mark.anyio

BROKEN = "the link broke (injected)"
_ANY_FAILURE = (Exception, BaseExceptionGroup)
"""What these tests catch: anything, groups too; each then checks that the caller got the one typed error."""
_ANYTHING = ".*"
SECRETS = ("hunter2", "s3cret-key", "proxy-pass")


def _grouped(method: str) -> ExceptionGroup[TransportError]:
    error = TransportError(BROKEN, written=True, method=method)
    return ExceptionGroup("unhandled errors in a TaskGroup", [error])


@pytest.fixture
def break_calls(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """``break_calls()``: from now on every call the runner runs fails with a group around one TransportError."""

    def arm() -> None:
        def run(self: CallRunner, method: str, *args: Any, **kwargs: Any) -> Awaitable[Any]:
            async def fail() -> Any:
                raise _grouped(method)

            return fail()

        monkeypatch.setattr(CallRunner, "run", run)

    return arm


def _assert_typed(error: BaseException) -> None:
    assert not isinstance(error, BaseExceptionGroup), f"an exception group reached the caller: {error!r}"
    assert isinstance(error, TransportError)
    assert error.message == BROKEN


def _peer() -> ScriptedPeer:
    return ScriptedPeer(era="legacy", tasks=True)


async def test_call_tool_raises_the_one_typed_error(break_calls: Callable[[], None]) -> None:
    async with Client(memory(_peer().serve), timeout=30) as client:
        break_calls()
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            await client.call_tool("echo", {"text": "x"})
    _assert_typed(raised.value)


async def test_a_tool_call_handle_raises_the_one_typed_error(break_calls: Callable[[], None]) -> None:
    async with Client(memory(_peer().serve), timeout=30) as client:
        break_calls()
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            async with client.tool_call("echo", {"text": "x"}) as call:
                await call.result()
    _assert_typed(raised.value)


async def test_task_result_raises_the_one_typed_error(break_calls: Callable[[], None]) -> None:
    async with Client(memory(_peer().serve), timeout=30) as client:
        break_calls()
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            await client.task_result("no-such-task")
    _assert_typed(raised.value)


async def test_a_listing_raises_the_one_typed_error(break_calls: Callable[[], None]) -> None:
    async with Client(memory(_peer().serve), timeout=30) as client:
        break_calls()
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            await client.list_tools(cache=False)
    _assert_typed(raised.value)


async def test_a_group_raises_the_one_typed_error(break_calls: Callable[[], None]) -> None:
    async with ClientGroup({"one": memory(_peer().serve)}, timeout=30, list_tools=False) as group:
        break_calls()
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            await group.call_tool("one/echo", {"text": "x"})
    _assert_typed(raised.value)


async def test_the_langchain_tool_hands_the_model_the_typed_outcome(break_calls: Callable[[], None]) -> None:
    from mcp_client.integrations.langchain import load_tools

    async with Client(memory(_peer().serve), timeout=30) as client:
        tools = {tool.name: tool for tool in await load_tools(client)}
        expected = await _for_model_of_broken_call(client, "echo")
        break_calls()
        text = await tools["echo"].ainvoke({"text": "x"})
    assert text == expected


async def test_the_openai_agents_server_hands_the_model_the_typed_outcome(break_calls: Callable[[], None]) -> None:
    from mcp_client.integrations.openai_agents import MCPClientServer

    async with Client(memory(_peer().serve), timeout=30) as client:
        server = MCPClientServer(client)
        await server.list_tools()
        expected = await _for_model_of_broken_call(client, "echo")
        break_calls()
        result = await server.call_tool("echo", {"text": "x"})
    assert result.is_error
    assert result.content[0].text == expected  # type: ignore[union-attr]


async def _for_model_of_broken_call(client: Client, tool: str) -> str:
    """What a model reads for the injected failure of a call of ``tool`` (named, with its listed annotations)."""
    annotations = {listed.name: listed.annotations for listed in await client.list_tools()}
    error = TransportError(BROKEN, written=True, method="tools/call")
    error.about_tool(tool, annotations.get(tool))
    return error.for_model


def test_the_sync_facade_raises_the_one_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_client.sync.client import Client as SyncClient

    with SyncClient(memory(_peer().serve), timeout=30) as client:

        def run(self: CallRunner, method: str, *args: Any, **kwargs: Any) -> Awaitable[Any]:
            async def fail() -> Any:
                raise _grouped(method)

            return fail()

        monkeypatch.setattr(CallRunner, "run", run)
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            client.call_tool("echo", {"text": "x"})
    _assert_typed(raised.value)


def test_the_cli_ends_with_the_exit_status_of_the_one_typed_error() -> None:
    # A group that holds the failure and the cancellation it caused in a sibling task (nested, as task groups nest).
    group = BaseExceptionGroup(
        "outer", [_grouped("tools/call"), BaseExceptionGroup("inner", [asyncio.CancelledError()])]
    )
    error = single_error(group)
    _assert_typed(error)
    assert exit_code(error) == 6  # a TransportError's status, not the 1 of "anything else"


# -- item 18: an environment the HTTP library cannot build a client in --------------------------------------------


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


TRANSPORTS: dict[str, Callable[[], Transport]] = {
    "http": lambda: http("http://user:hunter2@127.0.0.1:9/mcp?api_key=s3cret-key"),
    "sse": lambda: sse("http://user:hunter2@127.0.0.1:9/sse?api_key=s3cret-key"),
}
ENVIRONMENTS = {
    "socks proxy without socksio": ("ALL_PROXY", "socks5://proxy-user:proxy-pass@127.0.0.1:1080"),
    "proxy of an unknown scheme": ("HTTP_PROXY", "ftp://proxy-user:proxy-pass@127.0.0.1:21"),
}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("environment", ENVIRONMENTS)
async def test_an_environment_the_http_library_cannot_build_in_is_a_connect_error(
    no_proxies: pytest.MonkeyPatch, transport: str, environment: str
) -> None:
    name, value = ENVIRONMENTS[environment]
    no_proxies.setenv(name, value)
    with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
        async with Client(TRANSPORTS[transport](), timeout=5):
            pass
    assert isinstance(raised.value, ConnectError), repr(raised.value)
    text = f"{raised.value} {raised.value.for_model}"
    assert not any(secret in text for secret in SECRETS), text


# -- what the boundary must not take: the host's own interrupt or exit --------------------------------------------


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
async def test_an_interrupt_beside_a_client_error_in_a_group_reaches_the_caller(
    monkeypatch: pytest.MonkeyPatch, interrupt: type[BaseException]
) -> None:
    # A task group holding a transport failure and the host's Ctrl-C (or exit) raised in a sibling task: the
    # interrupt is the host's, and turning it into the client error would swallow it.
    async with Client(memory(_peer().serve), timeout=30) as client:

        def run(self: CallRunner, method: str, *args: Any, **kwargs: Any) -> Awaitable[Any]:
            async def fail() -> Any:
                error = TransportError(BROKEN, written=True, method=method)
                raise BaseExceptionGroup("unhandled errors in a TaskGroup", [error, interrupt()])

            return fail()

        monkeypatch.setattr(CallRunner, "run", run)
        with pytest.raises(BaseException, match=_ANYTHING) as raised:
            await client.call_tool("echo", {"text": "x"})
    assert isinstance(raised.value, interrupt), repr(raised.value)


# -- an environment the HTTP library cannot build in, beyond proxies -----------------------------------------------

BROKEN_ENVIRONMENTS = {
    "a missing CA file": ("SSL_CERT_FILE", "/nonexistent/ca-bundle.pem"),
    "a proxy URL that does not parse": ("ALL_PROXY", "http://proxy-user:proxy-pass@[::1"),
}
BROKEN_ENVIRONMENT_TRANSPORTS: dict[str, Callable[[], Transport]] = {
    "https": lambda: http("https://user:hunter2@127.0.0.1:9/mcp?api_key=s3cret-key"),
    "https (core engine)": lambda: http("https://127.0.0.1:9/mcp?api_key=s3cret-key"),
    "sse": lambda: sse("http://user:hunter2@127.0.0.1:9/sse?api_key=s3cret-key"),
}


@pytest.mark.parametrize("transport", BROKEN_ENVIRONMENT_TRANSPORTS)
@pytest.mark.parametrize("environment", BROKEN_ENVIRONMENTS)
async def test_a_broken_tls_or_proxy_environment_is_a_connect_error(
    no_proxies: pytest.MonkeyPatch, transport: str, environment: str
) -> None:
    name, value = BROKEN_ENVIRONMENTS[environment]
    no_proxies.setenv(name, value)
    with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
        async with Client(BROKEN_ENVIRONMENT_TRANSPORTS[transport](), timeout=5):
            pass
    assert isinstance(raised.value, ConnectError), repr(raised.value)
    text = f"{raised.value} {raised.value.for_model}"
    assert not any(secret in text for secret in SECRETS), text


def test_the_sync_facade_in_a_broken_tls_environment_raises_a_connect_error(no_proxies: pytest.MonkeyPatch) -> None:
    from mcp_client.sync.client import Client as SyncClient

    no_proxies.setenv("SSL_CERT_FILE", "/nonexistent/ca-bundle.pem")
    with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised, SyncClient(sse("http://127.0.0.1:9/sse"), timeout=5):
        pass
    assert isinstance(raised.value, ConnectError), repr(raised.value)


async def test_the_core_engine_falling_back_to_http_sse_in_a_broken_tls_environment_raises_a_connect_error(
    no_proxies: pytest.MonkeyPatch,
) -> None:
    # The core engine makes no TLS context for an http:// URL, so the client is built; its HTTP+SSE fallback client is
    # made only once the server refused the first POST (405), and that is where the environment fails.
    import anyio
    import anyio.abc

    async def refuse(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with anyio.move_on_after(5):
                await stream.receive()
            await stream.send(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")

    no_proxies.setenv("SSL_CERT_FILE", "/nonexistent/ca-bundle.pem")
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, refuse)
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            async with Client(http(f"http://127.0.0.1:{port}/mcp?api_key=s3cret-key"), timeout=5):
                pass
        tg.cancel_scope.cancel()
    assert isinstance(raised.value, ConnectError), repr(raised.value)
    assert "SSL_CERT_FILE" in str(raised.value), str(raised.value)  # the cause, not "the answer could not be read"
    assert "s3cret-key" not in f"{raised.value} {raised.value.for_model}"


# -- the async context managers and iterators of the public API ----------------------------------------------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_opening_a_subscription_raises_the_one_typed_error(
    break_calls: Callable[[], None], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    # listen() returns a Subscription: its `async with` (subscriptions/listen at 2026-07-28, resources/subscribe at
    # 2025-11-25) is as public as a coroutine method, and the open failure is the caller's to see, typed.
    async with Client(memory(ScriptedPeer(era=era).serve), timeout=30) as client:  # type: ignore[arg-type]
        if era == "legacy":  # (the scripted peer offers no resources/subscribe: say it does, so one is sent)
            told = client.server_capabilities
            assert told is not None
            offered = told.model_copy(update={"resources": mcp_types.ResourcesCapability(subscribe=True)})
            monkeypatch.setattr(Client, "server_capabilities", property(lambda self: offered))
        break_calls()
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            async with client.listen(tools=True, resource_uris=["file:///config.json"]):
                pass
    _assert_typed(raised.value)


@pytest.mark.parametrize("tasks", [False, True], ids=["plain server", "task server"])
async def test_a_handle_whose_call_failed_in_a_group_holds_the_typed_error_and_the_client_lives_on(
    monkeypatch: pytest.MonkeyPatch, tasks: bool
) -> None:
    # The handle's call runs in the client's task group: a group around its one failure is the call's outcome (what
    # outcome() raises after wait(), as the DBOS step reads it), not a crash of the client's task group with an
    # outcome of None.
    async with Client(memory(ScriptedPeer(era="legacy", tasks=tasks).serve), timeout=30) as client:
        working = CallRunner.run

        def run(self: CallRunner, method: str, *args: Any, **kwargs: Any) -> Awaitable[Any]:
            async def fail() -> Any:
                raise _grouped(method)

            return fail()

        monkeypatch.setattr(CallRunner, "run", run)
        call = client.tool_call("echo", {"text": "x"})
        async with call:
            await call.wait()
        with pytest.raises(_ANY_FAILURE, match=_ANYTHING) as raised:
            call.outcome()
        _assert_typed(raised.value)
        monkeypatch.setattr(CallRunner, "run", working)
        result = await client.call_tool("echo", {"text": "y"})
    assert not result.is_error
