"""The server's own requests (2025-11-25) cost the client a bounded number of tasks: at most ``max_server_requests``
of the host's handlers run at once, and a flood at a client whose answers the server never reads is dropped and
reported, never one waiting task per request."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_client import Client
from mcp_client.errors import TransportError
from mcp_client.events import CancelMethod, Event, ProtocolViolation
from mcp_client.session.server_requests import DEFAULT_MAX_SERVER_REQUESTS, WAITING_PER_HANDLER
from mcp_client.session.session import Session
from mcp_client.transports.base import Connection, JSONObject, RequestId
from mcp_client.transports.memory import memory

pytestmark = [pytest.mark.anyio, pytest.mark.fake_clock]


class _DeafServer(Connection):
    """A connection whose server never reads: every write waits for good; counts the writes waiting."""

    def __init__(self) -> None:
        self.waiting = 0
        self.most_waiting = 0
        self.answers: list[JSONObject] = []
        self.deaf = True

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        raise TransportError("not used", written=False)

    async def send_notification(self, message: JSONObject) -> None:
        raise TransportError("not used", written=False)

    async def send_response(self, message: JSONObject) -> None:
        if not self.deaf:
            self.answers.append(message)
            return
        self.waiting += 1
        self.most_waiting = max(self.most_waiting, self.waiting)
        try:
            await anyio.sleep_forever()
        finally:
            self.waiting -= 1

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        return CancelMethod.NOTIFICATION


def _session(group: anyio.abc.TaskGroup, events: list[Event], **kwargs: Any) -> Session:
    return Session(task_group=group, emit=events.append, cancel_timeout=3600, **kwargs)


async def test_a_ping_flood_at_a_client_whose_server_never_reads_leaves_a_bounded_number_of_tasks() -> None:
    events: list[Event] = []
    connection = _DeafServer()
    async with anyio.create_task_group() as group:
        session = _session(group, events)
        session.attach(connection)
        for n in range(10_000):
            session.on_message({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"})
        await anyio.sleep(1)
        bound = DEFAULT_MAX_SERVER_REQUESTS * WAITING_PER_HANDLER
        assert connection.most_waiting == bound
        dropped = [e for e in events if isinstance(e, ProtocolViolation) and "dropped unanswered" in e.detail]
        assert len(dropped) == 10_000 - bound
        group.cancel_scope.cancel()


async def test_no_more_than_the_limit_of_handlers_run_at_once_and_the_rest_wait_their_turn() -> None:
    events: list[Event] = []
    connection = _DeafServer()
    connection.deaf = False
    running = most = answered = 0
    release = anyio.Event()

    async def handler(method: str, params: JSONObject) -> JSONObject:
        nonlocal running, most, answered
        running += 1
        most = max(most, running)
        try:
            await release.wait()
        finally:
            running -= 1
        answered += 1
        return {"action": "decline"}

    async with anyio.create_task_group() as group:
        session = _session(group, events, input_handler=handler, max_server_requests=3)
        session.attach(connection)
        for n in range(20):  # 20 <= 3 * WAITING_PER_HANDLER: all are answered, three at a time
            session.on_message({"jsonrpc": "2.0", "id": n, "method": "elicitation/create", "params": {}})
        await anyio.sleep(1)
        assert most == 3
        release.set()
        await anyio.sleep(1)
    assert answered == 20
    assert most == 3
    assert sorted(a["id"] for a in connection.answers) == list(range(20))
    assert not [e for e in events if isinstance(e, ProtocolViolation)]


async def test_an_elicitation_flood_runs_at_most_the_limit_of_handlers() -> None:
    events: list[Event] = []
    connection = _DeafServer()
    connection.deaf = False
    started = 0

    async def handler(method: str, params: JSONObject) -> JSONObject:
        nonlocal started
        started += 1
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async with anyio.create_task_group() as group:
        session = _session(group, events, input_handler=handler)
        session.attach(connection)
        for n in range(20_000):
            session.on_message({"jsonrpc": "2.0", "id": n, "method": "elicitation/create", "params": {}})
        await anyio.sleep(1)
        assert started == DEFAULT_MAX_SERVER_REQUESTS
        group.cancel_scope.cancel()


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "8"])
def test_the_limit_is_checked_where_the_client_is_made(value: Any) -> None:
    with pytest.raises(ValueError, match="max_server_requests"):
        Client(memory(_serve_nothing), max_server_requests=value)


async def _serve_nothing(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
    """Never served: the client is refused before it connects."""
