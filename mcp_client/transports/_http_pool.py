"""A fair assignment pass for httpcore 1.0's HTTP/1.1 connection pool, given to the clients :func:`http` makes.

httpcore 1.0's pool (up to 1.0.9 at least) hands one idle connection to every request queued in a pass, and keeps
closing idle connections whenever the pool holds more than ``max_keepalive_connections`` in all. With many calls
in flight that costs several passes and refusals per request and a reconnect for many (encode/httpcore#822,
#1110); httpcore2 fixed both (pydantic/httpx2#1075). :func:`fair_pool` gives one pool instance the same pass for
httpcore 1.0, and only when the installed httpcore has the internals it is written against. A caller's own httpx
client is never touched.
"""

from __future__ import annotations

import types

import httpcore

__all__ = ["fair_pool"]


def fair_pool(pool: object) -> bool:
    """Give an httpcore 1.0 HTTP/1.1 pool the assignment pass below; True if it was given (False: left as it is).

    httpcore 1.0's pool (up to 1.0.9 at least) hands one idle connection to *every* request queued in a pass and
    to every request arriving before the first of them has started on it: the connection stays idle until then.
    All but one fail with ``ConnectionNotAvailable`` and go round again, each round another pass over every
    connection and request (with a socket probe per idle connection). With calls arriving together that is
    several passes per request: at 50 calls in flight (``python -m benchmarks.hotpath --in-flight 50``), about
    6.4 passes and 4.5 refusals per request, over 40% of this process's CPU (encode/httpcore#822, #1110). It also
    closes an idle connection whenever the pool holds more connections than ``max_keepalive_connections`` in all,
    idle or not, so a busy pool can reconnect for nearly every request. httpcore2 (under httpx2) fixed both
    (pydantic/httpx2#1075); this is the same pass for httpcore 1.0.
    """
    if not _POOL_PASS_FITS or not isinstance(pool, httpcore.AsyncConnectionPool):
        return False
    if getattr(pool, "_http2", True) or not all(hasattr(pool, name) for name in _POOL_FIELDS):
        return False  # HTTP/2 connections take several requests at once: the stock pass is the right one
    pool._assign_requests_to_connections = types.MethodType(_assign_requests_to_connections, pool)  # type: ignore[method-assign]
    return True


def _assign_requests_to_connections(pool: httpcore.AsyncConnectionPool) -> list[httpcore.AsyncConnectionInterface]:
    """httpcore's pass (run under the pool's lock on every request's arrival and end), changed so:

    * an idle connection already handed to a request that has not started on it yet is *reserved*: not handed to
      another and not counted as idle (it is still probed for expiry, so a request never starts on a connection
      the server closed in the meantime); and a pass hands each idle connection to one queued request only;
    * ``max_keepalive_connections`` counts the idle connections that are not reserved, as it says;
    * idle connections are probed for expiry (keep-alive timer; readable means closed by the server) only on
      passes with a request waiting for one: the probe is a socket poll each, and half the passes are responses
      ending, which hand nothing out;
    * one scan of the requests and one of the connections, not one of the connections per queued request.
    """
    reserved: set[httpcore.AsyncConnectionInterface] = set()
    waiting = False
    for request in pool._requests:
        if request.connection is None:
            waiting = True
        else:
            reserved.add(request.connection)
    closing: list[httpcore.AsyncConnectionInterface] = []
    kept: list[httpcore.AsyncConnectionInterface] = []
    idle: list[httpcore.AsyncConnectionInterface] = []  # idle and not reserved, oldest first
    for connection in pool._connections:
        if connection.is_closed():
            continue
        if connection in reserved:
            # Handed out but not started on yet: still probed, as httpcore does, so that one the server closed
            # meanwhile (its keep-alive ran out) is dropped; its request then finds it closed and asks again.
            if waiting and connection.is_idle() and connection.has_expired():
                closing.append(connection)
                continue
        elif connection.is_idle():
            if waiting and connection.has_expired():
                closing.append(connection)
                continue
            idle.append(connection)
        kept.append(connection)
    surplus = len(idle) - pool._max_keepalive_connections
    if surplus > 0:
        closing += idle[:surplus]
        dropped = set(idle[:surplus])
        kept = [connection for connection in kept if connection not in dropped]
        idle = idle[surplus:]
    pool._connections = kept
    if not waiting:
        return closing
    available = [connection for connection in idle if connection.is_available()]
    budget = pool._max_connections - len(kept)
    for request in pool._requests:
        if not available and budget <= 0:
            break  # nothing left to hand out: the rest stay queued
        if not request.is_queued():
            continue
        origin = request.request.url.origin
        for index, connection in enumerate(available):
            if connection.can_handle_request(origin):
                del available[index]  # HTTP/1.1: one request per connection until it is released
                request.assign_to_connection(connection)
                break
        else:
            if budget > 0:
                budget -= 1
            elif available:  # at max_connections: replace an idle connection to another origin
                replaced = available.pop(0)
                kept.remove(replaced)
                closing.append(replaced)
            else:
                continue
            connection = pool.create_connection(origin)
            kept.append(connection)
            request.assign_to_connection(connection)
    return closing


_POOL_FIELDS = ("_requests", "_connections", "_max_connections", "_max_keepalive_connections")
_POOL_PASS_FITS = httpcore.__version__.startswith("1.0.") and all(
    callable(getattr(httpcore._async.connection_pool.AsyncPoolRequest, name, None))
    for name in ("assign_to_connection", "is_queued", "clear_connection", "wait_for_connection")
)
"""The pass above is written against httpcore 1.0's pool internals; any other httpcore keeps its own."""
