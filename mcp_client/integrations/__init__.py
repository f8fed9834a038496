"""Adapters that carry mcp_client's calls into agent frameworks, each behind an optional extra.

* :mod:`mcp_client.integrations.pydantic_ai`: ``MCPToolset``, a pydantic-ai toolset (``pydantic-ai`` extra);
* :mod:`mcp_client.integrations.langchain`: ``load_tools``, LangChain ``StructuredTool``\\ s (``langchain`` extra);
* :mod:`mcp_client.integrations.openai_agents`: ``MCPClientServer``, an OpenAI Agents SDK ``MCPServer``
  (``openai-agents`` extra);
* :mod:`mcp_client.integrations.temporal`: ``MCPPlugin`` and ``MCPWorkflowClient``, durable calls on Temporal
  (``temporal`` extra);
* :mod:`mcp_client.integrations.dbos`: ``call_tool``, a call as a DBOS step that a crash never runs twice
  (``dbos`` extra). ``MCPToolset`` uses it in a DBOS workflow, and runs on Temporal over an ``MCPWorkflowClient``
  (pydantic-ai's durable modes).

Each framework adapter takes a connected :class:`~mcp_client.Client` or :class:`~mcp_client.ClientGroup` (the
Temporal one builds clients on the worker from factories), so the call's policy
(idle timeout, maximum, retries, cancellation) is mcp_client's, and each hands the model ``exc.for_model`` when
a call fails. Importing this package imports no framework; importing an adapter module imports its framework.
"""
