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
from itertools import permutations
from typing import Any

from goldeval.answers.column_agreement import (
    exact_shares,
    multiset_share,
    value_agreement,
)
from goldeval.answers.column_pairs import (
    Pairing,
    name_score,
    rate_name,
    roles_of,
    settle_pairing,
    unique_names,
)
from goldeval.answers.numbers import tolerances
from goldeval.answers.values import Column, roles_conflict

__all__ = ["SMALL_ROWS", "small_rows_equal"]

#: Most rows a table may have for the pure-Python row check (the same bound as ``rows._SMALL_ROWS``).
SMALL_ROWS = 64


def _number_keys(c: Column) -> list[Any] | None:
    """A numeric column's cells as exact keys (NULL ``None``, ``-0.0`` read as ``0.0``), or ``None`` when a cell is
    infinite (``inf`` never meets ``inf`` within tolerance, so equal keys would prove nothing). Once per column."""
    def make() -> list[Any] | None:
        out: list[Any] = []
        for x in c.nums.tolist():
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
        share: float | None
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


#: Most golden and most prediction columns :func:`small_pair_columns` takes (at most 4! = 24 assignments to try).
SMALL_PAIR_COLUMNS = 4
#: How much better than every other assignment the best one must score for :func:`small_pair_columns` to take it
#: (far above the rounding of sums of scores near ``-1e6``; a closer call is left to ``linear_sum_assignment``).
_UNIQUE_MARGIN = 1e-6


def small_pair_columns(golden: Sequence[Column], pred: Sequence[Column], *, rate_columns: Sequence[str],
                       rel_tol: float) -> Pairing | None:
    """:func:`~goldeval.answers.pairing.pair_columns_full` for a few columns (``1 <= k_g, k_p <=``
    :data:`SMALL_PAIR_COLUMNS`), in plain Python, or ``None``.

    The same evidence from the same calls (value_agreement, exact_shares, multiset_share, in the same order), the
    same scores as floats (the NumPy expression's operations in its order; NaN kept as ``None``), the assignment by
    trying every one: taken only when it beats every other by :data:`_UNIQUE_MARGIN` (then it is the one optimum
    ``linear_sum_assignment`` returns); ``None`` on a closer call (ties: the solver's choice is its own) and where
    the names decide (:func:`small_pair_by_names` answers that case). The steps after the assignment (elimination,
    repeats, rejected pairs, name/value conflicts, ambiguity) are the general code's own
    (:func:`~goldeval.answers.pairing.settle_pairing`, shared).
    """


    kg, kp = len(golden), len(pred)
    if not (1 <= kg <= SMALL_PAIR_COLUMNS and 1 <= kp <= SMALL_PAIR_COLUMNS):
        return None
    g_roles = [roles_of(c.name) for c in golden]
    p_roles = [roles_of(c.name) for c in pred]
    conflict = [[roles_conflict(gr, pr) for pr in p_roles] for gr in g_roles]
    names = [[name_score(g.name, p.name) for p in pred] for g in golden]
    rate_g = [g.name in rate_columns or rate_name(g.name) for g in golden]
    agree: list[list[float | None]] = [[None] * kp for _ in range(kg)]
    scales = [[1.0] * kp for _ in range(kg)]
    done: list[tuple[int, int]] = []

    def rate_pair(i: int, j: int) -> bool:
        return rate_g[i] or ("count" not in g_roles[i] and rate_name(pred[j].name))

    def agreement(i: int, j: int) -> None:
        share, scale = value_agreement(golden[i], pred[j], rate=rate_pair(i, j), rel_tol=rel_tol)
        if share is not None:
            agree[i][j] = share
            scales[i][j] = scale
        done.append((i, j))

    # _named_partners and the named pairs' agreements, up to the first that is not full.
    picks: list[int] = []
    for i in range(kg):
        c = [j for j in range(kp) if names[i][j] >= 0.95]
        if len(c) != 1 or conflict[i][c[0]]:
            break
        picks.append(c[0])
    named = picks if len(picks) == kg else None  # None: some golden column has no one named partner
    if named is not None and len(set(named)) != len(named):
        named = None
    by_name = named is not None
    for i, j in enumerate(named or ()):
        agreement(i, j)
        a = agree[i][j]
        if a is None or a < 1 - 1e-12:
            by_name = False
            break
    if by_name:
        return None  # the names decide: small_pair_by_names' case
    seen = set(done)
    rest = [(i, j) for i in range(kg) for j in range(kp) if not conflict[i][j] and (i, j) not in seen]
    exact = exact_shares(golden, pred, [(i, j) for i, j in rest if not rate_pair(i, j)], rel_tol)
    for i, j in rest:
        if (i, j) in exact:
            agree[i][j] = exact[i, j][0]
            done.append((i, j))
        else:
            agreement(i, j)
    done.sort()
    histo = [[0.0] * kp for _ in range(kg)]
    for i, j in done:
        g, p = golden[i], pred[j]
        a = agree[i][j]
        if g.numeric and p.numeric and a is not None and a >= 0.5:
            histo[i][j] = exact[i, j][1] if (i, j) in exact else multiset_share(g, p, scale=float(scales[i][j]), rel_tol=rel_tol)
    # The score matrix: ((2·a + 1·name) + 2·[same name]) + 0.25·histo, the NumPy expression's operations in order.
    score = [[-1e6 if conflict[i][j] else
              2.0 * (agree[i][j] or 0.0) + 1.0 * names[i][j] + 2.0 * (1.0 if names[i][j] >= 0.95 else 0.0)
              + 0.25 * histo[i][j] for j in range(kp)] for i in range(kg)]
    # The assignment: the best of all (rows to columns where k_g <= k_p, columns to rows otherwise), if unique.
    if kg <= kp:
        totals = [(sum(score[i][js[i]] for i in range(kg)), list(enumerate(js))) for js in permutations(range(kp), kg)]
    else:
        totals = [(sum(score[is_[j]][j] for j in range(kp)), sorted((is_[j], j) for j in range(kp)))
                  for is_ in permutations(range(kg), kp)]
    best = max(t for t, _ in totals)
    winners = [pairs for t, pairs in totals if t > best - _UNIQUE_MARGIN]
    if len(winners) != 1:
        return None
    gnames = unique_names([c.name for c in golden])
    pnames = unique_names([c.name for c in pred])
    return settle_pairing(Pairing(gnames, pnames), golden, pred, winners[0], agree, names, conflict, scales, score,
                          g_roles, p_roles, rel_tol)
