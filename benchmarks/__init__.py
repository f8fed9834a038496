"""Benchmarks of mcp_client against the reference client (``mcp.Client`` of mcp 2.3.0) and the wire floor.

Run ``python -m benchmarks`` (full, about 10 minutes) or ``python -m benchmarks --quick`` (under a minute, for CI).
Both clients talk to the same real server (:mod:`benchmarks.bench_server`, the SDK's ``MCPServer``) over stdio and
Streamable HTTP, in the same run, interleaved, each measurement in a fresh worker process; the report gives ratios.
See ``docs/benchmarks.md``.
"""
