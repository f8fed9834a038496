"""Other hosts' configuration files (Claude Code, Claude Desktop, VS Code, Cursor, Gemini CLI, Codex, LibreChat,
Goose), read into our ``mcp.json`` shape with each key's meaning and units: :mod:`.rules` the dialects as data,
:mod:`.detect` reading a file and telling its dialect, :mod:`.translate` applying the rules, :mod:`.inputs` the
references hosts write in values (VS Code's ``${input:ID}`` asked of the host)."""
