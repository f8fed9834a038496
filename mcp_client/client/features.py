"""What a host calls besides tools: prompts, resources and templates, completion, discovery, ping, log levels,
skills, and the result cache they read through. A part of :class:`~mcp_client.Client`, kept in a module of its own.

:class:`ServerFeatures` is a base class of ``Client``: every request here goes out through ``Client.request`` (so
under the client's policies), cacheable ones through the client's :class:`~mcp_client.cached_requests.
CachedRequests`. Nothing here touches the session or a transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import mcp_types
from pydantic import BaseModel

from mcp_client._types import JSONObject
from mcp_client.cache.requests import CacheArg, CachedRequests, cache_mode
from mcp_client.cache.result_cache import ResultCache
from mcp_client.client.output_schema import OutputValidator
from mcp_client.extensions.skills import Skills
from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg
from mcp_client.protocol.completion import CompletionRef, completion_params
from mcp_client.protocol.logs import LogLevel, check_level, with_log_level
from mcp_client.protocol.results import parse_result
from mcp_client.protocol.tool_headers import HeaderParam

if TYPE_CHECKING:
    from mcp_client.calls.progress import ProgressCallback
    from mcp_client.client.link import Link
    from mcp_client.policy.registry import RetryArg
    from mcp_client.protocol.era import Era
    from mcp_client.protocol.negotiate import ServerIdentity
    from mcp_client.session.session import Session

__all__ = ["ServerFeatures"]

ModelT = TypeVar("ModelT", bound=BaseModel)


class ServerFeatures:
    """Prompts, resources, completion, discovery, ping, log levels and skills: the methods of
    :class:`~mcp_client.Client` beyond tools (documented there)."""

    _cached: CachedRequests
    _log_level: LogLevel | None
    _annotations: dict[str, mcp_types.ToolAnnotations | None]
    _output_schemas: dict[str, dict[str, Any] | None]
    _header_params: dict[str, tuple[HeaderParam, ...]]
    _output: OutputValidator | None
    _link: Link

    if TYPE_CHECKING:

        @property
        def era(self) -> Era: ...

        @property
        def session(self) -> Session: ...

        async def request(
            self,
            method: str,
            params: JSONObject | None = None,
            *,
            timeout: TimeoutArg = USE_CLIENT_DEFAULT,
            on_progress: ProgressCallback | None = None,
            retry: RetryArg = USE_CLIENT_DEFAULT,
            idempotent: bool = False,
            log_level: LogLevel | None = None,
        ) -> JSONObject: ...

        def _forget_task_support(self) -> None: ...

    @property
    def skills(self) -> Skills:
        """The skills extension (SEP-2640): list, load and read a server's skills, every file verified."""
        return Skills(self)  # type: ignore[arg-type]  # (self is a Client, a SkillsHost)

    @property
    def cache(self) -> ResultCache | None:
        """The result cache (``None`` when off); its ``invalidate()`` drops what a change made stale."""
        return self._cached.cache

    def _now(self) -> float:
        return session.clock() if (session := self._link.session) is not None else anyio.current_time()

    def _checked(self, name: str, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
        """``result``, once its structured output matches the tool's ``outputSchema`` (when validation is on)."""
        if self._output is not None:
            self._output.check(name, self._output_schemas.get(name), result)
        return result

    def _stamp_log_level(self, params: JSONObject, level: LogLevel | None) -> None:
        with_log_level(params, level if level is not None else self._log_level, modern=self.era.request_logs)

    def _remember_discovery(self, identity: ServerIdentity) -> ServerIdentity:
        """The start-up probe's ``DiscoverResult`` is a cacheable answer like any other: kept for :meth:`discover`."""
        cache = self._cached.cache
        if identity.discovered is not None and cache is not None:
            cache.put(
                self._cached.server, self._cached.context, "server/discover", None, identity.discovered, now=self._now()
            )
        return identity

    def _on_cache_invalidated(self, server: str | None, method: str | None, uri: str | None) -> None:
        if server in (None, self._cached.server) and method in (None, "tools/list"):
            self._forget_tool_hints()

    def _forget_tool_hints(self) -> None:
        """The tool listing is stale: so are the hints, headers and schemas the client read from it (stale hints are
        worse than none; they are learnt again at the next ``list_tools()``)."""
        self._annotations.clear()
        self._header_params.clear()
        self._output_schemas.clear()
        self._forget_task_support()

    # -- prompts and resources ----------------------------------------------------------------------------------

    async def list_prompts(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> list[mcp_types.Prompt]:
        """Every prompt of the server, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        pages = self._paginate("prompts/list", mcp_types.ListPromptsResult, timeout, cache)
        return [prompt for page in [p async for p in pages] for prompt in page.prompts]

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
    ) -> mcp_types.GetPromptResult:
        """Get a prompt, filled in with ``arguments``."""
        params: JSONObject = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result = await self.request("prompts/get", params, timeout=timeout, idempotent=True)
        return parse_result("prompts/get", result, mcp_types.GetPromptResult)

    async def list_resources(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> list[mcp_types.Resource]:
        """Every resource of the server, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        pages = self._paginate("resources/list", mcp_types.ListResourcesResult, timeout, cache)
        return [resource for page in [p async for p in pages] for resource in page.resources]

    async def read_resource(
        self, uri: str, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> mcp_types.ReadResourceResult:
        """Read a resource (from the cache while the server's ``ttlMs`` says it is fresh, unless ``cache=False``)."""
        result = await self._fetch_cacheable("resources/read", {"uri": uri}, timeout, cache)
        return parse_result("resources/read", result, mcp_types.ReadResourceResult)

    async def list_resource_templates(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> list[mcp_types.ResourceTemplate]:
        """Every resource template, all pages fetched (fresh pages from the cache unless ``cache=False``)."""
        pages = self._paginate("resources/templates/list", mcp_types.ListResourceTemplatesResult, timeout, cache)
        return [template for page in [p async for p in pages] for template in page.resource_templates]

    # -- the rest of what a host calls ------------------------------------------------------------------------

    async def complete(
        self,
        ref: CompletionRef,
        argument_name: str,
        value: str,
        context: Mapping[str, str] | None = None,
        *,
        timeout: TimeoutArg = USE_CLIENT_DEFAULT,
    ) -> mcp_types.Completion:
        """Values the server suggests for an argument of a prompt or resource template (``completion/complete``).

        Args:
            ref: ``mcp_types.PromptReference`` or ``mcp_types.ResourceTemplateReference``.
            argument_name: The argument being completed.
            value: What has been typed so far.
            context: The arguments already filled in, by name.
        """
        params = completion_params(ref, argument_name, value, context)
        result = await self.request("completion/complete", params, timeout=timeout, idempotent=True)
        return parse_result("completion/complete", result, mcp_types.CompleteResult).completion

    async def discover(
        self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT, cache: CacheArg = True
    ) -> mcp_types.DiscoverResult:
        """What the server says of itself (``server/discover``, 2026-07-28), from the cache while it is fresh."""
        result = await self._fetch_cacheable("server/discover", {}, timeout, cache)
        return parse_result("server/discover", result, mcp_types.DiscoverResult)

    async def ping(self, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Check that the server answers: ``ping`` at 2025-11-25; at 2026-07-28, which has no ``ping``, an
        uncached ``server/discover`` (every server must serve it). Raises like any request."""
        method = "ping" if self.era.has_ping else "server/discover"
        await self.request(method, {}, timeout=timeout, idempotent=True)

    async def set_log_level(self, level: LogLevel, *, timeout: TimeoutArg = USE_CLIENT_DEFAULT) -> None:
        """Ask for the server's log messages at ``level`` and above, as :class:`~mcp_client.ServerLog` events:
        ``logging/setLevel`` at 2025-11-25 (for the session); at 2026-07-28 the level every later request asks
        for in its ``_meta`` (a call's own ``log_level=`` wins), with nothing sent."""
        check_level(level)
        if self.era.request_logs:
            self._log_level = level
            return
        await self.request("logging/setLevel", {"level": level}, timeout=timeout, idempotent=True)

    async def _send_idempotent(self, method: str, params: JSONObject, timeout: TimeoutArg) -> JSONObject:
        return await self.request(method, params, timeout=timeout, idempotent=True)

    async def _paginate(
        self, method: str, model: type[ModelT], timeout: TimeoutArg, cache: CacheArg
    ) -> AsyncIterator[ModelT]:
        send = lambda m, p: self._send_idempotent(m, p, timeout)  # noqa: E731
        raw = self._cached.pages(method, send, mode=cache_mode(cache))
        async for page in raw:
            yield parse_result(method, page, model)

    async def _fetch_cacheable(
        self, method: str, params: JSONObject, timeout: TimeoutArg, cache: CacheArg
    ) -> JSONObject:
        send = lambda m, p: self._send_idempotent(m, p, timeout)  # noqa: E731
        return (await self._cached.fetch(method, params, send, mode=cache_mode(cache)))[0]
