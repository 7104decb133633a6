"""Tokenizer.spans gives exactly the tokens of Tokenizer.tokenize, each with where it stands in the text as given
(hypothesis, both shipped rules, on text mixing ASCII, joiners and the Unicode cases where normalizing changes a
text's length: İ, ß, ﬁ, ½, a combining accent, Hangul jamo, final sigma); and the report's one-pass marks equal the
marks built from the flat spans."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from goldeval.report.model import compact_spans, shared_marks, shared_spans
from goldeval.freetext.tokens import OPENSCRIBE, TOKENIZERS, UNICODE, _unicode_fold

ALPHABET = st.sampled_from(
    list("abcXYZ019 .'/-,;()\n\t")
    + ["é", "e\u0301", "头", "東京", "\u212a", "İ", "I\u0307", "’", "\u2010", "ß", "ﬁ", "½", "Σ", "ΑΣ", "\u1100\u1161",
       "\u11a8", "\u0301", "Ǆ", "ǅ", "ｱ", "Ⅻ", "😀", "°C", "\u0e01\u0e34"]
)
TEXT = st.lists(ALPHABET, max_size=40).map("".join)
RULES = st.sampled_from(sorted(TOKENIZERS))
FOLD = {"openscribe": str.lower, "unicode": _unicode_fold}


@settings(max_examples=500, deadline=None)
@given(TEXT, RULES)
@example("İstanbul ΑΣ ½ \u1100\u1161\u11a8 ﬁne", "unicode")
@example("İstanbul ΑΣ ½ \u1100\u1161\u11a8 ﬁne", "openscribe")
def test_spans_are_the_tokens_with_their_place_in_the_text(text, name):
    rule = TOKENIZERS[name]
    s = rule.spans(text)
    assert s.tokens == rule.tokenize(text)
    assert [t for t, _, _ in s] == s.tokens and len(s) == len(s.tokens) == len(s.starts) == len(s.ends)
    prev_start = prev_end = 0
    for tok, a, b in s:
        assert 0 <= a < b <= len(text)
        assert a >= prev_start and b >= prev_end  # in text order
        prev_start, prev_end = a, b
        # the written characters the token came from read, normalized, as a text that holds the token
        assert tok in FOLD[name](text[a:b])
    if text.isascii():
        assert [text[a:b].lower() for _, a, b in s] == s.tokens
        assert all(s.ends[i] <= s.starts[i + 1] for i in range(len(s) - 1))  # no overlap


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, RULES)
def test_one_pass_marks_equal_the_marks_of_the_flat_spans(p, r, name):
    rule = TOKENIZERS[name]
    flat = shared_spans(p, r, rule)
    assert shared_marks(p, r, rule) == (compact_spans(p, flat[0]), compact_spans(r, flat[1]))


def test_spans_by_hand():
    # "BP 138/86, BP high": B0 P1 ' '2 1 3 8 / 8 6 (3..8) ','9 ' '10 B11 P12 ' '13 h14 i g h17
    s = OPENSCRIBE.spans("BP 138/86, BP high")
    assert (s.tokens, s.starts, s.ends) == (["bp", "138/86", "bp", "high"], [0, 3, 11, 14], [2, 9, 13, 18])
    # 'İ'.lower() is "i" + U+0307 (two characters): openscribe reads "i", then U+0307 separates, then "stanbul";
    # in the text as written "İ" is offset 0 and "stanbul" is 1..8
    s = OPENSCRIBE.spans("İstanbul visit")
    assert (s.tokens, s.starts, s.ends) == (["i", "stanbul", "visit"], [0, 1, 9], [1, 8, 14])
    # unicode: "cafe" + U+0301 is NFKC "café" (5 written characters, 0..5); "ﬁne" is NFKC "fine" (3 written, 6..9)
    s = UNICODE.spans("cafe\u0301 ﬁne")
    assert (s.tokens, s.starts, s.ends) == (["café", "fine"], [0, 6], [5, 9])
    # Hangul jamo L+V+T compose into one syllable: the span is the three jamo; "½" is "1⁄2": two tokens, one character
    s = UNICODE.spans("\u1100\u1161\u11a8 ½")
    assert (s.tokens, s.starts, s.ends) == (["각", "1", "2"], [0, 4, 4], [3, 5, 5])


ASCII = st.lists(st.sampled_from(["a", "b", "X", "0", "1", ".", "'", "/", "-", " ", ",", "\n", "ab", "BP", "138/86", "a.b"]),
                 max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(ASCII, ASCII)
@example("BP 138/86, BP high", "bp 138/86 normal")  # ([0, 9], [0, 9]): "BP 138/86" shared, the second BP not
def test_compiled_marks_equal_the_python_definition(p, r):
    fast = pytest.importorskip("goldeval._fast")
    if not hasattr(fast, "shared_marks"):
        pytest.skip("goldeval._fast was built before shared_marks existed: reinstall (pip install -e .)")
    from goldeval.report.model import shared_marks_python

    assert fast.shared_marks(p, r) == shared_marks_python(p, r, OPENSCRIBE)
    assert fast.shared_marks(p + "é", r) is None  # not ASCII: the Python path decides
