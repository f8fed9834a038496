"""A minimal stdio MCP server on the standard library alone, for measuring what starting many servers costs us.

Usage::

    python benchmarks/tiny_server.py [--delay SECONDS]

It waits ``--delay`` seconds before it reads anything (as a server does that resolves its packages or opens a
database first), then answers ``server/discover`` (2026-07-28), ``tools/list`` (one ``echo`` tool), ``tools/call``
of ``echo`` and ``ping``; notifications are ignored and anything else gets ``-32601``. Starting it costs a few
milliseconds of CPU, so twenty of them on two cores start as fast as one: the time a group of them takes to start
is what the client adds.
"""

from __future__ import annotations

import json
import sys
import time

VERSION = "2026-07-28"
_DISCOVER = {
    "supportedVersions": [VERSION],
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "tiny", "version": "1"},
    "resultType": "complete",
}
_TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "resultType": "complete"}


def answer(message: dict[str, object]) -> dict[str, object] | None:
    """The response to ``message``, or None for a notification."""
    if "id" not in message or "method" not in message:
        return None
    method = message["method"]
    reply: dict[str, object] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "server/discover":
        reply["result"] = _DISCOVER
    elif method == "tools/list":
        reply["result"] = _TOOLS
    elif method == "ping":
        reply["result"] = {}
    elif method == "tools/call" and isinstance(params := message.get("params"), dict) and params.get("name") == "echo":
        arguments = params.get("arguments")
        text = str(arguments.get("text", "")) if isinstance(arguments, dict) else ""
        reply["result"] = {"content": [{"type": "text", "text": text}], "isError": False, "resultType": "complete"}
    else:
        reply["error"] = {"code": -32601, "message": f"no such method: {method}"}
    return reply


def main() -> None:
    """Serve stdin/stdout until stdin closes."""
    # No argparse: its imports (re, enum, gettext...) are most of what starting this server costs.
    arguments = sys.argv[1:]
    delay = float(arguments[arguments.index("--delay") + 1]) if "--delay" in arguments else 0.0
    time.sleep(delay)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
