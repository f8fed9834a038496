"""The model of the durable agent tests: a ``FunctionModel`` function that calls the tool its prompt names
(``"<tool> <seconds> <tag>"``), then reports what the tool said. No network model, no API key."""

from __future__ import annotations

from pydantic_ai import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """First call the tool the prompt names with its seconds and tag; then say what the tool returned."""
    if len(messages) == 1:
        (request,) = messages
        assert isinstance(request, ModelRequest)
        prompt = next(part.content for part in request.parts if isinstance(part, UserPromptPart))
        assert isinstance(prompt, str)
        tool, seconds, tag = prompt.split()
        return ModelResponse(parts=[ToolCallPart(tool, {"seconds": float(seconds), "tag": tag})])
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returned = next(part for part in last.parts if isinstance(part, ToolReturnPart))
    return ModelResponse(parts=[TextPart(f"The tool said: {returned.content}")])
