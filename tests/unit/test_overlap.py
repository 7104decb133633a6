"""token_f1 and section_f1 on values worked out by hand."""

from __future__ import annotations

import pytest

from goldeval import InputError
from goldeval.errors import UnreadableTextError
from goldeval.freetext.overlap import section_f1, token_f1


def test_multiset_counts_repeats():
    # pred {a:2, b:1} (3 tokens), ref {a:1, c:1} (2): overlap 1 -> P 1/3, R 1/2, F1 = 2*(1/6)/(5/6) = 0.4
    got = token_f1("a a b", "a c")
    assert (got.precision, got.recall) == (pytest.approx(1 / 3), 0.5)
    assert got.f1 == pytest.approx(0.4)
    assert (got.n_prediction, got.n_reference, got.n_overlap) == (3, 2, 1)


def test_empty_conventions():
    assert token_f1("", "").f1 == 1.0  # both without tokens
    assert token_f1("...", "").f1 == 1.0  # punctuation only has no tokens
    assert token_f1("x", "").f1 == 0.0 and token_f1("", "x").recall == 0.0  # exactly one


def test_unreadable_both_empty_raises_not_one():
    with pytest.raises(UnreadableTextError, match="openscribe.*--tokenizer unicode"):
        token_f1("Давление", "Давление")
    # under the unicode rule the same pair is simply read
    assert token_f1("Давление", "Давление", tokenizer="unicode").f1 == 1.0


def test_non_string_is_refused():
    with pytest.raises(InputError, match="prediction: expected a str, got NoneType"):
        token_f1(None, "x")  # type: ignore[arg-type]


def test_section_f1_macro_skips_both_empty_sections():
    # s1: pred [a, b], ref [a] -> P 1/2, R 1, F1 2/3; s2 empty both (1.0, not averaged); s3 ref only -> 0.0
    got = section_f1({"s1": "a b", "s2": ""}, {"s1": "a", "s2": None, "s3": "c"})
    assert got.per_section["s2"].f1 == 1.0
    assert got.scored_sections == ("s1", "s3")
    assert got.macro_f1 == pytest.approx((2 / 3 + 0.0) / 2)
    # pooled: pred [a, b], ref [a, c] -> P 1/2, R 1/2, F1 1/2
    assert got.whole_text.f1 == pytest.approx(0.5)


def test_section_f1_no_text_anywhere_has_no_macro():
    got = section_f1({"s": ""}, {"s": ""})
    assert got.macro_f1 is None and got.whole_text.f1 == 1.0


def test_section_value_must_be_text():
    with pytest.raises(InputError, match=r"reference\.plan: a section must be a string"):
        section_f1({"plan": "x"}, {"plan": 3})
