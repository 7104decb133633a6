"""The question doubts with their cheap tests first (issue 15): ``criterion_phrases`` looks for the back-reference
only when it found a criterion, and ``shape_doubt`` reads the criteria and the grouping words only for a "how many"
question whose golden is a list or not a number. The expected values are the definitions as they were written
before (kept here, verbatim), on questions built from the very words the regexes look for, and on Spider's.

Source: goldeval issue 15 (instructions a Spider case); the definitions: goldeval.answers.doubt.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SHARED

from goldeval.answers import doubt
from goldeval.answers.values import make_column

SPIDER = SHARED / "data" / "spider"


def _criterion_before(question):
    q = question or ""
    return [] if doubt._REFERS_BACK.search(q) else [m.group(0) for m in doubt._CRITERION.finditer(q)]


def _shape_before(question, columns):
    q = question or ""
    if not columns or not q:
        return ("verified", None)
    n, k = columns[0].n, len(columns)
    if n == 1 and k == 1 and columns[0].numeric and "count" in columns[0].name.lower() \
            and doubt._LIST_Q.search(q) and not doubt._COUNT_Q.search(q):
        return ("suspect", f"the golden is a single count ({columns[0].name!r}) but the question asks for a list "
                           f"('{doubt._LIST_Q.search(q).group(0).strip()}', never how many)")
    ungrouped = q
    for phrase in _criterion_before(q):
        ungrouped = ungrouped.replace(phrase, " ")
    if doubt._HOW_MANY.search(q) and not doubt._GROUPED.search(ungrouped) and (n > 1 or (n == 1 and not any(c.numeric for c in columns))):
        return ("suspect", f"the question asks how many, but the golden is {'a list of ' + str(n) + ' rows' if n > 1 else 'not a number'}")
    return ("verified", None)


#: The words the regexes look for, and some that are near them.
_WORDS = ["how many", "How many", "what is the number of", "count", "number of", "total", "which", "What are", "list",
          "show", "name", "with the largest", "by the highest", "has the most", "having the fewest", "with", "by", "each",
          "for all", "and their", "along with", "respectively", "per", "and what is it", ", and what are they",
          "and how many is that", "population", "cities", "of", "the", "singer", "?", ",", "Ultra", "ſhow"]


def _questions(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(_WORDS[int(i)] for i in rng.integers(0, len(_WORDS), int(rng.integers(1, 12)))) for _ in range(n)]


def _tables():
    # golden shapes shape_doubt reads: a single count, a single text cell, a list of numbers or of text, nothing
    return [[], [make_column("count(*)", [3])], [make_column("name", ["Joe"])], [make_column("age", [52, 41])],
            [make_column("name", ["Joe", "Rose"])], [make_column("n", [1]), make_column("name", ["Joe"])],
            [make_column("total", [None])]]


@pytest.mark.parametrize("seed", range(12))
def test_the_reordered_doubts_equal_the_definitions(seed):
    notes = set()
    for q in _questions(9100 + seed, 200) + ["", None]:
        assert doubt.criterion_phrases(q) == _criterion_before(q), q
        for cols in _tables():
            got = doubt.shape_doubt(q, cols)
            assert got == _shape_before(q, cols), (q, [c.name for c in cols])
            notes.add((got[1] or "")[:24])
    # every outcome is reached: verified, the single count, the how-many list, the how-many text
    assert {"", "the golden is a single c", "the question asks how ma"} <= notes


def test_the_reordered_doubts_on_spider_questions():
    path = SPIDER / "spider_dinsql-gpt4_cases.jsonl"
    if not path.exists():
        pytest.skip(f"the bundled Spider data is not at {path}")
    questions = [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(questions) == 343
    for q in questions:
        assert doubt.criterion_phrases(q) == _criterion_before(q)
        for cols in _tables():
            assert doubt.shape_doubt(q, cols) == _shape_before(q, cols)
