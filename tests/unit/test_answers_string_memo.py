"""values.make_column's memo of string columns (a column of ``str`` cells typed before is typed from the memo):
the same Column as typing the cells afresh, on random and hand-made columns, and no array shared between columns.

Source: goldeval issue 15 (instructions a Spider case: a golden read again by the next case, a prediction equal to
its golden); the expected Columns come from make_column with the memo emptied.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldeval.answers import values as values_mod
from goldeval.answers.values import make_column

_WORDS = ["Joe", "Sharp", "new York", "no", "Yes", "true", "12", "-3", "+4", ".5", "1,234.5", "20%", "02134", "2020-01-02",
          "2024-03-01 00:00:00", "a\tb", "", " ", " x", "x ", "São", "Straße", "e\u0301", "\u00a0", "N/A", "9007199254740993",
          "1e3", "inf", "nan", "[1, 2]", "a\x00b", "\x00", "İstanbul"]

cells = st.one_of(st.sampled_from(_WORDS), st.text(max_size=6))


def _fresh(name: str, values: list[str]) -> values_mod.Column:
    saved = dict(values_mod._STRING_COLUMNS)
    values_mod._STRING_COLUMNS.clear()
    try:
        return make_column(name, values)
    finally:
        values_mod._STRING_COLUMNS.clear()
        values_mod._STRING_COLUMNS.update(saved)


def _assert_same(a: values_mod.Column, b: values_mod.Column) -> None:
    assert (a.name, a.kind, a.n, a.percent, a.n_numberlike, a.decimal, a.binary, a._types) == \
           (b.name, b.kind, b.n, b.percent, b.n_numberlike, b.decimal, b.binary, b._types)
    assert a.raw == b.raw
    assert a.null.dtype == b.null.dtype and a.null.tolist() == b.null.tolist()
    assert (a.num is None) == (b.num is None)
    if a.num is not None:
        assert a.num.dtype == b.num.dtype and np.array_equal(a.num, b.num, equal_nan=True)
    assert (a._text is None) == (b._text is None)
    assert a.text.dtype == b.text.dtype and a.text.tolist() == b.text.tolist()
    assert a.decimals.tolist() == b.decimals.tolist()


@settings(max_examples=400, deadline=None)
@given(st.lists(cells, min_size=1, max_size=12))
def test_a_remembered_column_is_the_column_typed_afresh(values: list[str]) -> None:
    first = make_column("c", list(values))  # typed, and remembered when no cell holds a "\0"
    again = make_column("d", list(values))  # from the memo
    _assert_same(first, _fresh("c", list(values)))
    _assert_same(again, _fresh("d", list(values)))


@pytest.mark.parametrize("values", [["Angola", "Aruba"], ["12", "3.5"], ["2020-01-02"], ["yes", "no"], ["", "x"],
                                    ["a\x00", "b"], ["a", "\x00b"], ["20%"]])
def test_the_memo_shares_no_array(values: list[str]) -> None:
    a = make_column("c", list(values))
    b = make_column("c", list(values))
    for arr in ("null", "num", "_text"):
        x, y = getattr(a, arr), getattr(b, arr)
        assert x is None or not np.shares_memory(x, y)
    a.null[:] = True
    a.text[:] = "changed"
    c = make_column("c", list(values))
    _assert_same(c, _fresh("c", list(values)))


def test_cells_holding_a_nul_are_not_confused() -> None:
    # "a\0" + "\0" + "b" and "a" + "\0" + "\0b" join to the same text: such columns are never remembered.
    one, two = make_column("c", ["a\x00", "b"]), make_column("c", ["a", "\x00b"])
    assert one.text.tolist() != two.text.tolist()
    _assert_same(two, _fresh("c", ["a", "\x00b"]))


def test_the_memo_is_bounded() -> None:
    values_mod._STRING_COLUMNS.clear()
    values_mod._memo_size[:] = [0, 0]
    col = [f"name {i}" for i in range(values_mod._MEMO_CELLS // 8)]
    for k in range(12):
        make_column("c", [f"{k} {v}" for v in col])
    assert sum(len(j.split("\x00")) for j in values_mod._STRING_COLUMNS) == values_mod._memo_size[0] <= values_mod._MEMO_CELLS
    assert sum(map(len, values_mod._STRING_COLUMNS)) == values_mod._memo_size[1] <= values_mod._MEMO_CHARS
    values_mod._STRING_COLUMNS.clear()
    values_mod._memo_size[:] = [0, 0]


def test_the_memo_is_bounded_by_characters_too() -> None:
    # A few cells of long text (notes) are few cells and many characters: bounded by the characters they hold.
    values_mod._STRING_COLUMNS.clear()
    values_mod._memo_size[:] = [0, 0]
    longest = values_mod._MEMO_CHARS // 8
    for k in range(40):
        make_column("note", [f"{k} " + "word " * (longest // 5 // 2 - 1), f"{k} other"])
    make_column("note", ["x" * (longest + 1)])  # one cell past the limit: never kept
    assert not any(len(j) > longest for j in values_mod._STRING_COLUMNS)
    assert sum(map(len, values_mod._STRING_COLUMNS)) == values_mod._memo_size[1] <= values_mod._MEMO_CHARS
    # 40 columns of about longest / 2 characters each: at most 16 fit under the characters (the cell bound alone,
    # 80 cells of 100,000, would have kept all 40)
    assert 0 < len(values_mod._STRING_COLUMNS) <= 16
    values_mod._STRING_COLUMNS.clear()
    values_mod._memo_size[:] = [0, 0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(cells, st.integers(), st.floats(), st.none(), st.booleans()), max_size=8), cells)
def test_fill_numbers_refuses_a_column_that_starts_with_a_string(rest: list, first: str) -> None:
    # make_column skips the C typing of plain numbers when the first cell is a str: it would return -1 at once.
    if values_mod._fast_fill_numbers is None:
        pytest.skip("no C extension")
    values = [first, *rest]
    assert values_mod._fast_fill_numbers(values, np.empty(len(values))) == -1
