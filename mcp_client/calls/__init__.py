"""The call room: everything about the life of one call, apart from the wire it runs on.

A call is what a caller awaits; it may put several requests on the wire (retries, input rounds, one more after a
session renewal). The room owns that life and nothing else: :mod:`.options` (a call's policies as one value),
:mod:`.runner` (the call from start to end: its one ``Deadline``, attempts, retries, input rounds, progress
delivery, renewal), :mod:`.attempt` (one request: the write bounded by the hard deadline, the wait),
:mod:`.delivery` (which progress sink, which pump), :mod:`.input_rounds` (answering ``input_required``) and
:mod:`.scope` (the steps done for a call before its request, inside its one maximum). Below it
the session is the wire (ids, tables, routing, cancels); above it the client resolves policies and the ``tool_call``
handle starts, cancels, detaches and exposes a call run here.

A new way of living a call (polling a Task until it ends, a long-lived ``subscriptions/listen`` request) plugs in
as a loop of its own next to the attempts loop of ``CallRunner._live``, called there in its place (or after it, when
the first result says the call lives on as a task) under the same ``Deadline``, delivery, error context and
renewal, and putting each request on the wire with :func:`.attempt.run_attempt`.
"""

from mcp_client.calls.options import CallOptions
from mcp_client.calls.runner import CallRunner, ConnectionOwner

__all__ = ["CallOptions", "CallRunner", "ConnectionOwner"]
