"""goldeval.answers.rows: the order check of an ordered top-N answer (``compare_rows`` with ``ordered`` and
``top_n``): the prediction's rows must follow the golden key's direction, rows tied on the key in any order.

Every expected value below is worked out by hand from the rows written in the test: a key ``n`` of 50, 40, 30 is
in descending order as written and ascending reversed; a pair of equal keys is in both orders at once.
"""

from __future__ import annotations

import pytest

from goldeval.answers import judge_answer
from goldeval.answers.pairing import pair_columns
from goldeval.answers.rows import compare_rows
from goldeval.answers.values import make_column

NAMES = ["site", "n"]
DESC = [["A", 50], ["B", 40], ["C", 30]]   # n falls row by row
ASC = DESC[::-1]                           # n rises row by row
SHUFFLED = [["A", 50], ["C", 30], ["B", 40]]  # neither: 50 > 30 < 40


def _cmp(golden_rows, pred_rows, direction):
    g = [make_column(n, [r[i] for r in golden_rows]) for i, n in enumerate(NAMES)]
    p = [make_column(n, [r[i] for r in pred_rows]) for i, n in enumerate(NAMES)]
    return compare_rows(g, p, pair_columns(g, p), ordered=True, top_n={"n": len(golden_rows), "by": "n", "direction": direction})


@pytest.mark.parametrize("direction, golden, right, wrong", [
    ("desc", DESC, DESC, ASC),
    ("asc", ASC, ASC, DESC),
])
def test_an_ordered_top_n_answer_follows_the_key_direction(direction, golden, right, wrong):
    ok = _cmp(golden, right, direction)
    assert ok.complete and ok.order is None and ok.mismatch is None and ok.top_n["qualifies"] is True
    bad = _cmp(golden, wrong, direction)  # the same rows, sorted the other way
    assert not bad.complete and bad.order == "different" and bad.top_n["qualifies"] is False
    assert bad.mismatch == f"top-N rows not in {direction} order of 'n'"
    assert (bad.found, bad.extra) == (3, 0)  # every row is there: only the order is wrong


@pytest.mark.parametrize("direction", ["desc", "asc"])
def test_rows_out_of_order_in_the_middle_are_caught_in_either_direction(direction):
    golden = DESC if direction == "desc" else ASC
    bad = _cmp(golden, SHUFFLED if direction == "desc" else SHUFFLED[::-1], direction)
    assert bad.order == "different" and bad.mismatch == f"top-N rows not in {direction} order of 'n'"


@pytest.mark.parametrize("direction", ["desc", "asc"])
def test_rows_tied_on_the_key_may_come_in_either_order(direction):
    # B and C tie at 40: B before C and C before B are both sorted (a difference of 0 is neither up nor down).
    golden = [["A", 50], ["B", 40], ["C", 40]] if direction == "desc" else [["B", 40], ["C", 40], ["A", 50]]
    swapped = [golden[0], golden[2], golden[1]] if direction == "desc" else [golden[1], golden[0], golden[2]]
    for pred in (golden, swapped):
        rc = _cmp(golden, pred, direction)
        assert rc.complete and rc.order is None and rc.top_n["qualifies"] is True, (pred, rc.mismatch)


def test_the_judge_fails_a_top_n_answer_sorted_against_the_key_and_passes_it_sorted_along():
    golden = {"kind": "value", "columns": NAMES, "rows": DESC, "ordered": True,
              "top_n": {"n": 3, "by": "n", "direction": "desc"}}
    q = "The three sites with the most visits, from the most visited"
    assert judge_answer(q, golden, {"columns": NAMES, "rows": DESC}).verdict == "match"
    v = judge_answer(q, golden, {"columns": NAMES, "rows": ASC})
    assert v.verdict == "no_match" and v.mismatch == "top-N rows not in desc order of 'n'"
    assert v.details["rows"]["order"] == "different"
