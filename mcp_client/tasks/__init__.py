"""Task-backed tool calls: the server keeps long work under a task id and the client polls it to its end.

``model`` reads either era's wire shapes into :class:`Task`; ``driver`` runs a task-backed call under the call's
policy (polls, input rounds, the result, ``tasks/cancel``). The sans-IO decisions live in
:mod:`mcp_client.policy.tasks`.
"""

from mcp_client.tasks.driver import TaskControl, TaskRunner
from mcp_client.tasks.model import TASKS_EXTENSION, Task, TaskPolicy, creation_of, task_of

__all__ = ["TASKS_EXTENSION", "Task", "TaskControl", "TaskPolicy", "TaskRunner", "creation_of", "task_of"]
