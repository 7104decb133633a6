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


def _column_type(rows: Sequence[Sequence[Any]], j: int) -> type | None:
    """The one type of column *j*'s cells when it is one of :data:`_EXACT_TYPES` (floats all finite), else ``None``."""
    t = type(rows[0][j])
    if t not in _EXACT_TYPES:
        return None
    for r in rows:
        x = r[j]
        if type(x) is not t or (t is float and not math.isfinite(x)):
            return None
    return t


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
        for r in rows:
            if type(r) not in (list, tuple) or len(r) != width:
                return False
    same_place = True
    for g, p in zip(golden_rows, pred_rows):
        types = tuple(map(type, g))
        if types != tuple(map(type, p)) or not _EXACT_SET.issuperset(types) or tuple(g) != tuple(p):
            same_place = False
            break
        if float in types and not all(math.isfinite(x) for x in g if type(x) is float):
            return False  # an infinity or a NaN (the same NaN object is equal to itself in a tuple): no proof
    if same_place:
        return True
    if ordered:
        return False
    # Another order: each column of one type on both sides (so equal tuples are equal typed cells: 1 never meets
    # 1.0, whose hashes and == agree), then the rows as multisets.
    for j in range(width):
        t = _column_type(golden_rows, j)
        if t is None or _column_type(pred_rows, j) is not t:
            return False
    return dict.__eq__(Counter(map(tuple, golden_rows)), Counter(map(tuple, pred_rows)))
