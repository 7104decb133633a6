"""How far two columns agree on their values: the evidence of :mod:`goldeval.answers.pairing` (split from it).

* :func:`value_agreement`: the share of a golden column's cells that a prediction column holds, within the numeric
  tolerance (a rate column may also be read x100 or /100; a count column never), on a sample of at most 64 cells;
* :func:`multiset_share`: the tie-break between columns that hold the same set of values, by how often;
* :func:`exact_shares`: both at once for many pairs of whole-number columns (value-count matrices).

The NumPy code here is the definition; ``goldeval._fast`` (when built) runs the containment and the common counts
in C, checked against it in tests/unit/test_fast_paths.py.

Source: ``DESIGN.md`` "Data answers" (column pairing), goldeval.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from goldeval.answers.numbers import (
    REL_TOL,
    half_units,
    pair_rel_tol,
    rows_all_close,
    tolerances,
)
from goldeval.answers.values import Column, float_decimals

try:  # the optional C fast path (see _fast.c); the NumPy code below stays the definition and the fallback
    from goldeval._fast import common_min_count as _fast_common_min_count
    from goldeval._fast import sorted_contained as _fast_sorted_contained
except ImportError:  # pragma: no cover - the extension is optional
    _fast_sorted_contained = _fast_common_min_count = None

__all__ = ["value_agreement", "multiset_share"]


_SAMPLE = 64
_INF = float("inf")


@lru_cache(maxsize=64)
def _sample_positions(n: int) -> np.ndarray:
    idx = np.linspace(0, n - 1, _SAMPLE).astype(np.int64)
    idx.flags.writeable = False
    return idx


def _sample_rows(n: int) -> np.ndarray:
    """``_SAMPLE`` evenly spaced positions in ``range(n)`` (the same for every column of that length, made once)."""
    return _sample_positions(n)


def _needles(g: Column, half: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The golden column's non-NULL numbers sorted, with their half-units, to be looked up in a prediction
    column: ``(values, half-units, counts)``. A containment share is a count, so the order of the look-ups is free
    (sorted look-ups are several times faster than scattered ones), and where the golden has no display precision
    the distinct values are looked up once each, with how often they occur (``counts``; ``None``: one each)."""
    hit = g._cache.get("needles")
    if hit is not None and hit[0] is half:
        return hit[1], hit[2], hit[3]
    gs, hs = sorted_golden_numbers(g, half)
    out: tuple[np.ndarray, np.ndarray, np.ndarray | None]
    if hs.any() or not gs.size:
        out = (gs, hs, None)
    else:
        new = np.ones(gs.size, dtype=bool)
        new[1:] = gs[1:] != gs[:-1]
        starts = np.flatnonzero(new)
        out = (gs[starts], hs[starts], np.diff(np.append(starts, gs.size)))
    g._cache["needles"] = (half, *out)  # holds *half*: the identity check stays valid
    return out


def _sorted_numbers(p: Column, scale: float) -> np.ndarray:
    ps = p.cached("sorted", lambda: np.sort(p.nums[~p.null]))
    return ps if scale == 1.0 else ps * scale


def _lookups(g: Column, half: np.ndarray, rel_tol: float, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, int]:
    """The golden side of a containment look-up, the same for every prediction column (made once per golden column,
    tolerance and sample): ``(x - lim, x + lim, counts, NULL cells, cells)`` for the needles ``x`` (all of them, or
    the cells at *rows*), ``lim = max(rel_tol·|x|·(1 + 1e-9), half-unit)``."""
    key = ("lookups", rel_tol, rows is None)
    hit = g._cache.get(key)
    if hit is not None and hit[0] is half and hit[1] is rows:
        return hit[2]
    if rows is None:
        x, hv, weight = _needles(g, half)
        n_null = _nulls(g)
        size = g.n
    else:
        gv, hr = g.nums[rows], half[rows]
        gmask = ~np.isnan(gv)
        x, hv, weight = gv[gmask], hr[gmask], None
        n_null = int((~gmask).sum())
        size = gv.size
    lim = np.maximum(rel_tol * np.abs(x) * (1 + 1e-9), hv)
    out = (x - lim, x + lim, weight, n_null, size)
    g._cache[key] = (half, rows, out)  # holds *half* and *rows*: the identity checks stay valid
    return out


def numeric_containment(g: Column, p: Column, scale: float, half: np.ndarray, rel_tol: float, rows: np.ndarray | None = None) -> float:
    """Share of golden cells that have a prediction cell within tolerance (set containment, NULL meets NULL).

    With *rows*, only those golden cells are looked up (a sample; the share is of the sample)."""
    ps = _sorted_numbers(p, scale)
    lo, hi, weight, n_null, size = _lookups(g, half, rel_tol, rows)
    found = 0
    if lo.size and ps.size and _fast_sorted_contained is not None:
        found += _fast_sorted_contained(ps, lo, hi, weight, float(rel_tol))  # the same count, in one C pass
    elif lo.size and ps.size:
        idx = np.searchsorted(ps, lo, side="left")
        idx_c = np.minimum(idx, ps.size - 1)
        cand = ps[idx_c]
        ok = (idx < ps.size) & (cand <= hi + rel_tol * np.abs(cand))
        found += int(ok.sum()) if weight is None else int(weight[ok].sum())
    if n_null:
        found += min(n_null, _nulls(p))
    return found / size


def sorted_golden_numbers(g: Column, half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The golden column's non-NULL numbers sorted, and their half-units in the same order (once per column)."""
    hit = g._cache.get("golden_sorted")
    if hit is not None and hit[0] is half:
        return hit[1], hit[2]
    h0 = half[np.argmax(~g.null)] if g.n else 0.0  # the first non-NULL cell's half-unit
    if not np.isposinf(g.nums).any() and not (half[~g.null] != h0).any():
        # One half-unit for every number (none, or the same decimals everywhere) and no +inf to sort among the
        # NULLs: a sort of the values is enough, the half-units are that one in any order.
        gs = g.cached("sorted", lambda: np.sort(g.nums[~g.null]))
        hs = np.full(gs.size, h0) if h0 else np.zeros(gs.size)
    elif not np.isposinf(g.nums).any() and half is g._cache.get("tolerances") and g.cached(
            "types", lambda: g._types if g._types is not None else set(map(type, g.raw))) <= {float, type(None)}:
        # Binary floats only (NULLs aside): a cell's decimals, hence its half-unit, are a function of its value, so
        # the half-units of the sorted values are those of the values themselves (no argsort to carry them along).
        gs = g.cached("sorted", lambda: np.sort(g.nums[~g.null]))
        hs = half_units(float_decimals(gs))
    else:
        order = g.cached("order", lambda: np.argsort(np.where(g.null, np.inf, g.nums), kind="stable"))
        gs = g.nums[order][: g.n - _nulls(g)]
        hs = half[order][: gs.size]
    g._cache["golden_sorted"] = (half, gs, hs)
    return gs, hs


def _nulls(c: Column) -> int:
    return c.cached("n_null", lambda: int(c.null.sum()))


def _whole(c: Column) -> bool:
    """Every non-NULL number of the column is a finite whole number (once per column)."""
    def make() -> bool:
        if c.n <= _SMALL_CELLS:  # the same test on a few cells in plain Python (math.floor of a finite float)
            return all(math.isfinite(x) and x == math.floor(x) for x in _value_counts(c)[0])
        v = c.nums[~c.null]
        return bool(np.isfinite(v).all() and (v == np.floor(v)).all())
    return c.cached("whole", make)


def _same_sorted(g: Column, p: Column, scale: float, half: np.ndarray, rel_tol: float) -> bool:
    """True when both columns hold the same multiset of numbers (within tolerance), compared sorted."""
    if g.n != p.n or _nulls(g) != _nulls(p):
        return False
    gs, hs = sorted_golden_numbers(g, half)
    ps = _sorted_numbers(p, scale)
    if _whole(g) and (scale == 1.0 and _whole(p)) and not hs.any():
        # Finite whole numbers, the golden written without decimals: they meet only their equal.
        return bool(np.array_equal(gs, ps))
    if gs.size > 4 * _SAMPLE:
        # Every position must agree: a sample of positions that does not rules it out without the full pass.
        idx = _sample_rows(gs.size)
        if not rows_all_close(gs[idx][:, None], ps[idx][:, None], hs[idx][:, None], rel_tol):
            return False
    # numbers_close(...).all(), stopping at the first pair that is not close (the C pass of rows_all_close)
    return rows_all_close(gs[:, None], ps[:, None], hs[:, None], rel_tol)


#: Most cells of a column pair :func:`same_small_ints` compares in plain Python (a Spider answer has 1-20 rows).
_SMALL_CELLS = 64


def same_small_ints(g: Column, p: Column) -> bool:
    """True when two number columns of at most :data:`_SMALL_CELLS` cells hold only Python ints (no NULL, as the C
    typing saw them: below 2**53, so exact as floats) and the same multiset of them: then :func:`value_agreement`
    is ``(1.0, 1.0)`` (whole numbers without decimals meet only their equals, and the sorted columns are equal),
    decided here without its NumPy calls. False otherwise (the full computation decides)."""
    return (g.n == p.n and g.n <= _SMALL_CELLS and g.num is not None and p.num is not None
            and g._types is not None and p._types is not None and g._types <= {int} and p._types <= {int}
            and sorted(g.raw) == sorted(p.raw))


def _small_sorted_keys(c: Column) -> tuple[int, list[float]] | None:
    """A numeric column's NULL count and its other numbers sorted (``-0.0`` read as ``0.0``), or ``None`` when one
    is infinite (``inf`` never meets ``inf`` within tolerance). Once per column."""
    def make() -> tuple[int, list[float]] | None:
        nulls, out = 0, []
        for x in c.nums.tolist():
            if x != x:
                nulls += 1
            elif x == _INF or x == -_INF:
                return None
            else:
                out.append(x + 0.0)
        out.sort()
        return nulls, out
    return c.cached("small_sorted_keys", make)


def _same_small_numbers(g: Column, p: Column) -> bool:
    """True when two number columns of at most :data:`_SMALL_CELLS` cells hold as many NULLs and the same multiset
    of finite numbers: equal numbers are within every tolerance, so :func:`value_agreement` finds the same sorted
    columns (``_same_sorted``) at scale 1 and gives ``(1.0, 1.0)``, decided here without its NumPy calls. False
    otherwise (the full computation decides)."""
    if not (g.n == p.n and 0 < g.n <= _SMALL_CELLS and g.num is not None and p.num is not None):
        return False
    gk = _small_sorted_keys(g)
    return gk is not None and gk == _small_sorted_keys(p)


def value_agreement(g: Column, p: Column, *, rate: bool = False, rel_tol: float = REL_TOL) -> tuple[float | None, float]:
    """Share of the golden column's cells the prediction column holds, and the scale that gave it.

    Args:
        g: Golden column, ``(n_g,)``.
        p: Prediction column, ``(n_p,)``; row order is irrelevant (cells are compared as multisets / sets).
        rate: When True, the prediction may also be read ÷100 (a percentage for a fraction) or ×100.
        rel_tol: Relative tolerance for binary floats (a ``Decimal`` pair uses its own: :func:`~goldeval.answers.
            numbers.pair_rel_tol`).

    Returns:
        ``(share in [0, 1], scale)``; share is ``None`` when the golden column has no cells.
    """
    if g.n == 0:
        return None, 1.0
    if same_small_ints(g, p) or _same_small_numbers(g, p):
        return 1.0, 1.0
    rel_tol = pair_rel_tol(g, p, rel_tol)
    # A sample of golden cells first: a column pair that shares (almost) nothing is settled without the full pass.
    # (The estimate is only returned when it is below 0.25, far under every threshold the pairing uses.)
    sample = None
    if g.n > 4 * _SAMPLE:
        sample = _sample_rows(g.n)
    if g.numeric and p.numeric:
        half = tolerances(g, rel_tol=rel_tol)
        best, best_scale = -1.0, 1.0
        for scale in ((1.0, 0.01, 100.0) if rate else (1.0,)):
            if sample is not None and numeric_containment(g, p, scale, half, rel_tol, sample) < 0.25:
                share = numeric_containment(g, p, scale, half, rel_tol, sample)
            elif _same_sorted(g, p, scale, half, rel_tol):
                share = 1.0  # the same multiset of numbers: one vectorised comparison of the sorted columns
            else:
                share = numeric_containment(g, p, scale, half, rel_tol)
            if share > best + 1e-12:
                best, best_scale = share, scale
        return best, best_scale
    if g.kind == "null" and p.kind == "null":
        return min(g.n, p.n) / g.n, 1.0
    if (g.numeric and p.kind not in ("text", "null")) or (p.numeric and g.kind not in ("text", "null")):
        return 0.0, 1.0  # a number never equals a date
    if (g.numeric and not p.numeric and p.n_numberlike == 0) or (p.numeric and not g.numeric and g.n_numberlike == 0):
        return 0.0, 1.0  # a number column against a text column that spells no number
    cg = g.cached("counts", lambda: Counter(g.text.tolist()))
    cp = p.cached("counts", lambda: Counter(p.text.tolist()))
    if dict.__eq__(cg, cp):  # the same multiset (dict equality runs in C; Counter's own == is a Python loop)
        return 1.0, 1.0
    if sample is not None:
        gt = g.text
        est = sum(1 for i in sample.tolist() if cp.get(gt[i], 0)) / sample.size
        if est < 0.25:
            return est, 1.0
    found = sum(min(c, cp.get(v, 0)) for v, c in cg.items())
    return found / g.n, 1.0


def multiset_share(g: Column, p: Column, *, scale: float = 1.0, rel_tol: float = REL_TOL) -> float:
    """Share of the golden column's cells met one-to-one by the prediction column's cells (duplicates count).

    1.0 when both hold the same multiset within tolerance; otherwise exact equality, counted with multiplicity.
    A tie-breaker next to the set-containment share: two columns of digits 0–9 both *contain* every golden value,
    but only the golden column's own partner holds them as often. Text columns already compare as multisets.
    """
    if g.n == 0 or not (g.numeric and p.numeric):
        return 0.0
    rel_tol = pair_rel_tol(g, p, rel_tol)
    if _same_sorted(g, p, scale, tolerances(g, rel_tol=rel_tol), rel_tol):
        return 1.0
    if _fast_common_min_count is not None and scale > 0:
        # The same count from the two sorted columns in one C merge (a positive scale keeps the order).
        gs = g.cached("sorted", lambda: np.sort(g.nums[~g.null]))
        return (_fast_common_min_count(gs, _sorted_numbers(p, scale)) + min(_nulls(g), _nulls(p))) / g.n
    ug, cg = g.cached("value_counts", lambda: np.unique(g.nums[~g.null], return_counts=True))
    up, cp = p.cached(f"value_counts×{scale!r}", lambda: np.unique(p.nums[~p.null] * scale, return_counts=True))
    # The values both hold (both sorted and distinct: one look-up each).
    ip = np.minimum(np.searchsorted(up, ug), max(up.size - 1, 0))
    common = (up[ip] == ug) if up.size else np.zeros(ug.size, dtype=bool)
    found = int(np.minimum(cg[common], cp[ip[common]]).sum()) + min(_nulls(g), _nulls(p))
    return found / g.n


def same_content(a: Column, b: Column) -> bool:
    if a.n != b.n:
        return False
    if a.numeric and b.numeric:
        return bool(np.array_equal(a.nums, b.nums, equal_nan=True))
    return bool(np.array_equal(a.text, b.text))


def kinds_compatible(g: Column, p: Column) -> bool:
    if g.kind == "null" or p.kind == "null":
        return True
    return g.numeric == p.numeric or "text" in (g.kind, p.kind)


#: Most cells of the per-column value-count matrix the exact-number shares are computed from (columns × distinct
#: values); past it the pairs are computed one by one.
_MAX_COUNT_CELLS = 1 << 22
_INT_TYPES = frozenset({int, type(None)})


def exact_shares(golden: Sequence[Column], pred: Sequence[Column], pairs: list[tuple[int, int]], rel_tol: float
                  ) -> dict[tuple[int, int], tuple[float, float]]:
    """``value_agreement`` and ``multiset_share`` of many column pairs at once, for the pairs where both can only
    count equal numbers: ``{(i, j): (share, multiset share)}`` (the share as ``value_agreement`` gives it unscaled,
    the sampled estimate where that is below 0.25; the multiset share read only where the share is >= 0.5).

    Eligible: both columns hold finite whole numbers (or NULL), no ``Decimal`` (``rel_tol`` applies as given), the
    golden written without decimals (no half-unit), every magnitude below ``0.4 / rel_tol`` (then the relative part
    of the containment window, ``rel_tol·(|x| + |p|)``, stays below one: a number only meets its equal). The value
    counts of every column are one matrix over shared value codes; a share is a sum of the counts the other column
    holds, and a multiset share a sum of the smaller counts.
    """
    if not pairs or not 0 < rel_tol <= 1e-3:
        return {}
    bound = 0.4 / rel_tol

    def eligible(c: Column, golden_side: bool) -> bool:
        if not c.numeric or c.decimal or c.n == 0 or not _whole(c):
            return False
        if c.n <= _SMALL_CELLS:
            v = _value_counts(c)[0]  # the distinct non-NULL values: the same largest magnitude, in plain Python
            if v and max(map(abs, v)) >= bound:
                return False
        else:
            v = c.nums[~c.null]
            if v.size and float(np.abs(v).max()) >= bound:
                return False
        if not golden_side or (c._types is not None and c._types <= _INT_TYPES):
            return True  # Python ints and NULLs only: every half-unit is 0 (numbers._tolerances), written or exact
        return not tolerances(c).any()

    g_ok = {i: eligible(golden[i], True) for i in {i for i, _ in pairs}}
    p_ok = {j: eligible(pred[j], False) for j in {j for _, j in pairs}}
    todo = [(i, j) for i, j in pairs if g_ok[i] and p_ok[j]]
    if not todo:
        return {}
    gi = sorted({i for i, _ in todo})
    pj = sorted({j for _, j in todo})
    cols = [golden[i] for i in gi] + [pred[j] for j in pj]
    if len(cols) <= _SMALL_CELLS and all(c.n <= _SMALL_CELLS for c in cols):
        return _small_exact_shares(golden, pred, todo)
    values = [c.nums[~c.null] for c in cols]
    flat = np.concatenate(values)
    if not flat.size:
        return {}
    low = float(flat.min())
    span = int(flat.max() - low) + 1
    if len(cols) * span <= _MAX_COUNT_CELLS:
        # Whole numbers in a short range: a number's code is its offset from the smallest one.
        u, codes = span, (flat - low).astype(np.int64)

        def code_of(x: np.ndarray) -> np.ndarray:
            return (x - low).astype(np.int64)
    else:
        uniq, codes = np.unique(flat, return_inverse=True)
        u = uniq.size
        if len(cols) * u > _MAX_COUNT_CELLS:
            return {}

        def code_of(x: np.ndarray) -> np.ndarray:
            return np.searchsorted(uniq, x)
    which = np.repeat(np.arange(len(cols)), [v.size for v in values])
    counts = np.bincount(which * u + codes.reshape(-1), minlength=len(cols) * u).reshape(len(cols), u)
    cg, cp = counts[: len(gi)], counts[len(gi):]
    present = (cp > 0).astype(float)
    held = cg.astype(float) @ present.T            # (golden, pred): golden cells whose value the prediction holds
    g_row = {i: r for r, i in enumerate(gi)}
    p_row = {j: r for r, j in enumerate(pj)}
    sampled: dict[int, tuple[np.ndarray, int]] = {}
    for i in gi:
        g = golden[i]
        if g.n > 4 * _SAMPLE:
            gv = g.nums[_sample_rows(g.n)]
            keep = ~np.isnan(gv)
            sampled[i] = (code_of(gv[keep]), int((~keep).sum()))
    # The counts every pair reads, a golden column at a time over all prediction columns (integer sums: the same
    # numbers as one pair at a time): sampled cells the prediction holds, and the multiset intersection.
    in_sample = {i: (cp[:, codes_s] > 0).sum(axis=1).tolist() for i, (codes_s, _) in sampled.items()}
    common = {a: np.minimum(cg[a][None, :], cp).sum(axis=1).tolist() for a in {g_row[i] for i, _ in todo}}
    g_nulls = {i: _nulls(golden[i]) for i in gi}
    p_nulls = {j: _nulls(pred[j]) for j in pj}
    held_l = held.tolist()
    out: dict[tuple[int, int], tuple[float, float]] = {}
    for i, j in todo:
        n = golden[i].n
        a, b = g_row[i], p_row[j]
        nulls = min(g_nulls[i], p_nulls[j])
        share = None
        if i in sampled:
            null_s = sampled[i][1]
            est = (in_sample[i][b] + (min(null_s, p_nulls[j]) if null_s else 0)) / _SAMPLE
            if est < 0.25:
                share = est
        if share is None:
            share = (int(held_l[a][b]) + (nulls if g_nulls[i] else 0)) / n
        multi = (common[a][b] + nulls) / n if share >= 0.5 else 0.0
        out[i, j] = (share, multi)
    return out


def _value_counts(c: Column) -> tuple[Counter[float], int]:
    """A number column's non-NULL values counted (``-0.0`` and ``0.0`` one key: they are equal), and its NULL
    count. Once per column."""
    def make() -> tuple[Counter[float], int]:
        null = c.null.tolist()
        return Counter(x for x, m in zip(c.nums.tolist(), null) if not m), sum(null)
    return c.cached("small_value_counts", make)


def _small_exact_shares(golden: Sequence[Column], pred: Sequence[Column], todo: list[tuple[int, int]]
                        ) -> dict[tuple[int, int], tuple[float, float]]:
    """:func:`exact_shares` of eligible pairs of small columns (at most :data:`_SMALL_CELLS` cells each, so no
    sample; few columns, so the count matrix is never too large), in plain Python: the same integer counts (cells
    whose value the other column holds; the smaller count per value, summed) from per-column Counters of the
    exact values (eligible columns hold whole numbers that meet only their equal), the same divisions."""
    counts_g = {i: _value_counts(golden[i]) for i in {i for i, _ in todo}}
    counts_p = {j: _value_counts(pred[j]) for j in {j for _, j in todo}}
    if not any(cg for cg, _ in counts_g.values()) and not any(cp for cp, _ in counts_p.values()):
        return {}  # no number in any of the columns: the count matrix has no value to count (the general code)
    out: dict[tuple[int, int], tuple[float, float]] = {}
    for i, j in todo:
        (cg, g_nulls), (cp, p_nulls) = counts_g[i], counts_p[j]
        n = golden[i].n
        nulls = min(g_nulls, p_nulls)
        held = sum(c for v, c in cg.items() if v in cp)
        share = (held + nulls) / n
        multi = (sum(min(c, cp[v]) for v, c in cg.items() if v in cp) + nulls) / n if share >= 0.5 else 0.0
        out[i, j] = (share, multi)
    return out
