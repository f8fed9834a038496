"""The public boundary's one mapping of failures to the package's typed errors.

Work done for a call often runs inside task groups (a heartbeat beside the call, the connection's reader, a
transport's writer), and a task group raises an :class:`ExceptionGroup` around whatever failed in it. A caller of the
package must see the one typed error, never the group: :func:`sole_error` finds it, and :func:`typed` is the
boundary every public entry point (and every wrapper: the facade, the adapters, the durable activities) passes its
failures through; :func:`typed_methods` puts every public coroutine method of a class behind it.

An environment the HTTP library cannot build a client in (a SOCKS proxy without ``socksio``: ``ImportError``; a proxy
of an unknown scheme: ``ValueError``; a proxy URL that does not parse: the library's ``InvalidURL``; a missing or
unreadable CA file named by ``SSL_CERT_FILE``: ``OSError``) is a failure to connect: :func:`building_http_client` is
where each transport makes its client (the core engine's HTTP+SSE fallback client too, made only when needed).
Imports only :mod:`mcp_client.errors`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from mcp_client._log_guard import guard_http_library_logs
from mcp_client.errors import ConnectError, MCPClientError

__all__ = ["building_http_client", "sole_error", "typed", "typed_coroutine", "typed_inside", "typed_methods"]

P = ParamSpec("P")
T = TypeVar("T")
C = TypeVar("C", bound=type)
F = TypeVar("F", bound=Callable[..., Any])

_TYPED = "__mcp_client_typed__"
"""Set on a wrapper made here, so that a method is never wrapped twice."""
_DUNDERS = frozenset({"__aenter__", "__aexit__", "__anext__"})
"""The async protocol methods that are as public as a named method: an ``async with``, an ``async for``."""


def sole_error(error: BaseException) -> BaseException:
    """The error a caller should see for ``error``.

    Inside (nested) exception groups: the host's own interrupt (``KeyboardInterrupt``, ``SystemExit``) whenever the
    groups hold one, since no client error may stand in for it; else the one :class:`MCPClientError` when the
    groups hold exactly one (besides cancellations the failure itself caused); the one error when a group holds
    exactly one; otherwise the group.
    """
    if not isinstance(error, BaseExceptionGroup):
        return error
    leaves = list(_leaves(error))
    for leaf in leaves:
        if isinstance(leaf, (KeyboardInterrupt, SystemExit)):
            return leaf
    client_errors = [leaf for leaf in leaves if isinstance(leaf, MCPClientError)]
    if len(client_errors) == 1:
        return client_errors[0]
    if len(leaves) == 1:
        return leaves[0]
    return error


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for inner in group.exceptions:
        if isinstance(inner, BaseExceptionGroup):
            yield from _leaves(inner)
        else:
            yield inner


@contextmanager
def typed() -> Iterator[None]:
    """Re-raise a group that holds one error as that error (its group kept as the context)."""
    try:
        yield
    except BaseExceptionGroup as group:
        sole = sole_error(group)
        if sole is group:
            raise
        raise sole from group


def typed_coroutine(func: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """``func`` with its failures passed through :func:`typed` (its name, signature and docstring kept)."""
    if getattr(func, _TYPED, False):
        return func

    @functools.wraps(func)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        with typed():
            return await func(*args, **kwargs)

    setattr(wrapper, _TYPED, True)
    return wrapper


def typed_inside(func: F) -> F:
    """Mark a public coroutine method that passes its failures through :func:`sole_error` in its own frame, so
    :func:`typed_methods` leaves it unwrapped: a call in flight holds its frames, and the hottest path (a tool
    call) keeps to the frames it needs. A test puts a group around each such method's failure and expects the one
    error (``tests/promises/test_typed_boundary.py``)."""
    setattr(func, _TYPED, True)
    return func


def typed_methods(cls: C) -> C:
    """Put every public coroutine method of ``cls`` (and ``__aenter__``/``__aexit__``/``__anext__``), wherever in
    its own classes it is defined (a mixin's too), behind :func:`typed`: the class's public boundary in one place."""
    for klass in cls.__mro__:
        if klass is object or klass.__module__.split(".")[0] != cls.__module__.split(".")[0]:
            continue  # (a base of another package is not ours to change)
        for name, member in list(vars(klass).items()):
            if (not name.startswith("_") or name in _DUNDERS) and inspect.iscoroutinefunction(member):
                setattr(klass, name, typed_coroutine(member))
    return cls


@contextmanager
def building_http_client(endpoint: str) -> Iterator[None]:
    """Where a transport makes its HTTP client (or takes the caller's): an environment the library cannot build one
    in becomes a :class:`~mcp_client.errors.ConnectError` naming ``endpoint`` (a redacted name; the proxy's URL,
    which may hold credentials, is never quoted); and the HTTP libraries' own loggers get the package's log guard
    (:func:`~mcp_client._log_guard.guard_http_library_logs`), since they log each request's whole URL."""
    guard_http_library_logs()
    try:
        yield
    except ImportError as exc:  # a proxy scheme whose optional package is missing (SOCKS without socksio)
        raise ConnectError(f"{endpoint!r}: the HTTP client cannot be made in this environment: {exc.msg}") from exc
    except OSError as exc:  # TLS trust the environment names (SSL_CERT_FILE, SSL_CERT_DIR) missing or unreadable
        raise ConnectError(
            f"{endpoint!r}: the HTTP client cannot be made in this environment: the TLS trust it names "
            f"(SSL_CERT_FILE, SSL_CERT_DIR) cannot be loaded: {exc.strerror or type(exc).__name__}"
        ) from exc
    except MCPClientError:
        raise
    except Exception as exc:  # a proxy URL of an unknown scheme (ValueError) or that does not parse (InvalidURL)
        raise ConnectError(
            f"{endpoint!r}: the HTTP client cannot be made in this environment: a proxy named by the environment "
            "(HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) is not usable"
        ) from exc
