"""values._not_plain (the scans make_column runs on a text column's joined cells) against its definition, the one
regex values._NOT_PLAIN: the same answer on random and hand-made texts and on every white-space character.

Source: goldeval issue 15 (instructions a Spider case); the expected answers come from _NOT_PLAIN itself.
"""

from __future__ import annotations

import re
import sys
import unicodedata

import numpy as np
import pytest

from goldeval.answers import values as values_mod


def _same(cells: list[str]) -> None:
    joined = "\x00".join(cells)
    want = values_mod._NOT_PLAIN.search(joined) is not None
    folded = joined.lower() if joined.isascii() else unicodedata.normalize("NFC", joined).casefold()  # as make_column
    assert values_mod._not_plain(joined, cells, folded) is want, cells


_WORDS = ["Joe", "Sharp", "new", "York", "no", "Yes", "true", "False", "FALSE", "yeſ", "falſe", "nO", "tru", "truee",
          "France", "N/A", "x%", "12", "-3", "+4", ".5", "2020-01-02", "a\tb", "", " ", "fin", "y", "d\x1cx", "Ünï",
          "São", "Higuaín", "Straße", "e\u0301", "İstanbul", "٣x", "²nd", "\u00a0", "a\u2003b", "ǅ", "Ⅻ", "ﬁn",
          "\u212bngstrom", "\x85", "\u3000", "\u200b", "\x01", "\x7f", "x\u2028y", "ab\x0b", "١٢"]


@pytest.mark.parametrize("seed", range(40))
def test_not_plain_is_the_regex_on_random_columns(seed):
    rng = np.random.default_rng(9100 + seed)
    seps = [" ", " ", " ", "  ", "", "\t", "\u00a0"]
    for _ in range(50):
        cells = []
        for _ in range(int(rng.integers(1, 12))):
            parts = [str(w) for w in rng.choice(_WORDS, int(rng.integers(1, 4)))]
            cell = parts[0] + "".join(str(rng.choice(seps)) + w for w in parts[1:])
            if rng.random() < 0.1:
                cell = " " + cell if rng.random() < 0.5 else cell + " "
            cells.append(cell)
        _same(cells)
        # The same cells with every one made plain-looking (the one-pass path's usual input).
        _same([c.strip().replace("\t", "x") or "z" for c in cells])


def test_not_plain_is_the_regex_on_hand_made_columns():
    for cells in ([""], ["", ""], ["a", ""], ["", "a"], [" "], ["a "], [" a"], ["a", " b"], ["a ", "b"], ["a  b"],
                  ["true"], ["x", "TRUE"], ["Tru", "e"], ["no", "n"], ["Yes"], ["trUE", "x"], ["ſ", "yeſ"], ["Norway", "Taiwan"], ["yes", "x"], ["no"], ["nox"], ["xno"], ["falſe"], ["yeſ"], ["ſ"],
                  ["1a"], ["a1"], ["-a"], ["a-"], [".x"], ["+"], ["٣"], ["x٣"], ["Joe Sharp", "New York"],
                  ["Sétif", "Abu Dhabi"], ["a\u00a0b"], ["ab\u3000"], ["\x1f"], ["x"] * 300):
        _same(cells)


def test_every_white_space_character_but_a_space_is_found():
    # The printable shortcut relies on every character the regex's [^\S ] matches being unprintable.
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if ch.isspace() and ch != " ":
            assert not ch.isprintable()
            _same(["a" + ch + "b"])
            _same(["Sétif", ch])


def test_a_character_folds_to_a_letter_of_the_booleans_exactly_where_ignorecase_matches_it():
    # The booleans are looked for in the canonical text: every code point whose canonical text (NFC, case-folded)
    # is one of the booleans' letters is matched by IGNORECASE as that letter, and back; one that folds to several
    # of those letters ("ß" -> "ss") folds to no part of a boolean.
    words = ("true", "false", "yes", "no")
    letters = set("truefalsyno")
    any_letter = re.compile("[truefalsyno]", re.IGNORECASE)
    normalize = unicodedata.normalize
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        folded = normalize("NFC", ch).casefold()
        if any_letter.fullmatch(ch):
            assert len(folded) == 1 and folded in letters and re.fullmatch(folded, ch, re.IGNORECASE), hex(code)
        elif len(folded) == 1:
            assert folded not in letters, hex(code)
        elif folded and set(folded) <= letters:
            assert not any(folded in w for w in words), hex(code)
