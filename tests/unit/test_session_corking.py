"""The session tells the transport when the server is busy with earlier requests, so a write may be corked."""

from __future__ import annotations

import anyio
import pytest

from mcp_client._types import JSONObject, RequestId
from mcp_client.events import CancelMethod
from mcp_client.policy import Deadline, TimeoutPolicy
from mcp_client.protocol.era import Era
from mcp_client.session.inflight import CallState
from mcp_client.session.session import Session
from mcp_client.transports.base import Connection

pytestmark = pytest.mark.anyio


class _Recording(Connection):
    """Takes every request at once and remembers whether it was told the server is busy."""

    def __init__(self) -> None:
        self.busy: list[tuple[object, bool]] = []

    def try_send_request(self, message: JSONObject, *, server_busy: bool = False) -> bool:
        self.busy.append((message["id"], server_busy))
        return True

    async def send_request(self, message: JSONObject, *, headers: dict[str, str] | None = None) -> None:
        raise AssertionError("the fast path takes every request here")

    async def send_notification(self, message: JSONObject) -> None:
        pass

    async def send_response(self, message: JSONObject) -> None:
        pass

    async def cancel(self, request_id: RequestId, reason: str | None) -> CancelMethod:
        return CancelMethod.NOTIFICATION


async def test_a_request_is_marked_busy_only_while_another_awaits_its_answer() -> None:
    async with anyio.create_task_group() as task_group:
        session = Session(task_group=task_group)
        connection = _Recording()
        session.attach(connection)
        session.use_era(Era("2026-07-28", modern=True))
        calls = [CallState("tools/call", Deadline(TimeoutPolicy(), started_at=session.clock()), None) for _ in range(3)]

        def write(call: CallState) -> int:
            request = session.open_request(call, want_token=False)
            assert session.try_write(session.message(request, {"name": "echo"}))
            return request.request_id

        first = session.open_request(calls[0], want_token=False)
        assert session.try_write(session.message(first, {"name": "echo"}))
        second = write(calls[1])  # the first still awaits its answer
        session.on_message({"jsonrpc": "2.0", "id": first.request_id, "result": {}})
        session.close_request(first)
        session.on_message({"jsonrpc": "2.0", "id": second, "result": {}})
        third = write(calls[2])  # nothing else in flight: a lone request again
        assert connection.busy == [(first.request_id, False), (second, True), (third, False)]
        task_group.cancel_scope.cancel()


async def test_an_open_subscription_does_not_make_the_server_busy() -> None:
    """A listen stays open as long as the host wants: a call beside it is a lone request, written at once."""
    async with anyio.create_task_group() as task_group:
        session = Session(task_group=task_group)
        connection = _Recording()
        session.attach(connection)
        session.use_era(Era("2026-07-28", modern=True))

        def write(method: str) -> int:
            call = CallState(method, Deadline(TimeoutPolicy(), started_at=session.clock()), None)
            request = session.open_request(call, want_token=False)
            assert session.try_write(session.message(request, {}))
            return request.request_id

        listen = write("subscriptions/listen")
        lone = write("tools/call")
        beside_it = write("tools/call")  # the first call still awaits its answer: now the server is busy
        assert connection.busy == [(listen, False), (lone, False), (beside_it, True)]
        task_group.cancel_scope.cancel()
