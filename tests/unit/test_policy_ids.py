"""Request id allocation: ids never repeat, and ``was_issued`` recognises exactly the ids handed out."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from mcp_client.policy import RequestIds


def _issued(n: int) -> RequestIds:
    ids = RequestIds()
    for _ in range(n):
        ids.allocate()
    return ids


@given(st.integers(min_value=1, max_value=3000))
def test_ids_never_repeat(n: int) -> None:
    """Many allocations give pairwise distinct ids."""
    ids = RequestIds()
    allocated = [ids.allocate() for _ in range(n)]
    assert len(set(allocated)) == n


@given(st.integers(min_value=0, max_value=200), st.integers(min_value=-50, max_value=300))
def test_was_issued_exactly_for_issued_ints(n: int, probe: int) -> None:
    """An int is recognised iff it was allocated (0, negatives and future ids are not)."""
    ids = RequestIds()
    allocated = {ids.allocate() for _ in range(n)}
    assert ids.was_issued(probe) is (probe in allocated)


@given(st.integers(min_value=0, max_value=200), st.integers(min_value=0, max_value=300))
def test_was_issued_accepts_numeric_strings_of_issued_ids(n: int, probe: int) -> None:
    """A peer echoing an id as a decimal string ("7") is recognised exactly like the int."""
    ids = _issued(n)
    assert ids.was_issued(str(probe)) is (1 <= probe <= n)


@pytest.mark.parametrize("request_id", [True, False, 0, -1, "0", "-1", 11, "11", "", "abc", "7a", " 7", "7.0", None])
def test_was_issued_false_for_non_ids(request_id: object) -> None:
    """Bools, 0, negatives, never-issued ids and non-digit strings are never recognised."""
    assert _issued(10).was_issued(request_id) is False


@given(st.text().filter(lambda s: not s.isdigit()))
def test_was_issued_false_for_any_non_digit_text(text: str) -> None:
    """No string that is not all digits is ever recognised."""
    assert _issued(50).was_issued(text) is False


@pytest.mark.parametrize("request_id", ["\u00b2", "\u2460"])  # superscript two, circled one
def test_was_issued_does_not_raise_on_unicode_digit_strings(request_id: str) -> None:
    """A string that str.isdigit() accepts but int() rejects is answered False, not an exception."""
    assert _issued(10).was_issued(request_id) is False


def test_was_issued_false_for_non_ascii_decimal_digits() -> None:
    """Arabic-Indic seven ("\\u0667") is not the JSON-RPC id "7": only ASCII digit strings match an issued id."""
    assert _issued(10).was_issued("\u0667") is False


def test_was_issued_does_not_raise_on_overlong_digit_string() -> None:
    """A digit string longer than Python's int-conversion limit is answered False, not an exception."""
    assert _issued(10).was_issued("1" + "0" * 5000) is False
