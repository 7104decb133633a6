"""The token rules, on examples worked out by hand from the rule's text (DESIGN.md "Token F1", issue #2)."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES
from goldeval.errors import InputError
from goldeval.freetext.overlap import overlap_of_tokens
from goldeval.freetext.tokens import OPENSCRIBE, UNICODE, get_tokenizer


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("BP 138/86", ["bp", "138/86"]),
        ("well-controlled", ["well-controlled"]),
        ("HbA1c 7.1", ["hba1c", "7.1"]),
        ("Hb.", ["hb"]),
        ("1,000", ["1", "000"]),
        ("patient's", ["patient's"]),
        ("a--b a.-b", ["a", "b", "a", "b"]),  # two joiners in a row do not join
        ("-x- 'y' /z/", ["x", "y", "z"]),  # a joiner needs a letter or digit on both sides
        ("q.d. 12.5mg mg/dL", ["q.d", "12.5mg", "mg/dl"]),
        ("  \n\t", []),
        ("café", ["caf"]),  # é is not ASCII: it separates under this rule
    ],
)
def test_openscribe_rule(text, tokens):
    assert OPENSCRIBE.tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("café", ["café"]),
        ("don\u2019t", ["don't"]),  # curly apostrophe read as '
        ("well\u2010controlled 3\u20135", ["well-controlled", "3-5"]),  # Unicode hyphen, en dash
        ("a\u2014b", ["a", "b"]),  # em dash separates
        ("Straße", ["strasse"]),  # casefold
        ("ＡＢＣ１", ["abc1"]),  # NFKC
        ("头痛 发热", ["头", "痛", "发", "热"]),  # Han: one token per character
        ("Давление 120/80", ["давление", "120/80"]),
        ("रक्तचाप सामान्य है", ["रक्तचाप", "सामान्य", "है"]),  # vowel signs and virama keep the word whole
        ("İstanbul", ["istanbul"]),  # casefold's i + U+0307 read as i
        ("\U00030000\U00030001", ["\U00030000", "\U00030001"]),  # CJK extension G, per character
        ("37.2°C 🙂", ["37.2", "c"]),  # symbols separate
    ],
)
def test_unicode_rule(text, tokens):
    assert UNICODE.tokenize(text) == tokens


def test_unreadable_letters_are_reported():
    assert OPENSCRIBE.unreadable("头痛") == "头"
    assert OPENSCRIBE.unreadable("Давление") == "д".upper()
    assert OPENSCRIBE.unreadable("37.2°C, 5 µg") == "µ"  # ° is not a letter; µ is
    assert OPENSCRIBE.unreadable("plain ascii") is None
    assert UNICODE.unreadable("头痛") is None


def test_unknown_tokenizer_is_refused_with_the_known_names():
    with pytest.raises(InputError, match="openscribe, unicode"):
        get_tokenizer("whitespace")


@pytest.mark.skipif(OPENSCRIBE.fast_counts is None, reason="C fast path not built")
def test_fast_path_equals_the_rule_on_the_real_notes():
    # The compiled counts must equal regex tokens + multiset intersection on every real note pair.
    for name in ("openscribe_primock57_predictions.jsonl", "openscribe_acibench_predictions.jsonl"):
        for line in (EXAMPLES / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["prediction"] is None:
                continue
            want = overlap_of_tokens(OPENSCRIBE.tokenize(row["prediction"]), OPENSCRIBE.tokenize(row["reference"]))
            assert OPENSCRIBE.fast_counts(row["prediction"], row["reference"]) == (
                want.n_prediction, want.n_reference, want.n_overlap)


@pytest.mark.skipif(OPENSCRIBE.fast_counts is None, reason="C fast path not built")
@pytest.mark.parametrize(
    "pair",
    [("\u212a ok", "k OK"), ("İstanbul", "i̇stanbul"), ("a.b. c", "A.B c."), ("x" * 5000, "x" * 5000), ("", ""), ("'-./", "")],
)
def test_fast_path_edge_cases(pair):
    want = overlap_of_tokens(OPENSCRIBE.tokenize(pair[0]), OPENSCRIBE.tokenize(pair[1]))
    assert OPENSCRIBE.fast_counts(*pair) == (want.n_prediction, want.n_reference, want.n_overlap)
