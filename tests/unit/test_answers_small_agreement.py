"""The plain-Python exact shares of small whole-number columns (column_agreement._small_exact_shares) equal the
count-matrix computation of ``exact_shares`` (the general code) and the one-pair definitions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from goldeval.answers import column_agreement
from goldeval.answers.column_agreement import exact_shares, multiset_share, value_agreement
from goldeval.answers.values import make_column

cell = st.one_of(st.none(), st.integers(-4, 6), st.sampled_from([0.0, -0.0, 2.0, 1.5, 10**6, 4e5, -4e5, 1e300, float("inf"), float("-inf"), float("nan"), "x"]))
column = st.lists(cell, min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.lists(column, min_size=1, max_size=3), st.lists(column, min_size=1, max_size=4), st.integers(0, 2))
def test_small_exact_shares_equal_the_count_matrix(g_cells, p_cells, tol):
    rel_tol = (1e-6, 1e-4, 1e-2)[tol]

    def cols(cells, prefix):
        return [make_column(f"{prefix}{k}", v) for k, v in enumerate(cells)]

    pairs = [(i, j) for i in range(len(g_cells)) for j in range(len(p_cells))]
    got = exact_shares(cols(g_cells, "g"), cols(p_cells, "p"), pairs, rel_tol)
    old = column_agreement._SMALL_CELLS
    column_agreement._SMALL_CELLS = 0  # the general count-matrix lines
    try:
        want = exact_shares(cols(g_cells, "g"), cols(p_cells, "p"), pairs, rel_tol)
    finally:
        column_agreement._SMALL_CELLS = old
    assert got == want
    golden, pred = cols(g_cells, "g"), cols(p_cells, "p")
    for (i, j), (share, multi) in got.items():
        assert share == value_agreement(golden[i], pred[j], rel_tol=rel_tol)[0]
        if share >= 0.5:
            assert multi == multiset_share(golden[i], pred[j], rel_tol=rel_tol)


@settings(max_examples=300, deadline=None)
@given(column)
def test_small_whole_is_the_numpy_test(cells):
    # _whole of a column of at most _SMALL_CELLS cells (plain Python) is the NumPy test's answer.
    c = make_column("c", cells)
    if c.num is None:
        return
    old = column_agreement._SMALL_CELLS
    column_agreement._SMALL_CELLS = 0
    try:
        want = column_agreement._whole(make_column("c", cells))
    finally:
        column_agreement._SMALL_CELLS = old
    assert column_agreement._whole(c) == want
