"""The exact-equality path of the table rule: a prediction whose columns are the golden's, in the golden's order and
named alike, and whose rows are the golden's cell for cell (same Python type, equal value), decided without
building columns, a pairing matrix or a row encoding.

Where this path answers, the general code (:func:`~goldeval.answers.pairing.pair_columns`,
:func:`~goldeval.answers.rows.compare_rows`) would pair every golden column with its namesake by ``name+values``
at agreement 1.0 (the names decide: one partner each, the same position, no role conflict, no rate reading) and
locate every golden row (equal cells are within every tolerance), so the verdict is its complete match. Wherever
that is not proved (another column count or order, a column named otherwise, a rate column, a NULL, a ``Decimal``,
a non-finite float, an integer where the golden has a float, rows in another order for an ordered golden, more
than :data:`EXACT_MAX_CELLS` cells) this path answers ``None`` and the general code decides.

Source: goldeval issue 31, item 5 (a cheap exact-equality path first, the general path only when it fails).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import Any

from goldeval.answers.column_pairs import name_score, rate_name, roles_of
from goldeval.answers.values import roles_conflict

__all__ = ["EXACT_MAX_CELLS", "exact_rows", "named_in_order"]

#: Most golden cells the exact path reads (a larger table goes to the general code's vectorised comparison).
EXACT_MAX_CELLS = 20_000

#: The cell types the exact path compares (``bool`` is not ``int`` here: ``type(True) is bool``).
_EXACT_TYPES = (int, str, float)


def named_in_order(golden_names: Sequence[str], pred_names: Sequence[str], *, rate_columns: Sequence[str] = ()) -> bool:
    """Whether each golden column's one namesake in the prediction is the column at its own position.

    Args:
        golden_names: ``(k,)`` golden column names.
        pred_names: ``(k,)`` prediction column names (another length: ``False``).
        rate_columns: Golden column names the case declares as rates.

    Returns:
        ``True`` when, for every position ``i``, the prediction column ``i`` is the only one whose name scores
        ``>= 0.95`` against golden column ``i`` (:func:`~goldeval.answers.column_pairs.name_score`), their role
        tags do not conflict, and neither name reads as a rate (no rate is declared or named: a rate pair may be
        read scaled). That is the case where the pairing's names decide every pair.

    Example:
        >>> named_in_order(["count(*)", "Name"], ["COUNT(*)", "name"])
        True
        >>> named_in_order(["Name", "Age"], ["Age", "Name"])
        False
    """
    k = len(golden_names)
    if k == 0 or len(pred_names) != k:
        return False
    for i, g in enumerate(golden_names):
        if g in rate_columns or rate_name(g) or rate_name(pred_names[i]):
            return False
        if name_score(g, pred_names[i]) < 0.95 or roles_conflict(roles_of(g), roles_of(pred_names[i])):
            return False
        if any(j != i and name_score(g, p) >= 0.95 for j, p in enumerate(pred_names)):
            return False
    return True


#: :data:`_EXACT_TYPES` as a set, to test a row's cell types at once.
_EXACT_SET = frozenset(_EXACT_TYPES)
#: The row types the exact path reads (exactly these: a subclass goes to the general code).
_ROW_TYPES = frozenset((list, tuple))


def _finite(cells: Sequence[Any]) -> bool:
    """Every ``float`` among *cells* is finite (the others are not looked at)."""
    return all(map(math.isfinite, [x for x in cells if type(x) is float]))


def exact_rows(golden_rows: Sequence[Any], pred_rows: Sequence[Any], width: int, *, ordered: bool) -> bool:
    """Whether the prediction's rows are the golden's exactly: one to one, every cell of the same type and equal.

    Args:
        golden_rows: ``(n, width)`` golden rows (lists or tuples).
        pred_rows: The prediction's rows, in the golden's column order.
        width: The number of columns.
        ordered: The question asks for an order: row ``r`` must be golden row ``r``. Otherwise the rows are a
            multiset (duplicates count), in any order.

    Returns:
        ``True`` when proved equal. ``False`` when not (different counts, a row of another width or shape, a cell
        of another type or value, a NULL, a ``Decimal``, a non-finite float, an empty golden, more than
        :data:`EXACT_MAX_CELLS` cells): the general code decides then, and may still find a match (tolerance,
        ``1`` against ``"1"``, rows tied on the order key).

    Every test runs over whole lists at once (the rows as tuples compared as two lists, the cells' types as two
    lists, a column's types as a set) rather than cell by cell in Python; the row-by-row reading this replaced is
    kept in tests/unit/test_answers_exact.py as the reference and compared on hand-made and random tables.

    Example:
        >>> exact_rows([[1, "a"], [2, "b"]], [[2, "b"], [1, "a"]], 2, ordered=False)
        True
        >>> exact_rows([[1, "a"], [2, "b"]], [[2, "b"], [1, "a"]], 2, ordered=True)
        False
        >>> exact_rows([[1]], [[1.0]], 1, ordered=False)
        False
    """
    n = len(golden_rows)
    if n == 0 or len(pred_rows) != n or width < 1 or n * width > EXACT_MAX_CELLS:
        return False
    for rows in (golden_rows, pred_rows):
        if not _ROW_TYPES.issuperset(map(type, rows)) or not all(map(width.__eq__, map(len, rows))):
            return False
    g = list(map(tuple, golden_rows))
    p = list(map(tuple, pred_rows))
    g_cells = list(chain.from_iterable(g))
    g_types = list(map(type, g_cells))
    if not _EXACT_SET.issuperset(g_types):
        return False  # a NULL, a bool, a Decimal, bytes…: no proof either way
    if g_types == list(map(type, chain.from_iterable(p))) and g == p:
        # Row r is golden row r, cell for cell of the same type (1 never stands for 1.0 or True): equal, unless a
        # golden float is infinite or NaN (the same NaN object is equal to itself inside a tuple).
        return float not in g_types or _finite(g_cells)
    if ordered:
        return False
    # Another order: each column of one type on both sides (so equal tuples are equal typed cells: 1 never meets
    # 1.0, whose hashes and == agree), every float finite, then the rows as multisets.
    for g_col, p_col in zip(zip(*g), zip(*p)):
        kinds = set(map(type, g_col))
        if len(kinds) != 1 or set(map(type, p_col)) != kinds:
            return False
        if float in kinds and not (_finite(g_col) and _finite(p_col)):
            return False
    return dict.__eq__(Counter(g), Counter(p))
