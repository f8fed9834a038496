"""``python -m mcp_client.cli``: the ``mcp-client`` command line."""

import sys

from mcp_client.cli.app import main

sys.exit(main())
