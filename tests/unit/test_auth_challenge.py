"""``WWW-Authenticate`` parsing and scope selection."""

from __future__ import annotations

import pytest

from mcp_client.auth import Challenge, parse_www_authenticate
from mcp_client.auth.challenge import pick_challenge
from mcp_client.auth.scopes import select_scopes, union


def test_bearer_with_quoted_parameters() -> None:
    [challenge] = parse_www_authenticate(
        ['Bearer resource_metadata="https://mcp.test/.well-known/oauth-protected-resource/mcp", scope="a b"']
    )
    assert challenge.scheme == "bearer"
    assert challenge.resource_metadata == "https://mcp.test/.well-known/oauth-protected-resource/mcp"
    assert challenge.scopes == ("a", "b")
    assert challenge.error is None


def test_names_are_case_insensitive_values_kept_and_escapes_undone() -> None:
    [challenge] = parse_www_authenticate(['BEARER Error="insufficient_scope", Error_Description="say \\"hi\\""'])
    assert challenge.scheme == "bearer"
    assert challenge.error == "insufficient_scope"
    assert challenge.params["error_description"] == 'say "hi"'


def test_several_challenges_in_one_header_and_across_headers() -> None:
    challenges = parse_www_authenticate(
        ['Basic realm="x", Bearer scope=read, error=invalid_token', 'DPoP algs="ES256", error="use_dpop_nonce"']
    )
    assert [c.scheme for c in challenges] == ["basic", "bearer", "dpop"]
    assert challenges[1].params == {"scope": "read", "error": "invalid_token"}
    assert challenges[2].error == "use_dpop_nonce"
    picked = pick_challenge(challenges)
    assert picked is not None
    assert picked.scheme == "dpop"


def test_token68_and_bare_scheme() -> None:
    challenges = parse_www_authenticate(["Negotiate abc123==, Bearer"])
    assert challenges == [Challenge("negotiate", {}, "abc123=="), Challenge("bearer")]


def test_garbage_is_skipped_not_fatal() -> None:
    challenges = parse_www_authenticate(['", , Bearer scope="x"'])
    assert [c.scheme for c in challenges] == ["bearer"]
    assert challenges[0].scopes == ("x",)


def test_empty_scope_is_not_absent_and_duplicates_collapse() -> None:
    [challenge] = parse_www_authenticate(['Bearer scope="", realm=r'])
    assert challenge.scopes == ()
    [challenge] = parse_www_authenticate(['Bearer scope="a a b"'])
    assert challenge.scopes == ("a", "b")


def test_no_bearer_or_dpop_challenge_picks_nothing() -> None:
    assert pick_challenge(parse_www_authenticate(['Basic realm="x"'])) is None


@pytest.mark.parametrize(
    ("challenged", "resource", "default", "expected"),
    [
        (("mcp:basic",), ["a", "b"], ["d"], ("mcp:basic",)),  # the header wins
        (None, ["a", "b"], ["d"], ("a", "b")),  # then every scopes_supported
        ((), ["a"], None, ("a",)),  # an empty challenge scope counts as none
        (None, None, ["d"], ("d",)),  # then the host's defaults
        (None, None, None, None),  # then omitted
        (None, [], None, None),
    ],
)
def test_scope_selection_order(
    challenged: tuple[str, ...] | None, resource: list[str] | None, default: list[str] | None, expected: object
) -> None:
    assert select_scopes(challenged=challenged, resource_scopes=resource, default=default) == expected


def test_offline_access_only_when_advertised_and_never_alone() -> None:
    advertised = ["mcp:basic", "offline_access"]
    assert select_scopes(challenged=None, resource_scopes=["mcp:basic"], server_scopes=advertised) == (
        "mcp:basic",
        "offline_access",
    )
    assert select_scopes(challenged=None, resource_scopes=["mcp:basic"], server_scopes=["mcp:basic"]) == ("mcp:basic",)
    assert select_scopes(challenged=None, resource_scopes=None, server_scopes=advertised) is None
    assert select_scopes(challenged=None, resource_scopes=["x"], server_scopes=advertised, offline_access=False) == (
        "x",
    )


def test_step_up_keeps_what_was_asked_before() -> None:
    assert select_scopes(challenged=("write",), resource_scopes=None, previous=("read",)) == ("read", "write")
    assert union(["a", "b"], None, ["b", "c"]) == ("a", "b", "c")
