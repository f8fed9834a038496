"""Multi-round-trip requests (2026-07-28): answering a server's ``input_required`` result.

A ``tools/call``, ``prompts/get`` or ``resources/read`` may come back as ``input_required``: the server asks the
client questions (elicitation, sampling, roots) and to send the request again, with a new id, carrying the answers
(``inputResponses``) and its opaque ``requestState`` echoed byte for byte. This module answers one round; the
call runner (:mod:`mcp_client.calls.runner`) sends the next request. The caller of :func:`answer_input_round`
stops the call's idle clock meanwhile (a person is answering).
"""

from __future__ import annotations

import anyio

from mcp_client._types import JSONObject
from mcp_client.errors import MaxTimeout, MCPClientError, MethodNotFound, ProtocolError, RequestCancelled
from mcp_client.session.handlers import InputHandler
from mcp_client.session.inflight import CallState

__all__ = ["INPUT_METHODS", "answer_input_round", "wants_input"]

INPUT_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
"""The only methods a server may answer with ``input_required``."""


def wants_input(method: str, result: JSONObject, *, allowed: bool) -> bool:
    """True when ``result`` asks for another round; a round where none may be asked is a protocol error.
    ``allowed``: whether the era has input rounds at all (:attr:`~mcp_client.protocol.era.Era.input_rounds`)."""
    if result.get("resultType") != "input_required":
        return False
    if method not in INPUT_METHODS or not allowed:
        raise ProtocolError(f"{method}: input_required is not allowed here")
    return True


async def answer_input_round(
    call: CallState, params: JSONObject, result: JSONObject, handler: InputHandler | None
) -> JSONObject:
    """Answer the server's input requests and return the params of the next round.

    The next round carries the original params, the answers, and ``requestState`` exactly as received (never
    added when absent). Ends by the call's hard deadline, or at once when the call is cancelled.
    """
    requests = result.get("inputRequests") or {}
    if not isinstance(requests, dict) or not all(isinstance(r, dict) for r in requests.values()):
        raise ProtocolError(f"{call.method}: inputRequests is not an object of requests")
    responses: JSONObject = {}
    if requests:
        if handler is None:
            raise ProtocolError(f"{call.method}: the server asked for input this client did not offer to give")
        responses = await _gather(call, requests, handler)
    next_params = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    if responses:
        next_params["inputResponses"] = responses
    if "requestState" in result:
        next_params["requestState"] = result["requestState"]  # echoed exactly, never inspected
    return next_params


async def _gather(call: CallState, requests: JSONObject, handler: InputHandler) -> JSONObject:
    """Run the handler for every input request concurrently; the first failure ends them all."""
    responses: JSONObject = {}
    failure: list[BaseException] = []

    async def answer(key: str, request: JSONObject, scope: anyio.CancelScope) -> None:
        method, params = request.get("method"), request.get("params") or {}
        try:
            if not isinstance(method, str) or not isinstance(params, dict):
                raise ProtocolError(f"{call.method}: input request {key!r} is malformed")
            try:
                answer_result = dict(await handler(method, params))
            except MethodNotFound:
                # Servers must not ask for input the client did not declare: that is the server's fault, not ours.
                detail = f"{call.method}: the server asked for {method}, which this client did not declare"
                raise ProtocolError(detail) from None
            answer_result.pop("resultType", None)  # input responses are bare results
            responses[key] = answer_result
        except Exception as exc:
            failure.append(exc)
            scope.cancel()

    with anyio.CancelScope(deadline=call.deadline.hard_deadline(anyio.current_time())) as limit:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(_cancel_on, call.cancelled, task_group.cancel_scope)
            async with anyio.create_task_group() as answers:
                for key, request in requests.items():
                    answers.start_soon(answer, key, request, task_group.cancel_scope)
            task_group.cancel_scope.cancel()
    if call.cancel_reason is not None:
        raise RequestCancelled(f"{call.method} was cancelled: {call.cancel_reason}", reason=call.cancel_reason)
    if failure:
        exc = failure[0]
        if isinstance(exc, MCPClientError):
            raise exc
        raise MCPClientError(f"{call.method}: answering the server's input request failed: {exc!r}") from exc
    if limit.cancelled_caught:
        raise MaxTimeout(
            f"{call.method}: the maximum passed while waiting for input", timeout=call.deadline.policy.maximum
        )
    return responses


async def _cancel_on(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
