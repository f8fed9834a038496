"""How an activity's failure reaches the model when ``MCPToolset`` runs on Temporal, one failure at a time, and
the options a workflow's toolset refuses (no service needed: the failures are built as Temporal hands them over)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic_ai import ModelRetry
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import ToolsetTool
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError as TemporalTimeout, TimeoutType

from mcp_client.integrations.pydantic_ai import MCPToolset
from mcp_client.integrations.pydantic_ai.results import entry_of
from mcp_client.integrations.pydantic_ai.temporal import _failure
from mcp_client.integrations.temporal import MCPWorkflowClient


def _activity_error(cause: BaseException) -> ActivityError:
    error = ActivityError(
        "activity failed",
        scheduled_event_id=5,
        started_event_id=6,
        identity="worker",
        activity_type="mcp_client/search/call_tool",
        activity_id="1",
        retry_state=None,
    )
    error.__cause__ = cause
    return error


def _tool(annotations: dict[str, object] | None = None) -> ToolsetTool[object]:
    toolset = MCPToolset(MCPWorkflowClient("search"), id="search")
    definition = ToolDefinition(
        name="reindex",
        description="Reindex a collection",
        parameters_json_schema={"type": "object", "properties": {}},
        metadata={"mcp_tool": "reindex", "annotations": annotations},
    )
    return ToolsetTool(toolset=toolset, tool_def=definition, max_retries=1, args_validator=None)  # type: ignore[arg-type]


def test_refused_arguments_are_a_retry_prompt() -> None:
    refused = ApplicationError(
        "The server refused the arguments: collection is required", {"may_have_run": "no"}, type="InvalidParams"
    )
    with pytest.raises(ModelRetry, match="collection is required"):
        _failure(entry_of(_tool()), _activity_error(refused))


def test_any_other_failure_is_the_workers_text_for_the_model() -> None:
    lost = ApplicationError(
        "The tool 'reindex' failed: ... It may have run", {"may_have_run": "maybe"}, type="WorkerLost"
    )
    assert _failure(entry_of(_tool()), _activity_error(lost)) == "The tool 'reindex' failed: ... It may have run"


def test_a_temporal_timeout_says_the_tool_may_have_run() -> None:
    timeout = TemporalTimeout("activity timeout", type=TimeoutType.SCHEDULE_TO_CLOSE, last_heartbeat_details=[])
    text = _failure(entry_of(_tool()), _activity_error(timeout))
    assert "'reindex' ran out of time on Temporal (schedule_to_close)" in text
    assert "may have run" in text


def test_the_tools_annotations_come_back_from_its_definition() -> None:
    entry = entry_of(_tool({"idempotentHint": True}))
    assert entry.target == "reindex"
    assert entry.tool.annotations is not None
    assert entry.tool.annotations.idempotent_hint is True


def test_a_workflows_toolset_cannot_defer_slow_calls() -> None:
    with pytest.raises(ValueError, match="defer_slow needs a connected Client"):
        MCPToolset(MCPWorkflowClient("search", heartbeat_timeout=timedelta(seconds=5)), defer_slow=True)


def test_a_source_must_be_a_client_a_group_or_a_workflow_client() -> None:
    with pytest.raises(TypeError, match="expected a connected Client or ClientGroup, got str"):
        MCPToolset("search")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_outside_a_workflow_the_toolset_says_where_it_runs() -> None:
    toolset = MCPToolset(MCPWorkflowClient("search"), id="search")
    with pytest.raises(RuntimeError, match="runs only in a Temporal workflow"):
        await toolset.get_tools(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("failure", "hidden"),
    [
        # What the activity raised before its failures were typed: an anyio task group's exception group.
        (ApplicationError("unhandled errors in a TaskGroup (1 sub-exception)", type="ExceptionGroup"), "TaskGroup"),
        # Any other exception of the worker's: its text is the worker's, not the model's.
        (
            ApplicationError("no route to https://alice:pa55-w0rd-x@mcp.example/mcp?key=k3y-9f8e7d", type="OSError"),
            "pa55",
        ),
    ],
)
def test_a_failure_that_is_not_mcp_clients_says_the_tool_may_have_run_in_words_of_its_own(
    failure: ApplicationError, hidden: str
) -> None:
    text = _failure(entry_of(_tool()), _activity_error(failure))
    assert "'reindex'" in text
    assert "may have run" in text
    assert hidden not in text
