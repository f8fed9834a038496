"""Task-backed tool calls: the server keeps long work under a task id and the client polls it to its end.

``model`` reads either era's wire shapes into :class:`Task` and holds :class:`TaskPolicy`; ``client_side`` is the
client's share (which calls ask for a task, the public ``task_result``/``get_task``/``cancel_task``). The driver
that runs a task-backed call under the call's policy is :mod:`mcp_client.calls.tasks`; the sans-IO decisions live
in :mod:`mcp_client.policy.tasks`. :mod:`mcp_client.tasks.reference` holds the ``TaskReference`` a host keeps to
resume a task from another process (``call.handoff()``, ``client.resume(ref)``); it is not imported here, since it
sits above the task driver that imports this package's model.
"""

from mcp_client.tasks.model import TASKS_EXTENSION, Task, TaskPolicy, creation_of, task_of

__all__ = ["TASKS_EXTENSION", "Task", "TaskPolicy", "creation_of", "task_of"]
