"""What a server may ask of the client, and the host's answers: elicitation, sampling and roots.

The host passes async callables to :class:`~mcp_client.Client`; each receives the request's params as an
mcp-types model and returns the mcp-types result. The same handlers serve both eras: 2025-11-25 server requests
(``elicitation/create`` on the wire) and 2026-07-28 ``input_required`` rounds. Capabilities are declared only for
handlers that exist. While a handler runs, the idle clocks of the calls waiting on it are stopped (a person is
answering), see :meth:`Session.waiting_on_a_person`.

Elicitation answers get the schema's defaults filled in: a host that accepts a form without touching a field
answers with the field's default, as the spec's SEP-1034 asks. Only the elicitation modes declared reach the
handler (``form``, by default): a ``url`` request to a host that declared only forms is refused with -32602 before
the host sees its URL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import mcp_types
from pydantic import BaseModel, TypeAdapter, ValidationError

from mcp_client.errors import InvalidParams, MethodNotFound

__all__ = ["ElicitationHandler", "InputHandler", "InputHandlers", "RootsHandler", "SamplingHandler"]

ElicitationHandler: TypeAlias = Callable[[mcp_types.ElicitRequestParams], Awaitable[mcp_types.ElicitResult]]
"""Asks the user to fill a form (or to open a URL) and returns their answer."""
SamplingHandler: TypeAlias = Callable[[mcp_types.CreateMessageRequestParams], Awaitable[mcp_types.CreateMessageResult]]
"""Runs the host's model on the server's messages."""
RootsHandler: TypeAlias = Callable[[mcp_types.RequestParams], Awaitable[mcp_types.ListRootsResult]]
"""Lists the roots (``file://`` folders) the host exposes."""
InputHandler: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers what a server asks of the client (``elicitation/create``, ``sampling/createMessage``, ``roots/list``):
``(method, params) -> result``. Raise :class:`~mcp_client.ServerError` to refuse. Serves 2025-11-25 server
requests and 2026-07-28 input rounds alike (:meth:`InputHandlers.handle` is one)."""

_ELICIT_PARAMS: TypeAdapter[mcp_types.ElicitRequestParams] = TypeAdapter(mcp_types.ElicitRequestParams)


class InputHandlers:
    """The host's handlers, dispatched by method. Raises :class:`MethodNotFound` for a missing handler."""

    def __init__(
        self,
        *,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsHandler | None = None,
        elicitation_modes: tuple[str, ...] = ("form",),
    ) -> None:
        self.elicitation = elicitation
        self.sampling = sampling
        self.roots = roots
        self.elicitation_modes = elicitation_modes
        """The elicitation modes declared (and so accepted): ``form``, and ``url`` for a host that opens URLs."""

    @property
    def any(self) -> bool:
        """True when at least one handler exists."""
        return any(h is not None for h in (self.elicitation, self.sampling, self.roots))

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities these handlers let us declare."""
        capabilities: dict[str, Any] = {}
        if self.elicitation is not None:
            capabilities["elicitation"] = {mode: {} for mode in self.elicitation_modes}
        if self.sampling is not None:
            capabilities["sampling"] = {}
        if self.roots is not None:
            capabilities["roots"] = {}
        return capabilities

    async def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer one request of the server: the result object to send (or to put in ``inputResponses``)."""
        try:
            if method == "elicitation/create" and self.elicitation is not None:
                request = _ELICIT_PARAMS.validate_python(params)
                mode = "url" if isinstance(request, mcp_types.ElicitRequestURLParams) else "form"
                if mode not in self.elicitation_modes:
                    raise InvalidParams(f"the client did not declare {mode} mode elicitation", code=-32602)
                answer = await self.elicitation(request)
                return _with_defaults(request, _dump(answer))
            if method == "sampling/createMessage" and self.sampling is not None:
                sampling_request = mcp_types.CreateMessageRequestParams.model_validate(params)
                return _dump(await self.sampling(sampling_request))
            if method == "roots/list" and self.roots is not None:
                return _dump(await self.roots(mcp_types.RequestParams.model_validate(params)))
        except ValidationError as exc:
            raise InvalidParams(f"invalid {method} params: {exc}", code=-32602) from None
        raise MethodNotFound(f"the client does not handle {method}", code=-32601)


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _with_defaults(request: mcp_types.ElicitRequestParams, answer: dict[str, Any]) -> dict[str, Any]:
    """Fill in the schema defaults of the fields an accepted form answer left out."""
    if answer.get("action") != "accept" or not isinstance(request, mcp_types.ElicitRequestFormParams):
        return answer
    properties = request.requested_schema.get("properties")
    if not isinstance(properties, dict):
        return answer
    content = dict(answer.get("content") or {})
    for name, schema in properties.items():
        if isinstance(schema, dict) and "default" in schema and name not in content:
            content[name] = schema["default"]
    answer["content"] = content
    return answer
