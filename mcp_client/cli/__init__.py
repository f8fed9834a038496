"""``mcp-client``: try MCP servers from a terminal, and see the client's timeout policy at work.

The command line is a thin host on top of :class:`mcp_client.Client`; it needs the ``cli`` extra
(``pip install 'mcp-policy-client[cli]'``, which brings in rich).

```
mcp-client demo [--fast] [--http | --url URL [--header 'Name: value']...]
    Start the bundled demo server and show, with real protocol traffic, how progress resets an idle timeout,
    how a silent call is cut by it, how a hard maximum ends a chatty call, and how Ctrl-C cancels a call cleanly.

mcp-client tools [--json] -- <command> [args...]
    Start a stdio server and list its tools: name, hints (read-only, idempotent...), first line of description.

mcp-client call <tool> '<json arguments>' [--idle S] [--max S] [--retries N] [--connect S] [--json] -- <command>
    Call one tool with a progress bar and print its result. Ctrl-C cancels the call on the wire.

mcp-client [--config mcp.json] tools [server] | call server/tool '<json>' [options]
mcp-client tools|call ... --url URL [--header 'Name: value']...
    The servers of an mcp.json (through a ClientGroup), or one Streamable HTTP endpoint, instead of a command.
```

Everything after ``--`` is the server command. Without ``--``, the server command is whatever follows the
positional arguments, so this CLI's own options must then come before them.

Exit codes (``tools`` and ``call``; ``demo`` uses 0, 1 and 130):

===  ======================================================================
0    success
1    the tool reported an error (``isError``); for ``demo``: a scene failed
2    usage error: bad options, arguments that are not a JSON object, rich missing, a bad ``--config`` file
3    ConnectError: the server could not be started or the session not set up (``--config``: the called server)
4    IdleTimeout: no sign of life from the server for ``--idle`` seconds
5    MaxTimeout: the call took longer than ``--max`` seconds
6    TransportError: the server process died or its pipes broke
7    ServerError: the server answered with a JSON-RPC error
8    ProtocolError: the server broke the protocol
130  cancelled by Ctrl-C (the cancellation is sent to the server)
===  ======================================================================

The package's modules, each one concept: :mod:`~mcp_client.cli.app` (``main``), :mod:`~mcp_client.cli.parser`
(the command line), :mod:`~mcp_client.cli.group` (``--config``), :mod:`~mcp_client.cli.demo` (``demo``),
:mod:`~mcp_client.cli.commands` (``tools`` and ``call``), :mod:`~mcp_client.cli.display` (what is shown),
:mod:`~mcp_client.cli.interrupts` (events and Ctrl-C), :mod:`~mcp_client.cli.outcome` (exit statuses) and
:mod:`~mcp_client.cli.safe_text` (server text shown as text, its control characters made visible). Each imports
only modules after it in that list.
"""

from mcp_client.cli.app import main
from mcp_client.cli.outcome import EXIT_CODES

__all__ = ["EXIT_CODES", "main"]
