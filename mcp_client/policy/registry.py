"""Per-server and per-tool timeout and retry rules, and how they combine into the policy of one call. Pure: no I/O.

A :class:`PolicyRegistry` holds, for one server, layers of *partial* policies: each sets only the fields it names
and leaves the others to the layer below. :meth:`PolicyRegistry.resolve` stacks them, most specific first:

1. **call**: the ``timeout=`` / ``retry=`` arguments of the call itself;
2. **tool name rule**: the rule whose key equals the tool's name, else the *most specific* glob that matches it
   (:func:`fnmatch.fnmatchcase`, case-sensitive; the longest pattern wins; between patterns of the same length,
   the one given first). Only one tool name rule applies;
3. **annotation rules**: every rule whose annotation the tool has (``read_only``, ``idempotent``, ``destructive``,
   ``open_world``, as ``tools/list`` reported them). When several match, they are merged field by field in the
   order they were given (the first to set a field wins);
4. **server**: the server's own partial policy;
5. **client default**: a complete :class:`TimeoutPolicy` and ``RetryPolicy | None``
   (:data:`~mcp_client.DEFAULT_TIMEOUT` and :data:`~mcp_client.DEFAULT_RETRY` unless given).

Merging is field by field: each field of the result comes from the most specific layer that sets it. So a tool
rule ``{"idle": 300}`` over a server ``{"idle": 30, "maximum": 600}`` gives ``idle=300, maximum=600``.

Retry has one more state per layer, *off* (``retry=None``: no retries at this level). Walking the layers from the
most specific, an *off* layer met before any layer set a retry field turns retries off for the call (the result is
``None``); an *off* layer met after a more specific layer has set fields is skipped, and the remaining fields come
from the lower layers that are on, ending with the client default (or :class:`RetryPolicy`'s own defaults when
the client default is ``None``).

The call layer is complete, as with :meth:`Client.call_tool`: a :class:`TimeoutPolicy` replaces the resolved
timeout policy, a number replaces its ``maximum`` only, ``None`` means no limits; a :class:`RetryPolicy` or
``None`` replaces the resolved retry policy. A :class:`PartialTimeout` or :class:`PartialRetry` is also accepted
there, and merged over the resolved policy like any layer.

Resolving a tool is cached per (tool name, annotations), so a call pays for one dictionary look-up.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal, TypeAlias, get_args

import mcp_types

from mcp_client.policy.defaults import USE_CLIENT_DEFAULT, TimeoutArg, UseClientDefault
from mcp_client.policy.retry import DEFAULT_RETRY, RetryPolicy
from mcp_client.policy.timeout import DEFAULT_TIMEOUT, TimeoutPolicy, timeout_over

__all__ = [
    "ANNOTATION_KEYS",
    "NO_LIMITS",
    "UNSET",
    "AnnotationKey",
    "PartialRetry",
    "PartialTimeout",
    "PolicyLayer",
    "PolicyRegistry",
    "RetryArg",
    "Unset",
    "annotation_flags",
    "with_retry_rules",
]


class Unset(enum.Enum):
    """The type of :data:`UNSET`."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
"""A field of a partial policy that this layer leaves to the layer below."""

AnnotationKey: TypeAlias = Literal["read_only", "idempotent", "destructive", "open_world"]
"""The tool annotations a rule can be keyed by (``readOnlyHint``, ``idempotentHint``, ...)."""
ANNOTATION_KEYS: Final[tuple[AnnotationKey, ...]] = get_args(AnnotationKey)

_GLOB_CHARACTERS = frozenset("*?[")
_CACHE_LIMIT = 4096


def _set_fields(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in fields(value) if getattr(value, f.name) is not UNSET}


@dataclass(frozen=True, slots=True)
class PartialTimeout:
    """Some fields of a :class:`TimeoutPolicy`; the others (:data:`UNSET`) come from the layer below.

    ``None`` is a value here, as in :class:`TimeoutPolicy`: "no limit of this kind". Values are checked as
    :class:`TimeoutPolicy` checks them (``ValueError``/``TypeError``).
    """

    idle: float | Unset | None = UNSET
    maximum: float | Unset | None = UNSET
    connect: float | Unset | None = UNSET
    notify_after: float | Unset | None = UNSET
    reset_on_any_message: bool | Unset = UNSET
    pause_maximum: bool | Unset = UNSET
    reset_on_log: bool | Unset = UNSET

    def __post_init__(self) -> None:
        for name in ("reset_on_any_message", "pause_maximum", "reset_on_log"):
            value = getattr(self, name)
            if value is not UNSET and not isinstance(value, bool):
                raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
        DEFAULT_TIMEOUT.replace(**self.set_fields)  # validates the durations

    @property
    def set_fields(self) -> dict[str, Any]:
        """The fields this layer sets, by name."""
        return _set_fields(self)

    def apply(self, base: TimeoutPolicy) -> TimeoutPolicy:
        """``base`` with the fields this layer sets replaced."""
        changes = self.set_fields
        return base.replace(**changes) if changes else base

    @classmethod
    def of(cls, policy: TimeoutPolicy) -> PartialTimeout:
        """A layer that sets every field, to the values of ``policy``."""
        return cls(**{f.name: getattr(policy, f.name) for f in fields(policy)})


@dataclass(frozen=True, slots=True)
class PartialRetry:
    """Some fields of a :class:`RetryPolicy`; the others (:data:`UNSET`) come from the layer below.

    Values are checked as :class:`RetryPolicy` checks them (``ValueError``).
    """

    attempts: int | Unset = UNSET
    initial_backoff: float | Unset = UNSET
    max_backoff: float | Unset = UNSET
    multiplier: float | Unset = UNSET
    retry_idle_timeout: bool | Unset = UNSET
    idempotent: bool | Unset | None = UNSET

    def __post_init__(self) -> None:
        DEFAULT_RETRY.replace(**self.set_fields)  # validates

    @property
    def set_fields(self) -> dict[str, Any]:
        """The fields this layer sets, by name."""
        return _set_fields(self)

    def apply(self, base: RetryPolicy) -> RetryPolicy:
        """``base`` with the fields this layer sets replaced."""
        changes = self.set_fields
        return base.replace(**changes) if changes else base

    @classmethod
    def of(cls, policy: RetryPolicy) -> PartialRetry:
        """A layer that sets every field, to the values of ``policy``."""
        return cls(**{f.name: getattr(policy, f.name) for f in fields(policy)})


RetryArg: TypeAlias = RetryPolicy | PartialRetry | UseClientDefault | None
"""What ``call_retry=`` accepts."""


NO_LIMITS: Final = PartialTimeout(idle=None, maximum=None, connect=None, notify_after=None)
"""A layer that lifts every limit (what ``timeout=None`` / ``"timeout": null`` means for a rule)."""


def _as_partial_timeout(value: TimeoutPolicy | PartialTimeout | None) -> PartialTimeout:
    if value is None:
        return NO_LIMITS
    if isinstance(value, TimeoutPolicy):
        return PartialTimeout.of(value)
    if isinstance(value, PartialTimeout):
        return value
    raise TypeError(f"timeout must be a TimeoutPolicy, a PartialTimeout or None; got {value!r}")


def _as_partial_retry(value: RetryPolicy | PartialRetry | None) -> PartialRetry | None:
    if value is None or isinstance(value, PartialRetry):
        return value
    if isinstance(value, RetryPolicy):
        return PartialRetry.of(value)
    raise TypeError(f"retry must be a RetryPolicy, a PartialRetry or None; got {value!r}")


@dataclass(frozen=True, slots=True)
class PolicyLayer:
    """One level of rules: a partial timeout policy and a partial retry policy.

    Args:
        timeout: The timeout fields this level sets (default: none).
        retry: The retry fields this level sets (default: none), or ``None`` for "no retries at this level"
            (see the module documentation for how that combines with the levels above).
    """

    timeout: PartialTimeout = field(default_factory=PartialTimeout)
    retry: PartialRetry | None = field(default_factory=PartialRetry)

    @classmethod
    def of(
        cls,
        *,
        timeout: TimeoutPolicy | PartialTimeout | Unset | None = UNSET,
        retry: RetryPolicy | PartialRetry | Unset | None = UNSET,
    ) -> PolicyLayer:
        """A layer from complete or partial policies: ``PolicyLayer.of(timeout=PartialTimeout(idle=5))``.

        A complete :class:`TimeoutPolicy` or :class:`RetryPolicy` sets every field; ``timeout=None`` sets every
        duration to "no limit" (:data:`NO_LIMITS`); ``retry=None`` turns retries off at this level; omitted sets
        nothing.
        """
        return cls(
            timeout=PartialTimeout() if timeout is UNSET else _as_partial_timeout(timeout),
            retry=PartialRetry() if retry is UNSET else _as_partial_retry(retry),
        )

    @property
    def empty(self) -> bool:
        """True when this layer sets nothing at all."""
        return not self.timeout.set_fields and self.retry is not None and not self.retry.set_fields


_EMPTY_LAYER: Final = PolicyLayer()
_AnnotationFlags: TypeAlias = frozenset[AnnotationKey]


def annotation_flags(annotations: mcp_types.ToolAnnotations | None) -> frozenset[AnnotationKey] | None:
    """Which annotation rules a tool with these annotations matches; ``None`` when nothing is known of the tool.

    Absent hints take the defaults of the MCP specification: ``readOnlyHint`` false, ``destructiveHint`` true,
    ``idempotentHint`` false, ``openWorldHint`` true. A read-only tool is idempotent and never destructive
    (the specification gives the other two hints meaning only for tools that are not read-only).
    """
    if annotations is None:
        return None
    read_only = annotations.read_only_hint is True
    flags: set[AnnotationKey] = set()
    if read_only:
        flags.add("read_only")
    if read_only or annotations.idempotent_hint is True:
        flags.add("idempotent")
    if not read_only and annotations.destructive_hint is not False:
        flags.add("destructive")
    if annotations.open_world_hint is not False:
        flags.add("open_world")
    return frozenset(flags)


def _is_glob(pattern: str) -> bool:
    return not _GLOB_CHARACTERS.isdisjoint(pattern)


class PolicyRegistry:
    """The timeout and retry rules of one server, and the client default under them.

    ```python
    registry = PolicyRegistry(
        server=PolicyLayer.of(timeout=PartialTimeout(idle=30, maximum=600)),
        tools={"reindex*": PolicyLayer.of(timeout=PartialTimeout(idle=300, maximum=3600))},
        annotations={"read_only": PolicyLayer.of(retry=PartialRetry(attempts=5))},
    )
    timeout, retry = registry.resolve("reindex_all", tool.annotations)
    ```

    Args:
        server: The server's own level.
        tools: Rules by tool name: exact names or :mod:`fnmatch` globs (``*``, ``?``, ``[...]``), case-sensitive.
        annotations: Rules by annotation (``"read_only"``, ``"idempotent"``, ``"destructive"``, ``"open_world"``).
        default_timeout: The client default (the lowest level).
        default_retry: The client default retry policy (``None``: no retries unless a rule sets some).
    """

    def __init__(
        self,
        *,
        server: PolicyLayer | None = None,
        tools: Mapping[str, PolicyLayer] | None = None,
        annotations: Mapping[AnnotationKey, PolicyLayer] | None = None,
        default_timeout: TimeoutPolicy = DEFAULT_TIMEOUT,
        default_retry: RetryPolicy | None = DEFAULT_RETRY,
    ) -> None:
        self.server = server if server is not None else _EMPTY_LAYER
        self.tools: dict[str, PolicyLayer] = dict(tools or {})
        self.annotations: dict[AnnotationKey, PolicyLayer] = dict(annotations or {})
        for key in self.annotations:
            if key not in ANNOTATION_KEYS:
                raise ValueError(f"unknown annotation {key!r}; expected one of {', '.join(ANNOTATION_KEYS)}")
        self.default_timeout = default_timeout
        self.default_retry = default_retry
        # Globs, longest first; sorted() is stable, so patterns of the same length keep the order they were given.
        self._globs = sorted(((p, layer) for p, layer in self.tools.items() if _is_glob(p)), key=lambda t: -len(t[0]))
        self._cache: dict[tuple[str | None, _AnnotationFlags | None], tuple[TimeoutPolicy, RetryPolicy | None]] = {}
        self.server_timeout, self.server_retry = self._merge([self.server])
        """The policies of a call to no tool in particular: the server level over the client default."""

    def with_defaults(self, timeout: TimeoutPolicy, retry: RetryPolicy | None) -> PolicyRegistry:
        """The same rules over another client default (what a ``Client`` of its own ``timeout``/``retry`` uses)."""
        return PolicyRegistry(
            server=self.server,
            tools=self.tools,
            annotations=self.annotations,
            default_timeout=timeout,
            default_retry=retry,
        )

    @property
    def has_tool_rules(self) -> bool:
        """True when some rule depends on the tool (by name or by annotation)."""
        return bool(self.tools or self.annotations)

    def tool_rule(self, tool: str) -> tuple[str, PolicyLayer] | None:
        """The tool name rule that applies to ``tool`` and its key: exact first, then the most specific glob."""
        exact = self.tools.get(tool)
        if exact is not None:
            return tool, exact
        for pattern, layer in self._globs:
            if fnmatch.fnmatchcase(tool, pattern):
                return pattern, layer
        return None

    def layers(self, tool: str | None, annotations: mcp_types.ToolAnnotations | None) -> list[PolicyLayer]:
        """The layers that apply to a call of ``tool``, most specific first (without the call and the default)."""
        return self._layers(tool, annotation_flags(annotations))

    def _layers(self, tool: str | None, flags: _AnnotationFlags | None) -> list[PolicyLayer]:
        layers: list[PolicyLayer] = []
        if tool is not None:
            rule = self.tool_rule(tool)
            if rule is not None:
                layers.append(rule[1])
        if flags:
            layers.extend(layer for key, layer in self.annotations.items() if key in flags)
        layers.append(self.server)
        return layers

    def resolve(
        self,
        tool: str | None,
        annotations: mcp_types.ToolAnnotations | None = None,
        *,
        call_timeout: TimeoutArg | PartialTimeout = USE_CLIENT_DEFAULT,
        call_retry: RetryArg = USE_CLIENT_DEFAULT,
    ) -> tuple[TimeoutPolicy, RetryPolicy | None]:
        """The timeout and retry policies of one call of ``tool`` (``None``: a request that is no tool call).

        Args:
            tool: The tool's name.
            annotations: What ``tools/list`` said of it (``None``: unknown, so no annotation rule applies).
            call_timeout: The call's own ``timeout=`` (see the module documentation).
            call_retry: The call's own ``retry=``.
        """
        flags = annotation_flags(annotations)
        key = (tool, flags)
        resolved = self._cache.get(key)
        if resolved is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            resolved = self._cache[key] = self._merge(self._layers(tool, flags))
        timeout, retry = resolved
        return _call_timeout(timeout, call_timeout), _call_retry(retry, call_retry)

    def _merge(self, layers: Iterable[PolicyLayer]) -> tuple[TimeoutPolicy, RetryPolicy | None]:
        layers = list(layers)
        timeout = self.default_timeout
        for layer in reversed(layers):
            timeout = layer.timeout.apply(timeout)
        return timeout, _merge_retry(layers, self.default_retry)

    def __repr__(self) -> str:
        return (
            f"PolicyRegistry(server={self.server!r}, tools={self.tools!r}, annotations={self.annotations!r}, "
            f"default_timeout={self.default_timeout!r}, default_retry={self.default_retry!r})"
        )


def with_retry_rules(
    policies: PolicyRegistry | None, retry_rules: Mapping[str, RetryPolicy | None] | None
) -> PolicyRegistry:
    """A client's rules: ``policies``, plus ``retry_rules`` (tool name or glob → retry policy) as tool rules
    (the rules of ``policies`` for the same pattern win)."""
    registry = policies if policies is not None else PolicyRegistry()
    if not retry_rules:
        return registry
    tools = {pattern: PolicyLayer.of(retry=rule) for pattern, rule in retry_rules.items()}
    tools.update(registry.tools)
    return PolicyRegistry(server=registry.server, tools=tools, annotations=registry.annotations)


def _merge_retry(layers: Iterable[PolicyLayer], default: RetryPolicy | None) -> RetryPolicy | None:
    changes: dict[str, Any] = {}
    for layer in layers:
        if layer.retry is None:
            if not changes:
                return None
            continue  # a more specific layer turned retries on: this level's "off" does not apply
        for name, value in layer.retry.set_fields.items():
            changes.setdefault(name, value)
    if default is None:
        return DEFAULT_RETRY.replace(**changes) if changes else None
    return default.replace(**changes) if changes else default


def _call_timeout(resolved: TimeoutPolicy, call: TimeoutArg | PartialTimeout) -> TimeoutPolicy:
    if isinstance(call, UseClientDefault):
        return resolved
    if isinstance(call, PartialTimeout):
        return call.apply(resolved)
    return timeout_over(resolved, call)


def _call_retry(resolved: RetryPolicy | None, call: RetryArg) -> RetryPolicy | None:
    if isinstance(call, UseClientDefault):
        return resolved
    if call is None or isinstance(call, RetryPolicy):
        return call
    if isinstance(call, PartialRetry):
        return call.apply(resolved if resolved is not None else DEFAULT_RETRY)
    raise TypeError(f"retry must be a RetryPolicy, a PartialRetry, or None; got {call!r}")
