"""The promise matrix as data: every public way to make a call x every transport x the faults, the cells that do not
apply (each rule with its reason), the cells that fail today because of an open item of issue 29 (strict xfails),
and which cells the small size runs.

Nothing here runs a call: :mod:`tests.promises.cells` does, :mod:`tests.promises.test_matrix` asserts, and
:mod:`tests.promises.test_completeness` fails when the package has an entry point or a transport that the lists
below do not name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ENTRIES: tuple[str, ...] = (
    "call_tool",  # Client.call_tool
    "tool_call",  # Client.tool_call: the handle's result
    "task",  # a task-backed tool call (Client.call_tool of a tool that runs as a task)
    "task_result",  # Client.task_result: a task picked up by its id
    "resume",  # Client.resume: a task picked up by the TaskReference of call.handoff()
    "sync",  # mcp_client.sync.Client.call_tool: the blocking facade
    "group",  # ClientGroup.call_tool
    "supervisor",  # a stdio server under a RestartPolicy (client/supervisor.py)
    "langchain",  # integrations.langchain.load_tools: a StructuredTool
    "openai_agents",  # integrations.openai_agents.MCPClientServer.call_tool
    "pydantic_ai",  # integrations.pydantic_ai.MCPToolset, in an agent run
    "temporal",  # integrations.temporal: the activity
    "dbos",  # integrations.dbos.call_tool: a DBOS step per tool call (pydantic-ai's DBOS mode calls it too)
    "cli",  # mcp-client call
)
"""Every public way to make a call."""

TRANSPORTS: tuple[str, ...] = ("stdio", "memory", "http-core", "http-client", "sse")
"""Every transport: ``http-core`` and ``http-client`` are Streamable HTTP on its two engines (httpcore2's pool, an
``httpx2.AsyncClient``); ``sse`` is HTTP+SSE."""

FAULTS: tuple[str, ...] = (
    "server_error",  # the server answers with a JSON-RPC error (a task: the task fails)
    "idle",  # the server goes silent: the idle timeout ends the call
    "maximum",  # progress keeps coming: the maximum ends the call
    "cancel",  # the caller cancels the call once the server has it
    "close",  # the host closes the client (the group, the blocking client) once the server has the call
    "server_death",  # the server dies while the call runs
    "hostile_text",  # the server's error message is full of terminal control sequences
    "oversized",  # the answer is larger than the client's max_message_size
    "drop_after_write",  # the connection drops once the request is written (the server lives on)
    "drop_before_write",  # the way to the server goes before the request is written: the server never gets it
    "slow_renewal",  # a 2025-11-25 session ends; its renewal (initialize) is slower than the call's maximum
    "slow_listing",  # the task-support listing a 2025-11-25 call needs is slower than the call's maximum
    "header_mismatch",  # the server refuses the call with -32020 (HTTP: the client lists again and sends again)
    "flood",  # server requests and log notifications flood the client during a call that then goes silent
)
"""The faults each cell is attacked with. A drop before the write is staged per transport once the entry is open: the
in-memory peer stops serving, the stdio peer's process is killed (under the supervisor: restarted), the HTTP port
refuses every connection (a gate in front of it shuts), the HTTP+SSE peer refuses the POST of the call (a refused
connection). The call fails as never sent, with no execution on the server, or a re-send of the retry policy (a
fresh request id) succeeds with exactly one."""


@dataclass(frozen=True)
class Rule:
    """A set of cells: each field is the names it covers (empty: every name)."""

    entries: tuple[str, ...] = ()
    transports: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()
    reason: str = ""

    def covers(self, entry: str, transport: str, fault: str) -> bool:
        return (
            (not self.entries or entry in self.entries)
            and (not self.transports or transport in self.transports)
            and (not self.faults or fault in self.faults)
        )


ADAPTERS = ("langchain", "openai_agents", "pydantic_ai")

CLIENT_METHODS: dict[str, str] = {
    "call_tool": "call_tool",
    "tool_call": "tool_call",
    "task_result": "task_result",
    "resume": "resume",
}
"""Each public method of ``Client`` that makes a tool call (it returns a ``CallToolResult`` or a handle on one), and
the entry that attacks it (a task-backed call is ``call_tool`` of a task tool: the entry ``task``)."""
GROUP_METHODS: dict[str, str] = {"call_tool": "group", "tool_call": "group"}
"""The same for ``ClientGroup`` (its handle is a client's ``Call``: the entry ``tool_call`` attacks that)."""
TRANSPORT_FACTORIES: dict[str, tuple[str, ...]] = {
    "stdio": ("stdio",),
    "memory": ("memory",),
    "http": ("http-core", "http-client"),
    "sse": ("sse",),
}
"""Each transport factory of the package and the columns that cover it."""
HTTP_ENGINES: dict[str, str] = {"httpcore2": "http-core", "httpx2": "http-client", "caller's client": "http-client"}
"""Each engine ``http()`` may send through (``engine_kind``) and its column (a caller's client is httpx2's engine)."""
CLI_COMMANDS: dict[str, str | None] = {
    "call": "cli",
    "tools": None,
    "demo": None,
}
"""Each CLI command and the entry that attacks it (None: it calls no tool of the caller's server: ``tools`` lists
them; ``demo`` runs its scenes against the bundled demo server it starts itself)."""

EXCLUDED: tuple[Rule, ...] = (
    Rule(
        entries=("temporal",),
        faults=("cancel", "close"),
        reason="a workflow cancels its activity, and a worker shuts down, through Temporal (heartbeats, the "
        "worker's shutdown): tests/temporal runs them on a real dev server; the matrix's attempt runs in "
        "temporalio's ActivityEnvironment, with no workflow and no worker",
    ),
    Rule(
        entries=("dbos",),
        reason="a DBOS step runs under a launched DBOS (a process-wide instance, its threads and its system "
        "database): its cells run a DBOS application in a process of its own, killed mid-call "
        "(tests/frameworks/test_pydantic_ai_dbos.py), which this matrix does not drive yet",
    ),
    Rule(
        entries=("supervisor",),
        transports=("memory", "http-core", "http-client", "sse"),
        reason="the supervisor restarts a local process: only a stdio server has one",
    ),
    Rule(
        entries=("cli",),
        transports=("memory",),
        reason="the CLI reaches a server by its command or its URL; an in-memory server has neither",
    ),
    Rule(
        entries=("cli", "sync"),
        transports=("sse",),
        reason="the HTTP+SSE peer answers through an in-process mock transport bound to the test's event loop; "
        "the CLI and the blocking facade run event loops of their own",
    ),
    Rule(
        entries=("cli",),
        faults=("cancel",),
        reason="the CLI's caller cancels with Ctrl-C, a signal to the process (tests/integration/test_cli.py)",
    ),
    Rule(
        entries=("cli",),
        faults=("close",),
        reason="the CLI closes its client as its process ends: its caller ends it with Ctrl-C (the cancel cells)",
    ),
    Rule(
        entries=("sync",),
        faults=("cancel",),
        reason="a blocking caller cancels with Ctrl-C, a signal to its thread (tests/integration/test_sync.py)",
    ),
    Rule(
        entries=("task", "task_result", "resume"),
        faults=("server_death", "hostile_text", "drop_after_write", "header_mismatch", "flood"),
        reason="the task tool scripts neither a death, a drop, a refusal, a flood nor its failure's text (its "
        "failure message is fixed)",
    ),
    Rule(
        entries=("task_result", "resume"),
        faults=("drop_before_write",),
        reason="a pick-up follows the call that made its task, which reached the server: what is dropped before its "
        "write is a poll of a task that ran (the entry task attacks the call's own drop before the write)",
    ),
    Rule(
        entries=("cli",),
        transports=("stdio",),
        faults=("drop_before_write",),
        reason="the CLI starts its server's process for its one call: it has no process to lose before the write",
    ),
    Rule(
        entries=("task_result", "resume"),
        faults=("slow_renewal", "slow_listing"),
        reason="a pick-up needs the call that made its task first, which the slow renewal or listing holds as "
        "well: the entry task attacks it",
    ),
    Rule(
        transports=("stdio", "memory", "sse"),
        faults=("drop_after_write",),
        reason="on a pipe and in memory the connection is the server's life, and HTTP+SSE's answers come on its "
        "one event stream: a drop there is the server_death cell",
    ),
    Rule(
        transports=("stdio", "memory", "sse"),
        faults=("slow_renewal",),
        reason="only Streamable HTTP has a session the client renews (a pipe's, memory's and HTTP+SSE's session "
        "is their connection: when it ends, the call fails)",
    ),
    Rule(
        transports=("stdio",),
        faults=("slow_listing",),
        reason="the stdio peer's script is fixed when its process starts, before the entry's own listing at open: "
        "the in-process peers (memory, both HTTP engines, HTTP+SSE) slow the listing once the entry is open",
    ),
    Rule(
        entries=("cli",),
        faults=("slow_renewal",),
        reason="the CLI opens a new session for its one call: no session of its ends while the call runs",
    ),
    Rule(
        entries=("cli",),
        faults=("oversized",),
        reason="the CLI has no max_message_size option: its default (32 MiB) is more than a fast cell can send",
    ),
    Rule(
        entries=("supervisor",),
        faults=("oversized",),
        reason="the same as call_tool on stdio: the supervisor acts only when the process dies",
    ),
)
"""Cells that do not apply, each with its reason (none is left out silently)."""

XFAILS: tuple[Rule, ...] = ()
"""Cells that fail today because of an open item of issue 29, run as ``xfail(strict=True)``: when the fix lands the
cell passes, the strict xfail fails, and its line here goes."""


def excluded(entry: str, transport: str, fault: str) -> Rule | None:
    """The rule that leaves this cell out, if one does."""
    return next((rule for rule in EXCLUDED if rule.covers(entry, transport, fault)), None)


def xfailed(entry: str, transport: str, fault: str) -> Rule | None:
    """The open item this cell waits for, if it does."""
    return next((rule for rule in XFAILS if rule.covers(entry, transport, fault)), None)


FULL_ENV = "MCP_CLIENT_PROMISES"
"""``MCP_CLIENT_PROMISES=full`` runs every cell; by default the small size runs."""


def full_size() -> bool:
    return os.environ.get(FULL_ENV, "").lower() == "full"


def small_size(entry: str, transport: str, fault: str) -> bool:
    """The cells CI runs by default: every fault for ``call_tool`` on every transport; for every other entry on
    every transport, the faults in a rotation (so each pair runs one, and the pairs together cover the faults)."""
    if entry == "call_tool":
        return True
    applicable = [f for f in FAULTS if excluded(entry, transport, f) is None]
    if not applicable:
        return False
    turn = (ENTRIES.index(entry) + TRANSPORTS.index(transport)) % len(applicable)
    return fault == applicable[turn]


def cells() -> list[tuple[str, str, str]]:
    """Every cell of the matrix, excluded ones too, in a fixed order."""
    return [(e, t, f) for e in ENTRIES for t in TRANSPORTS for f in FAULTS]
