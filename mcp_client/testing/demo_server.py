"""The bundled demo server: the scripted MCP peer over stdio, speaking both protocol eras.

It is :mod:`mcp_client.testing.peer` in ``"auto"`` era, so a client that starts
with ``server/discover`` gets the stateless 2026-07-28 protocol, while an older
client can still use the ``initialize`` handshake. Besides the test tools it has
the ones the timeout demo uses:

* ``reindex {collection, seconds, progress_every}`` - slow, but reports progress
  ("indexed N/M"), so an idle timeout that progress resets lets it finish;
* ``stuck {}`` - hangs silently, so only a timeout ends it;
* ``chatty {interval}`` - reports progress forever, so only a hard maximum ends it.

Run it with ``python -m mcp_client.testing.demo_server``; extra arguments
(``--page-size``, ``--log-level``) go to the peer.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mcp_client.testing.peer import main as run_peer


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the demo over stdin/stdout; return the process exit status."""
    extra_arguments = list(sys.argv[1:] if argv is None else argv)
    return run_peer([*extra_arguments, "--era", "auto"])


if __name__ == "__main__":
    sys.exit(main())
