"""The task model: both eras' wire shapes, which calls ask for a task, and the -32021 explanation."""

from __future__ import annotations

import pytest

from mcp_client import MissingClientCapability, ProtocolError, TaskPolicy
from mcp_client.protocol.era import Era
from mcp_client.protocol.tasks import (
    TASKS_EXTENSION,
    creation_of,
    declared_capabilities,
    explain_missing_tasks,
    task_of,
    wants_task,
)

MODERN_CREATED = {
    "resultType": "task",
    "taskId": "t1",
    "status": "working",
    "statusMessage": "queued",
    "createdAt": "2026-12-01T10:00:00Z",
    "lastUpdatedAt": "2026-12-01T10:00:00Z",
    "ttlMs": 60000,
    "pollIntervalMs": 2500,
}


def test_a_modern_creation_is_read_from_the_flattened_result() -> None:
    task = creation_of(MODERN_CREATED, modern=True, asked=False)
    assert task is not None
    assert (task.task_id, task.status, task.status_message) == ("t1", "working", "queued")
    assert (task.ttl, task.poll_interval, task.terminal) == (60.0, 2.5, False)
    assert creation_of({"content": [], "resultType": "complete"}, modern=True, asked=False) is None


def test_a_legacy_creation_is_nested_and_only_when_asked() -> None:
    result = {"task": {"taskId": "t2", "status": "working", "ttl": None, "pollInterval": 1000}}
    task = creation_of(result, modern=False, asked=True)
    assert task is not None
    assert (task.task_id, task.ttl, task.poll_interval) == ("t2", None, 1.0)
    assert creation_of(result, modern=False, asked=False) is None  # a tool may return a "task" field of its own


def test_a_detailed_task_inlines_its_outcome() -> None:
    done = task_of({"taskId": "t", "status": "completed", "result": {"content": []}}, modern=True)
    assert done.terminal
    assert done.result == {"content": []}
    failed = task_of({"taskId": "t", "status": "failed", "error": {"code": -32603, "message": "x"}}, modern=True)
    assert failed.error == {"code": -32603, "message": "x"}
    asking = task_of({"taskId": "t", "status": "input_required", "inputRequests": {"k": {}}}, modern=True)
    assert asking.input_requests == {"k": {}}


@pytest.mark.parametrize("raw", [None, [], {"status": "working"}, {"taskId": "", "status": "working"}, {"taskId": "t"}])
def test_a_malformed_task_is_a_protocol_error(raw: object) -> None:
    with pytest.raises(ProtocolError):
        task_of(raw, modern=True)


def test_which_legacy_tools_are_called_as_tasks() -> None:
    default = TaskPolicy()
    assert wants_task(default, "build", "required")
    assert not wants_task(default, "build", "optional")  # optional: not as a task unless the policy says so
    assert not wants_task(default, "build", "forbidden")
    assert not wants_task(default, "build", None)
    named = TaskPolicy(optional_tools=("build*",))
    assert wants_task(named, "build-all", "optional")
    assert not wants_task(named, "test", "optional")
    assert not wants_task(TaskPolicy(enabled=False), "build", "required")


def test_the_legacy_ttl_follows_the_maximum() -> None:
    assert TaskPolicy().ttl_ms(100.0) == 160_000
    assert TaskPolicy().ttl_ms(None) == 3_600_000
    assert TaskPolicy(ttl=5).ttl_ms(100.0) == 5_000


def test_the_extension_is_declared_unless_tasks_are_off() -> None:
    declared = declared_capabilities({"elicitation": {"form": {}}}, TaskPolicy())
    assert declared == {"elicitation": {"form": {}}, "extensions": {TASKS_EXTENSION: {}}}
    assert declared_capabilities({"roots": {}}, TaskPolicy(enabled=False)) == {"roots": {}}


def test_a_missing_tasks_capability_is_explained_only_when_tasks_are_off() -> None:
    data: dict[str, object] = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
    error = MissingClientCapability("needs tasks", code=-32021, data=data)
    explained = explain_missing_tasks(error, TaskPolicy(enabled=False))
    assert isinstance(explained, MissingClientCapability)
    assert TASKS_EXTENSION in str(explained)
    assert explained.required_capabilities == data["requiredCapabilities"]
    assert explain_missing_tasks(error, TaskPolicy()) is error
    other = MissingClientCapability("needs sampling", code=-32021, data={"requiredCapabilities": {"sampling": {}}})
    assert explain_missing_tasks(other, TaskPolicy(enabled=False)) is other


def test_the_era_says_what_a_task_looks_like_on_its_wire() -> None:
    modern, legacy = Era("2026-07-28", modern=True), Era("2025-11-25", modern=False)
    raw = {"taskId": "t", "status": "working", "ttlMs": 5000, "ttl": 7000, "pollIntervalMs": 100, "pollInterval": 300}
    assert (modern.task_of(raw).ttl, modern.task_of(raw).poll_interval) == (5.0, 0.1)
    assert (legacy.task_of(raw).ttl, legacy.task_of(raw).poll_interval) == (7.0, 0.3)
    created = modern.created_task({**raw, "resultType": "task"}, asked=False)
    assert created is not None
    assert created.task_id == "t"
    assert legacy.created_task({"task": raw}, asked=False) is None  # a tool's own "task" field, not asked for
    assert legacy.created_task({"task": raw}, asked=True) is not None
