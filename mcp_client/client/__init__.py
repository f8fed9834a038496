"""The public client of one server: :class:`Client` and the pieces of its API.

:mod:`.client` (the class: construction, lifecycle), :mod:`.link` (the one owner of its connection: session, runner
of calls, server identity, renewal), :mod:`.tools` (``call_tool`` and the ``tool_call`` handle's path), :mod:`.call`
(the :class:`~mcp_client.Call` handle), :mod:`.features` (prompts, resources, completion, ping, log levels),
:mod:`.listen` (``listen()``), :mod:`.tasks` and :mod:`.task_reference` (task-backed calls and resuming them),
:mod:`.pins` and :mod:`.tool_pins` (tool definitions pinned against change), :mod:`.server_view` (what the client
knows of its server), :mod:`.output_schema` (structured output checks), :mod:`.supervisor` (the link that starts a
stdio server again when it dies), :mod:`.start_failure` (one typed error for a failed start).
"""

from typing import TYPE_CHECKING

from mcp_client._lazy import lazy_face

if TYPE_CHECKING:
    from mcp_client.client.client import (
        USE_CLIENT_DEFAULT as USE_CLIENT_DEFAULT,
        Client as Client,
        TimeoutArg as TimeoutArg,
        UseClientDefault as UseClientDefault,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__, __all__ = lazy_face(__name__)
