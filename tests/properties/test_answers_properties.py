"""Invariants of the rule-based answer judge (hypothesis).

* permuting the prediction's rows (unordered golden) never changes the verdict;
* permuting the prediction's columns never changes the verdict;
* renaming the prediction's columns changes the pairing basis, not a match on values and roles;
* a count column scaled by 100 never matches; a rate column given as a percentage does.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from goldeval.answers import judge_answer

KEYS = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=1, max_size=12, unique=True)


@st.composite
def tables(draw):
    keys = draw(KEYS)
    n = len(keys)
    counts = draw(st.lists(st.integers(0, 10_000), min_size=n, max_size=n))
    amounts = draw(st.lists(st.integers(0, 10**7), min_size=n, max_size=n))
    rows = [[k, c, a / 100] for k, c, a in zip(keys, counts, amounts)]
    return {"kind": "value", "columns": ["ward", "n_admissions", "total_cost"], "rows": rows}


def _verdict(golden, columns, rows):
    return judge_answer("per-ward figures", golden, {"columns": columns, "rows": rows})


@settings(max_examples=60, deadline=None)
@given(golden=tables(), seed=st.integers(0, 2**32 - 1), corrupt=st.booleans())
def test_row_permutation_does_not_change_the_verdict(golden, seed, corrupt):
    rows = [list(r) for r in golden["rows"]]
    if corrupt:
        rows[0][1] += 1  # one count off: the verdict is no_match whatever the order
    base = _verdict(golden, golden["columns"], rows)
    shuffled = rows[:]
    random.Random(seed).shuffle(shuffled)
    v = _verdict(golden, golden["columns"], shuffled)
    assert v.verdict == base.verdict
    assert base.verdict == ("no_match" if corrupt else "match")


@settings(max_examples=60, deadline=None)
@given(golden=tables(), perm=st.permutations([0, 1, 2]), corrupt=st.booleans())
def test_column_permutation_does_not_change_the_verdict(golden, perm, corrupt):
    rows = [list(r) for r in golden["rows"]]
    if corrupt:
        rows[-1][2] += 1.0
    base = _verdict(golden, golden["columns"], rows)
    cols = [golden["columns"][i] for i in perm]
    v = _verdict(golden, cols, [[r[i] for i in perm] for r in rows])
    assert v.verdict == base.verdict
    assert v.column_pairing == base.column_pairing


@settings(max_examples=60, deadline=None)
@given(golden=tables(), perm=st.permutations([0, 1, 2]))
def test_renaming_changes_basis_not_a_value_and_role_match(golden, perm):
    named = _verdict(golden, golden["columns"], golden["rows"])
    assert named.verdict == "match"
    neutral = [f"c{i}" for i in range(3)]
    rows = [[r[i] for i in perm] for r in golden["rows"]]
    renamed = _verdict(golden, [neutral[i] for i in range(3)], rows)
    assert renamed.verdict == "match"
    basis = renamed.details["pairing"]["basis"]
    assert set(basis.values()) <= {"values", "values+rows", "elimination"}
    assert set(named.details["pairing"]["basis"].values()) == {"name+values"}


@settings(max_examples=60, deadline=None)
@given(golden=tables())
def test_count_scaled_by_100_never_matches(golden):
    rows = [[k, c * 100, a] for k, c, a in golden["rows"]]
    v = _verdict(golden, golden["columns"], rows)
    if any(c != 0 for _, c, _ in golden["rows"]):
        assert v.verdict != "match"
    else:
        assert v.verdict == "match"  # 0 × 100 is still 0


@settings(max_examples=60, deadline=None)
@given(fracs=st.lists(st.integers(0, 1000), min_size=1, max_size=8), keys=KEYS)
def test_rate_given_as_percentage_matches(fracs, keys):
    n = min(len(fracs), len(keys))
    golden = {"kind": "value", "columns": ["ward", "readmission_rate"], "rows": [[keys[i], fracs[i] / 1000] for i in range(n)]}
    v = judge_answer("rate per ward", golden, {"columns": ["ward", "readmission_rate"], "rows": [[keys[i], fracs[i] / 10] for i in range(n)]})
    assert v.verdict == "match"
