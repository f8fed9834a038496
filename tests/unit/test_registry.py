"""PolicyRegistry: precedence call > tool name rule > annotation rule > server > client default, merged field by
field; exact names beat globs, the longest glob wins; annotation rules follow the specification's hint defaults."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from hypothesis import given, strategies as st

from mcp_client import DEFAULT_RETRY, DEFAULT_TIMEOUT, RetryPolicy, TimeoutPolicy
from mcp_client.policy.registry import (
    NO_LIMITS,
    UNSET,
    AnnotationKey,
    PartialRetry,
    PartialTimeout,
    PolicyLayer,
    PolicyRegistry,
    annotation_flags,
)

READ_ONLY = mcp_types.ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = mcp_types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)


def timeout(**fields: Any) -> PolicyLayer:
    return PolicyLayer(timeout=PartialTimeout(**fields))


def retry(**fields: Any) -> PolicyLayer:
    return PolicyLayer(retry=PartialRetry(**fields))


def test_defaults_are_the_client_defaults() -> None:
    assert PolicyRegistry().resolve("any") == (DEFAULT_TIMEOUT, DEFAULT_RETRY)
    assert PolicyRegistry().resolve(None) == (DEFAULT_TIMEOUT, DEFAULT_RETRY)
    assert DEFAULT_TIMEOUT.idle == 60
    assert DEFAULT_TIMEOUT.maximum == 600
    assert DEFAULT_TIMEOUT.connect == 30


def test_partial_layers_merge_field_by_field() -> None:
    registry = PolicyRegistry(
        server=timeout(idle=30, maximum=600),
        tools={"reindex": timeout(idle=300)},
        default_timeout=TimeoutPolicy(idle=1, maximum=2, connect=3, notify_after=4),
    )
    policy, _ = registry.resolve("reindex")
    assert (policy.idle, policy.maximum, policy.connect, policy.notify_after) == (300, 600, 3, 4)
    assert registry.server_timeout == TimeoutPolicy(idle=30, maximum=600, connect=3, notify_after=4)


def test_precedence_call_over_tool_over_annotation_over_server() -> None:
    registry = PolicyRegistry(
        server=timeout(idle=1, maximum=10, connect=5, notify_after=7),
        tools={"t": timeout(idle=2)},
        annotations={"read_only": timeout(idle=3, maximum=30)},
    )
    policy, _ = registry.resolve("t", READ_ONLY)
    assert (policy.idle, policy.maximum, policy.connect) == (2, 30, 5)
    policy, _ = registry.resolve("other", READ_ONLY)
    assert (policy.idle, policy.maximum) == (3, 30)
    policy, _ = registry.resolve("t", READ_ONLY, call_timeout=TimeoutPolicy(idle=9, maximum=99))
    assert (policy.idle, policy.maximum, policy.connect) == (9, 99, 30)  # a full policy replaces all
    policy, _ = registry.resolve("t", READ_ONLY, call_timeout=4)
    assert (policy.idle, policy.maximum) == (2, 4)  # a number is the maximum only
    policy, _ = registry.resolve("t", READ_ONLY, call_timeout=PartialTimeout(notify_after=1))
    assert (policy.idle, policy.maximum, policy.notify_after) == (2, 30, 1)
    assert registry.resolve("t", call_timeout=None)[0] == TimeoutPolicy.unlimited()


def test_exact_beats_glob_and_the_longest_glob_wins_ties_by_order() -> None:
    registry = PolicyRegistry(
        tools={
            "*": timeout(idle=1),
            "re*": timeout(idle=2),
            "reindex*": timeout(idle=3),
            "reindex": timeout(idle=4),
            "?eindex_a*": timeout(idle=5),  # as long as "reindex_*", given first
            "reindex_*": timeout(idle=6),
        }
    )
    idle = {tool: registry.resolve(tool)[0].idle for tool in ("x", "read", "reindexer", "reindex", "reindex_all")}
    assert idle == {"x": 1, "read": 2, "reindexer": 3, "reindex": 4, "reindex_all": 5}
    assert registry.tool_rule("reindex_b") == ("reindex_*", registry.tools["reindex_*"])


def test_globs_are_case_sensitive() -> None:
    registry = PolicyRegistry(tools={"Re*": timeout(idle=2)})
    assert registry.resolve("Reindex")[0].idle == 2
    assert registry.resolve("reindex")[0].idle == DEFAULT_TIMEOUT.idle


def test_annotation_flags_follow_the_specification_defaults() -> None:
    assert annotation_flags(None) is None
    expected: dict[str, frozenset[AnnotationKey]] = {
        "none": frozenset({"destructive", "open_world"}),
        "read_only": frozenset({"read_only", "idempotent", "open_world"}),
        "idempotent": frozenset({"idempotent"}),
    }
    assert annotation_flags(mcp_types.ToolAnnotations()) == expected["none"]
    assert annotation_flags(READ_ONLY) == expected["read_only"]
    hints = mcp_types.ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    assert annotation_flags(hints) == expected["idempotent"]


def test_annotation_rules_apply_only_to_known_tools_and_merge_in_the_order_given() -> None:
    registry = PolicyRegistry(
        annotations={"destructive": timeout(idle=1), "open_world": timeout(idle=2, maximum=20)},
    )
    assert registry.resolve("t", None)[0] == DEFAULT_TIMEOUT  # nothing known of the tool
    policy, _ = registry.resolve("t", DESTRUCTIVE)
    assert (policy.idle, policy.maximum) == (1, 20)
    with pytest.raises(ValueError, match="unknown annotation"):
        PolicyRegistry(annotations={"readonly": timeout(idle=1)})  # type: ignore[dict-item]


def test_retry_off_at_a_level_and_on_again_above_it() -> None:
    registry = PolicyRegistry(
        server=PolicyLayer(retry=None),
        tools={"safe": retry(attempts=5), "plain": PolicyLayer()},
        annotations={"read_only": retry(retry_idle_timeout=True)},
        default_retry=RetryPolicy(max_backoff=1.0),
    )
    assert registry.resolve("plain")[1] is None
    assert registry.server_retry is None
    assert registry.resolve("safe")[1] == RetryPolicy(attempts=5, max_backoff=1.0)
    assert registry.resolve("x", READ_ONLY)[1] == RetryPolicy(retry_idle_timeout=True, max_backoff=1.0)
    assert registry.resolve("safe", call_retry=None)[1] is None
    assert registry.resolve("plain", call_retry=PartialRetry(attempts=2))[1] == RetryPolicy(attempts=2)
    no_default = registry.with_defaults(DEFAULT_TIMEOUT, None)
    assert no_default.resolve("safe")[1] == RetryPolicy(attempts=5)
    assert PolicyRegistry(default_retry=None).resolve("t")[1] is None


def test_layer_constructors_and_validation() -> None:
    assert PolicyLayer.of(timeout=None).timeout == NO_LIMITS
    assert PolicyLayer.of(retry=None).retry is None
    assert PolicyLayer.of(timeout=TimeoutPolicy(idle=5)).timeout.set_fields == {
        "idle": 5,
        "maximum": 600.0,
        "connect": 30.0,
        "notify_after": None,
        "reset_on_any_message": False,
        "pause_maximum": False,
        "reset_on_log": True,
    }
    assert PolicyLayer().empty
    assert PartialTimeout(idle=UNSET).set_fields == {}
    with pytest.raises(ValueError, match="idle must be a positive number"):
        PartialTimeout(idle=-1)
    with pytest.raises(ValueError, match="attempts must be an integer"):
        PartialRetry(attempts=0)
    with pytest.raises(TypeError):
        PartialTimeout(pause_maximum=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive number"):
        PolicyRegistry().resolve("t", call_timeout=0)


def test_resolution_is_cached_per_tool_and_annotations() -> None:
    registry = PolicyRegistry(tools={"a*": timeout(idle=2)}, annotations={"read_only": timeout(maximum=3)})
    first = registry.resolve("abc", READ_ONLY)
    assert registry.resolve("abc", mcp_types.ToolAnnotations(read_only_hint=True)) is not first  # a new tuple...
    assert registry.resolve("abc", READ_ONLY)[0] is first[0]  # ...of the cached policies
    assert registry.resolve("abc", None)[0].maximum == DEFAULT_TIMEOUT.maximum  # other annotations, other entry


# -- properties ------------------------------------------------------------------------------------------------

DURATION = st.one_of(st.none(), st.floats(min_value=0.01, max_value=1e6))
FIELDS = ("idle", "maximum", "connect", "notify_after")
ANNOTATIONS: list[AnnotationKey] = ["read_only", "idempotent", "destructive", "open_world"]


@st.composite
def partial_timeouts(draw: st.DrawFn) -> PartialTimeout:
    chosen = draw(st.sets(st.sampled_from(FIELDS)))
    values: dict[str, Any] = {name: draw(DURATION) for name in chosen}
    return PartialTimeout(**values)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[PolicyRegistry, str, mcp_types.ToolAnnotations | None, list[PartialTimeout]]:
    """A registry, a tool, and the layers that must apply to it, most specific first (by construction)."""
    server = draw(partial_timeouts())
    tool_rule = draw(st.none() | partial_timeouts())
    read_only = draw(st.none() | partial_timeouts())
    tool = draw(st.sampled_from(["echo", "reindex", "reindex_all"]))
    annotations = draw(st.sampled_from([None, READ_ONLY, DESTRUCTIVE]))
    tools = {} if tool_rule is None else {tool: PolicyLayer(timeout=tool_rule)}
    tools["zzz*"] = PolicyLayer(timeout=PartialTimeout(idle=123456))  # never matches
    rules = {} if read_only is None else {"read_only": PolicyLayer(timeout=read_only)}
    registry = PolicyRegistry(server=PolicyLayer(timeout=server), tools=tools, annotations=rules)  # type: ignore[arg-type]
    expected = [layer for layer in (tool_rule, read_only if annotations is READ_ONLY else None) if layer is not None]
    return registry, tool, annotations, [*expected, server]


@given(scenarios(), st.none() | partial_timeouts())
def test_each_field_comes_from_the_most_specific_layer_that_sets_it(
    scenario: tuple[PolicyRegistry, str, mcp_types.ToolAnnotations | None, list[PartialTimeout]],
    call: PartialTimeout | None,
) -> None:
    registry, tool, annotations, layers = scenario
    if call is not None:
        layers = [call, *layers]
        policy, _ = registry.resolve(tool, annotations, call_timeout=call)
    else:
        policy, _ = registry.resolve(tool, annotations)
    for name in FIELDS:
        expected = next((layer.set_fields[name] for layer in layers if name in layer.set_fields), None)
        default = getattr(DEFAULT_TIMEOUT, name)
        assert getattr(policy, name) == (expected if any(name in layer.set_fields for layer in layers) else default)


@given(st.lists(st.sampled_from(["a*", "ab*", "a?c", "abc", "*c", "[ab]bc", "*"]), unique=True), st.text("abc"))
def test_the_rule_chosen_is_exact_else_the_longest_matching_glob_first_given(patterns: list[str], tool: str) -> None:
    import fnmatch

    registry = PolicyRegistry(tools={p: timeout(idle=i + 1) for i, p in enumerate(patterns)})
    rule = registry.tool_rule(tool)
    if tool in patterns:
        assert rule is not None
        assert rule[0] == tool
        return
    matching = [p for p in patterns if fnmatch.fnmatchcase(tool, p)]
    if not matching:
        assert rule is None
        return
    longest = max(len(p) for p in matching)
    assert rule is not None
    assert rule[0] == next(p for p in matching if len(p) == longest)


@given(st.lists(st.sampled_from(ANNOTATIONS), unique=True), st.booleans(), st.booleans())
def test_annotation_rules_merge_in_the_order_given(order: list[AnnotationKey], ro: bool, idem: bool) -> None:
    hints = mcp_types.ToolAnnotations(read_only_hint=ro, idempotent_hint=idem)
    flags = annotation_flags(hints)
    assert flags is not None
    registry = PolicyRegistry(annotations={key: timeout(idle=i + 1) for i, key in enumerate(order)})
    matching = [i + 1 for i, key in enumerate(order) if key in flags]
    assert registry.resolve("t", hints)[0].idle == (matching[0] if matching else DEFAULT_TIMEOUT.idle)
