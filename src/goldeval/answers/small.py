"""Pure-Python paths for the small tables most answers are (a Spider answer has 1-20 rows and 1-3 columns).

On a few cells the NumPy calls of the general code (a ``k × k`` score matrix, stacked row encodings, hash
groupings) cost more than the cells themselves. Each function here answers one question the general code asks,
only in the cases where plain Python proves the answer, and returns ``None`` otherwise: the caller then runs the
general code, which stays the definition. Tests (``tests/unit/test_answers_small.py``) check that both give the
same result on many random and hand-made tables.

Source: goldeval issue 15 (CPU per Spider case), ``DESIGN.md`` "Data answers".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from goldeval.answers.numbers import tolerances
from goldeval.answers.pairing import Pairing, name_score, rate_name, roles_of, unique_names, value_agreement
from goldeval.answers.values import Column, roles_conflict

__all__ = ["SMALL_ROWS", "small_rows_equal"]

#: Most rows a table may have for the pure-Python row check (the same bound as ``rows._SMALL_ROWS``).
SMALL_ROWS = 64


def _number_keys(c: Column) -> list[Any] | None:
    """A numeric column's cells as exact keys (NULL ``None``, ``-0.0`` read as ``0.0``), or ``None`` when a cell is
    infinite (``inf`` never meets ``inf`` within tolerance, so equal keys would prove nothing). Once per column."""
    def make() -> list[Any] | None:
        out: list[Any] = []
        for x in c.num.tolist():
            if x != x:
                out.append(None)
            elif x in (math.inf, -math.inf):
                return None
            else:
                out.append(x + 0.0)
        return out
    return c.cached("small_number_keys", make)


def _no_half(g: Column) -> bool:
    """The golden column has no display-precision half-unit anywhere (its cells meet within the relative tolerance
    only; equal numbers are then within tolerance). Once per column (``Column.exact`` clears the tolerances, so the
    answer is keyed by their identity)."""
    half = tolerances(g)
    hit = g._cache.get("small_no_half")
    if hit is not None and hit[0] is half:
        return hit[1]
    out = not half.any()
    g._cache["small_no_half"] = (half, out)
    return out


def small_rows_equal(golden: Sequence[Column], pred: Sequence[Column], index: dict[int, int], scale: dict[int, float],
                     *, ordered: bool) -> str | None:
    """Whether the rows of a small table are the golden's, decided in plain Python where equal cells prove it.

    Args:
        golden: ``(k_g,)`` golden columns of ``n`` cells, ``1 <= n <= SMALL_ROWS``.
        pred: ``(k_p,)`` prediction columns of the same ``n`` cells.
        index: The pairing's golden column → prediction column (only these columns are compared).
        scale: The pairing's scale per golden column (a scaled pair is left to the general code).
        ordered: The question asks for an order.

    Returns:
        ``"unordered"`` (not *ordered*) or ``"same"`` (*ordered*, and every row in its golden position) when every
        golden row has a prediction row with exactly equal cells, one to one: text cells equal as canonical text,
        numbers equal as floats (NULL meets NULL). Equal numbers are within every tolerance (no infinity, no
        display precision involved), so :func:`~goldeval.answers.rows.compare_rows` finds the same complete
        comparison. ``None`` whenever this is not proved (the general code decides): more rows, other row counts,
        a scale, an infinity, a golden with display precision, unequal cells, or rows in another order.
    """
    if not golden or not pred:
        return None
    n = golden[0].n
    if n < 1 or n > SMALL_ROWS or pred[0].n != n:
        return None
    g_cols: list[list[Any]] = []
    p_cols: list[list[Any]] = []
    for gi in sorted(index):
        g, p = golden[gi], pred[index[gi]]
        if g.num is not None and p.num is not None:
            if scale.get(gi, 1.0) != 1.0 or not _no_half(g):
                return None
            gk, pk = _number_keys(g), _number_keys(p)
            if gk is None or pk is None:
                return None
        else:
            # The general code's text ids come from the golden's distinct canonical texts (a value the golden lacks
            # meets none of them): equal ids are equal texts.
            gk, pk = g.text.tolist(), p.text.tolist()
        g_cols.append(gk)
        p_cols.append(pk)
    g_rows = list(zip(*g_cols)) if g_cols else [()] * n
    p_rows = list(zip(*p_cols)) if p_cols else [()] * n
    if ordered:
        return "same" if g_rows == p_rows else None
    if g_rows == p_rows or dict.__eq__(Counter(g_rows), Counter(p_rows)):
        return "unordered"
    return None


def small_pair_by_names(golden: Sequence[Column], pred: Sequence[Column], *, rate_columns: Sequence[str],
                        rel_tol: float) -> Pairing | None:
    """:func:`~goldeval.answers.pairing.pair_columns` where the names decide, in plain Python, or ``None``.

    The names decide when every golden column has exactly one prediction column of its name (name score >= 0.95),
    a different one each, none whose roles conflict, and holds all its values there: the general code then returns
    those pairs, each ``name+values``, without reading another pair (see its comments). This is that early return
    without the ``k × k`` NumPy matrices; ``None`` (the general code decides) in every other case.
    """
    kg = len(golden)
    if kg == 0:
        return None
    p_roles = None
    partners: list[int] = []
    g_counts: list[bool] = []  # "count" among each golden column's role tags
    for g in golden:
        c = [j for j, p in enumerate(pred) if name_score(g.name, p.name) >= 0.95]
        if len(c) != 1:
            return None
        if p_roles is None:
            p_roles = [roles_of(p.name) for p in pred]
        g_roles = roles_of(g.name)
        if roles_conflict(g_roles, p_roles[c[0]]):
            return None
        partners.append(c[0])
        g_counts.append("count" in g_roles)
    if len(set(partners)) != kg:
        return None
    out = Pairing(unique_names([c.name for c in golden]), unique_names([c.name for c in pred]))
    for i, j in enumerate(partners):
        g = golden[i]
        rate = g.name in rate_columns or rate_name(g.name) or (not g_counts[i] and rate_name(pred[j].name))
        p = pred[j]
        if g.num is None and p.num is None and 0 < g.n == p.n <= SMALL_ROWS and g.text.tolist() == p.text.tolist():
            # Neither column numeric and the same canonical texts in the same rows: value_agreement compares their
            # multisets (or, both all NULL, gives min(n, n) / n), which are equal: (1.0, 1.0), without the Counters.
            share, scale = 1.0, 1.0
        else:
            share, scale = value_agreement(g, p, rate=rate, rel_tol=rel_tol)
        if share is None or share != share or share < 1 - 1e-12:
            return None
        out.index[i] = j
        out.scale[i] = float(scale)
        out.agreement[out.golden_names[i]] = float(share)
    out.basis = {n: "name+values" for n in out.golden_names}
    return out
