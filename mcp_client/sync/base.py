"""The hand-written half of each blocking class: what is not "run this method of the async object in the portal".

:mod:`.view` is generated from the async classes (``python .ci/gen_sync.py``): each of its classes subclasses one
of these and adds every other public member of its async twin, forwarded through the portal, with the async
signature and docstring. What is written here is what a generator cannot know: where the async object and its
:class:`~mcp_client.sync.portal.PortalRunner` are kept, how a handle is entered and left, how an async iterator
becomes a blocking one, and the async objects' instance attributes (``transport``, a call's ``method`` and
``policy``), which are no class members to read. A base's docstring is its generated class's (the generator
copies it there). Touches only the async objects and the portal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Generic, Self

from anyio.from_thread import BlockingPortal

from mcp_client.client.call import Call, ResultT
from mcp_client.client.client import Client as AsyncClient
from mcp_client.group import ClientGroup as AsyncClientGroup
from mcp_client.policy import Progress, TimeoutPolicy
from mcp_client.subscriptions import Change, Subscription
from mcp_client.sync.portal import PortalRunner
from mcp_client.transports.base import Transport

__all__ = ["CallBase", "ClientBase", "GroupBase", "SubscriptionBase"]


class CallBase(Generic[ResultT]):
    """A blocking handle on a call in flight: iterate its progress, cancel it, wait for its result.

    ```python
    with client.tool_call("reindex", {"collection": "docs"}) as call:
        for p in call.progress():
            print(p.progress, p.total, p.message)
        result = call.result()
    ```
    Leaving the ``with`` block before the call ended cancels it (on the wire too).
    """

    def __init__(self, runner: PortalRunner, call: Call[ResultT]) -> None:
        self._runner = runner
        self._async = call
        self._cm: AbstractContextManager[Call[ResultT]] | None = None

    def __enter__(self) -> Self:
        if self._cm is not None:
            raise RuntimeError("a SyncCall can be entered only once")
        self._cm = self._runner.portal.wrap_async_context_manager(self._async)
        self._cm.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        assert self._cm is not None
        if self._runner.stopped:  # the client closed: its close ended the call
            return
        self._cm.__exit__(exc_type, exc, traceback)

    @property
    def method(self) -> str:
        """The MCP method of the call (``tools/call``)."""
        return self._async.method

    @property
    def policy(self) -> TimeoutPolicy:
        """The timeout policy the call runs under."""
        return self._async.policy

    def detach(self) -> Self:
        """Let the call outlive its ``with`` block: it runs on (its maximum still holds) until it ends or the client
        closes; call :meth:`result` later, from any thread. A task-backed call's task is left running when the call
        stops here; only :meth:`cancel` cancels it. Returns the call."""
        self._runner.call_sync(self._async.detach)
        return self

    def result(self) -> ResultT:
        """Wait for the call to end; return its result or raise its typed error.

        Blocking: :meth:`mcp_client.Call.result`, run on the event loop; Ctrl-C cancels it. A call that ended keeps
        its outcome after the client closed (:meth:`mcp_client.Call.outcome`).
        """
        if self._runner.stopped and self._async.done:
            return self._async.outcome()
        return self._runner.run(self._async.result)

    def progress(self) -> Iterator[Progress]:
        """The call's accepted progress updates, in order, ending when the call ends. One consumer only."""
        updates = self._async.progress()
        while True:
            try:
                yield self._runner.run(anext, updates)
            except StopAsyncIteration:
                return


class SubscriptionBase:
    """A blocking handle on a subscription to a server's changes; use it with ``with``, then iterate it.

    ```python
    with client.listen(tools=True) as sub:
        for change in sub:
            ...
    ```
    Leaving the block ends the subscription on the wire.
    """

    def __init__(self, runner: PortalRunner, subscription: Subscription) -> None:
        self._runner = runner
        self._async = subscription

    def __enter__(self) -> Self:
        self._runner.run(self._async.__aenter__)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._runner.stopped:  # the client closed: its close ended the subscription
            return
        self._runner.run(self._async.aclose)

    def __iter__(self) -> Iterator[Change]:
        """The changes, until the server completes the subscription (or it is lost: ``SubscriptionLost``)."""
        while True:
            try:
                yield self._runner.run(self._async.__anext__)
            except StopAsyncIteration:
                return


class ClientBase:
    """The blocking methods of one connected :class:`mcp_client.Client`, run through a portal.

    :class:`Client` is one; :class:`ClientGroup` hands these out for its servers (``group["name"]``).
    """

    def __init__(self, client: AsyncClient, runner: PortalRunner | None) -> None:
        self._async = client
        self._runner_ = runner

    @property
    def _runner(self) -> PortalRunner:
        if self._runner_ is None:
            raise RuntimeError("the client is not connected: use 'with Client(...)' or call open()")
        return self._runner_

    @property
    def transport(self) -> Transport:
        """How the server is reached."""
        return self._async.transport

    @property
    def async_client(self) -> AsyncClient:
        """The async client underneath (its methods must run on the portal's event loop)."""
        return self._async

    @property
    def portal(self) -> BlockingPortal:
        """The portal running the client's event loop, to run coroutines of your own on it."""
        return self._runner.portal


class GroupBase:
    """The blocking methods of a :class:`mcp_client.ClientGroup`, run through a portal (see :class:`ClientGroup`)."""

    _async: AsyncClientGroup
    _runner_: PortalRunner | None

    @property
    def _runner(self) -> PortalRunner:
        if self._runner_ is None:
            raise RuntimeError("the group is not open: use 'with ClientGroup(...)' or call open()")
        return self._runner_

    @property
    def async_group(self) -> AsyncClientGroup:
        """The async group underneath (its methods must run on the portal's event loop)."""
        return self._async
