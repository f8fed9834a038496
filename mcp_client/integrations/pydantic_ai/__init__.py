"""pydantic-ai: :class:`MCPToolset`, the tools of a Client or a ClientGroup as a pydantic-ai toolset.

```python
from pydantic_ai import Agent
from mcp_client.integrations.pydantic_ai import MCPToolset

async with Client(stdio("python", ["server.py"])) as client:
    agent = Agent("openai:gpt-5", toolsets=[MCPToolset(client)])
    print((await agent.run("Reindex the docs collection")).output)
```

The toolset (:mod:`.toolset`) runs each call under mcp_client's policy and hands the model a result or the
failure's ``for_model`` text (:mod:`.results`). Under pydantic-ai's durable modes it keeps this integration's
guarantees: in a DBOS workflow each call is a DBOS step that a crash never runs twice
(:mod:`mcp_client.integrations.dbos`); in a Temporal workflow, over an ``MCPWorkflowClient``, each call is this
integration's Temporal activity (:mod:`.temporal`). See docs/pydantic-ai.md and docs/durable-agents.md.

Needs the ``pydantic-ai`` extra (``pydantic-ai-slim``).
"""

from mcp_client.integrations.pydantic_ai.toolset import MCPToolset

__all__ = ["MCPToolset"]
