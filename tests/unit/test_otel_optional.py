"""``mcp_client`` works without OpenTelemetry; ``mcp_client.otel`` says clearly what is missing."""

from __future__ import annotations

import subprocess
import sys

BLOCK_OPENTELEMETRY = "import sys; sys.modules['opentelemetry'] = None; "


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_OPENTELEMETRY + code], capture_output=True, text=True, timeout=60
    )


def test_the_package_and_the_sync_api_import_without_opentelemetry() -> None:
    done = run("import mcp_client, mcp_client.sync, mcp_client.cli; print('ok')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_otel_module_names_the_extra_to_install() -> None:
    done = run("import mcp_client.otel")
    assert done.returncode != 0
    assert "pip install 'mcp-policy-client[otel]'" in done.stderr
