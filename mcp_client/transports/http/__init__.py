"""The Streamable HTTP transport: every message is a POST to one endpoint; each request's answer is read from
its own HTTP response, a JSON body or an SSE stream.

* One task per request in flight reads that request's response, in the connection's task group. A failure there
  (a 5xx, a dropped stream) fails that request only, through ``on_request_failed``; nothing else is touched.
* HTTP error statuses that carry a JSON-RPC error are delivered to the session as the response to the request, so
  ``-32022`` at 400 or ``-32601`` at 404 raise the right :class:`~mcp_client.ServerError` (and the era probe can
  fall back). A 4xx without one becomes a synthetic JSON-RPC error (``-32601`` for 404/405, else ``-32600``);
  a 5xx without one is a :class:`~mcp_client.TransportError`.
* Ending a request (answered, timed out, cancelled) closes its response stream. At 2026-07-28 that *is* the
  cancellation; at 2025-11-25 ``notifications/cancelled`` is POSTed as well.
* 2026-07-28 requests carry ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` from their body. At
  2025-11-25 the version the server chose in ``initialize`` and its ``Mcp-Session-Id`` go on every later POST, and
  the session is ended with a ``DELETE`` on close.
* Redirects are never followed (so credentials never reach another origin); a 3xx fails the request.
* A request whose connection could not even be opened (a ``ConnectError``: nothing was written) is sent once
  more, transparently; if that fails too, the request fails with ``written=False``. Nothing else is re-sent.
* 2025-11-25 only: after ``notifications/initialized`` a standalone ``GET`` stream is held open for what the server
  sends on its own (requests such as ``elicitation/create`` go to the session, which answers them by POST); a 405
  means the server has none. It reconnects a bounded number of times, honouring the server's ``retry:``.
* 2025-11-25 only (SEP-1699): a request's SSE stream that ends without the response, after the server sent an
  event id, is resumed with ``GET`` + ``Last-Event-ID`` after the server's ``retry:`` (default 1 s), at most twice.
  At 2026-07-28 a broken stream simply fails its request (the session may re-issue it with a new id).
* With no ``client=`` given, requests go through httpcore2's connection pool directly, or through an
  ``httpx2.AsyncClient`` made here when an ``auth=`` flow, an environment proxy or credentials in the URL need
  one (``_transport.engine_kind``). A caller's own client may be of either
  line, ``httpx2.AsyncClient`` or httpx 0.28's ``httpx.AsyncClient``, and is used exactly as given; the exceptions
  of its library are mapped to ours (see :mod:`mcp_client._httpx`).
* A 404 to a request that carried ``Mcp-Session-Id`` means the server ended the session: the request fails with
  :class:`SessionExpired` (``status_code=404``) and ``_HttpConnection.session_expired`` is set, so the client
  can start a new session. 429 and 503 fail the request with ``status_code`` and ``retry_after`` (from
  ``Retry-After``), which the retry policy honours. They count as written: a status code never proves that the
  request did not run (a gateway may answer 503 after the server behind it ran the tool).

The modules, bottom up: ``_state`` (what a connection knows), ``_events`` (SSE consumption), ``_session``
(2025-11-25: session id, GET listener, resumption, DELETE), ``_status`` (error statuses), ``_reader`` (one
request's exchange), ``_connection`` (the writing side, cancel, close), ``_transport`` (:func:`http` and the
engine it picks); ``_engine`` is what they send through. This package re-exports the public names.
"""

from __future__ import annotations

from mcp_client.errors import SessionExpired
from mcp_client.transports._http_headers import encode_header_value
from mcp_client.transports.http._connection import _HttpConnection as _HttpConnection  # for the transport's tests
from mcp_client.transports.http._transport import DEFAULT_LIMITS, DEFAULT_TIMEOUT, HttpTransport, http

__all__ = ["DEFAULT_LIMITS", "DEFAULT_TIMEOUT", "HttpTransport", "SessionExpired", "encode_header_value", "http"]
