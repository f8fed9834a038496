"""Test helpers for MCP clients: a scripted MCP server to run in-process or as a subprocess."""
