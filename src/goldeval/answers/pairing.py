"""Column pairing: which prediction column carries each golden column's meaning.

Pairing is an assignment problem solved in polynomial time (``scipy.optimize.linear_sum_assignment``, O(k³) for k
columns) over a score that mixes two kinds of evidence:

* **values**: the share of the golden column's cells that the prediction column holds, within the numeric
  tolerance (a rate column may also be read ×100 or ÷100; a count column never);
* **names**: the column names' content tokens (``n_admissions`` ~ ``admission_count``; ``T1.name`` ~ ``Name``).

Names can also *forbid* a pair: two names whose role tags differ (a count against a month, an average against a
maximum) never pair, however many values they share — value overlap alone is not evidence of meaning (a month
column is not a count column even when both hold 12). No column permutation is ever enumerated.

Each pair gets a basis: ``name+values``, ``values`` (names neutral, values agree), ``name`` (names agree, values
do not — the values are then judged wrong), ``values (partial)``, ``elimination`` (the only compatible column
left), or ``repeat of <name>`` (a golden column repeated with the same name and cells reads its first copy's partner). Golden columns with no partner are listed as unpaired, and pairs whose choice the evidence cannot settle
are listed as ambiguous (the row comparison then tries each candidate).

Source: ``DESIGN.md`` "Data answers" (column pairing), goldeval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from goldeval.answers.numbers import REL_TOL, half_units, numbers_close, pair_rel_tol, rows_all_close, tolerances
from goldeval.answers.values import Column, float_decimals, is_rate_name, name_tokens, role_tags, roles_conflict

try:  # the optional C fast path (see _fast.c); the NumPy code below stays the definition and the fallback
    from goldeval._fast import common_min_count as _fast_common_min_count
    from goldeval._fast import sorted_contained as _fast_sorted_contained
except ImportError:  # pragma: no cover - the extension is optional
    _fast_sorted_contained = _fast_common_min_count = None

__all__ = ["Pairing", "pair_columns", "value_agreement", "multiset_share", "name_score", "unique_names"]

_FORBIDDEN = -1e6
_W_VALUES = 2.0
_W_NAME = 1.0
#: Extra weight for the same name (name score ≥ 0.95): the answerer's column called ``n_admissions`` is its answer
#: for ``n_admissions``, even when another column happens to hold the golden's values.
_W_SAME_NAME = 2.0
#: Weight of the multiset share (a tie-breaker: at most 0.25, below any name evidence that counts).
_W_MULTISET = 0.25


@dataclass(slots=True)
class Pairing:
    """The outcome of pairing golden columns with prediction columns.

    Attributes:
        golden_names: Golden column names, made unique (a repeated name gets ``#2``, ``#3``…).
        pred_names: Prediction column names, made unique the same way.
        index: golden column index → prediction column index, for paired columns.
        basis: golden name → basis of its pair (see the module docstring).
        scale: golden index → factor applied to the prediction's values (1; 0.01 or 100 for a rate read as a
            percentage or a fraction).
        agreement: golden name → share of its cells found in the paired column (``None`` without golden rows).
        unpaired: golden names with no partner.
        rejected: pairs refused because the names' roles conflict: ``{"golden", "prediction", "why"}``.
        ambiguous: ``{"golden", "candidates": [...]}`` where other columns fit as well as the chosen one.
        name_value_conflicts: ``{"golden", "named", "values_in"}`` where the column named like the golden one
            disagrees with it while other columns hold its values (mislabelled columns?).
    """

    golden_names: list[str]
    pred_names: list[str]
    index: dict[int, int] = field(default_factory=dict)
    basis: dict[str, str] = field(default_factory=dict)
    scale: dict[int, float] = field(default_factory=dict)
    agreement: dict[str, float | None] = field(default_factory=dict)
    unpaired: list[str] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    ambiguous: list[dict[str, Any]] = field(default_factory=list)
    alternatives: list[dict[int, int]] = field(default_factory=list, repr=False)
    name_value_conflicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mapping(self) -> dict[str, str | None]:
        """golden name → prediction name (``None`` when unpaired), in golden column order."""
        return {g: (self.pred_names[self.index[i]] if i in self.index else None) for i, g in enumerate(self.golden_names)}

    def with_index(self, index: dict[int, int], basis: str) -> Pairing:
        """A copy that uses another assignment (one of ``alternatives``), with *basis* for the changed pairs."""
        out = Pairing(list(self.golden_names), list(self.pred_names), dict(index), dict(self.basis), dict(self.scale),
                      dict(self.agreement), list(self.unpaired), list(self.rejected), [], [], list(self.name_value_conflicts))
        for gi, pj in index.items():
            if self.index.get(gi) != pj:
                out.basis[self.golden_names[gi]] = basis
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.mapping,
            "basis": dict(self.basis),
            "scale": {self.golden_names[i]: s for i, s in self.scale.items() if s != 1.0},
            "agreement": dict(self.agreement),
            "unpaired": list(self.unpaired),
            "rejected": list(self.rejected),
            "ambiguous": list(self.ambiguous),
            "name_value_conflicts": list(self.name_value_conflicts),
        }


def unique_names(names: Sequence[str]) -> list[str]:
    """Names with repeats suffixed ``#2``, ``#3``… (SQL results may repeat a column name)."""
    seen: Counter[str] = Counter()
    out = []
    for n in names:
        seen[n] += 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def name_score(a: str, b: str) -> float:
    """Name evidence in [0, 1]: 1 same tokens, 0.8 one token set inside the other, less for partial overlap."""
    if a.strip().lower() == b.strip().lower():
        return 1.0
    ta, tb = name_tokens(a), name_tokens(b)
    if not ta or not tb:
        return 0.0
    if ta == tb:
        return 1.0
    sa, sb = set(ta), set(tb)
    if sa == sb:
        return 0.95
    inter = sa & sb
    if not inter:
        return 0.0
    if sa <= sb or sb <= sa:
        return 0.8
    return 0.5 * len(inter) / len(sa | sb)


_SAMPLE = 64


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
    gs, hs = _golden_sorted(g, half)
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
    ps = p.cached("sorted", lambda: np.sort(p.num[~p.null]))
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
        gv, hr = g.num[rows], half[rows]
        gmask = ~np.isnan(gv)
        x, hv, weight = gv[gmask], hr[gmask], None
        n_null = int((~gmask).sum())
        size = gv.size
    lim = np.maximum(rel_tol * np.abs(x) * (1 + 1e-9), hv)
    out = (x - lim, x + lim, weight, n_null, size)
    g._cache[key] = (half, rows, out)  # holds *half* and *rows*: the identity checks stay valid
    return out


def _numeric_containment(g: Column, p: Column, scale: float, half: np.ndarray, rel_tol: float, rows: np.ndarray | None = None) -> float:
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


def _golden_sorted(g: Column, half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The golden column's non-NULL numbers sorted, and their half-units in the same order (once per column)."""
    hit = g._cache.get("golden_sorted")
    if hit is not None and hit[0] is half:
        return hit[1], hit[2]
    h0 = half[np.argmax(~g.null)] if g.n else 0.0  # the first non-NULL cell's half-unit
    if not np.isposinf(g.num).any() and not (half[~g.null] != h0).any():
        # One half-unit for every number (none, or the same decimals everywhere) and no +inf to sort among the
        # NULLs: a sort of the values is enough, the half-units are that one in any order.
        gs = g.cached("sorted", lambda: np.sort(g.num[~g.null]))
        hs = np.full(gs.size, h0) if h0 else np.zeros(gs.size)
    elif not np.isposinf(g.num).any() and half is g._cache.get("tolerances") and g.cached(
            "types", lambda: g._types if g._types is not None else set(map(type, g.raw))) <= {float, type(None)}:
        # Binary floats only (NULLs aside): a cell's decimals, hence its half-unit, are a function of its value, so
        # the half-units of the sorted values are those of the values themselves (no argsort to carry them along).
        gs = g.cached("sorted", lambda: np.sort(g.num[~g.null]))
        hs = half_units(float_decimals(gs))
    else:
        order = g.cached("order", lambda: np.argsort(np.where(g.null, np.inf, g.num), kind="stable"))
        gs = g.num[order][: g.n - _nulls(g)]
        hs = half[order][: gs.size]
    g._cache["golden_sorted"] = (half, gs, hs)
    return gs, hs


def _nulls(c: Column) -> int:
    return c.cached("n_null", lambda: int(c.null.sum()))


def _whole(c: Column) -> bool:
    """Every non-NULL number of the column is a finite whole number (once per column)."""
    def make() -> bool:
        v = c.num[~c.null]
        return bool(np.isfinite(v).all() and (v == np.floor(v)).all())
    return c.cached("whole", make)


def _same_sorted(g: Column, p: Column, scale: float, half: np.ndarray, rel_tol: float) -> bool:
    """True when both columns hold the same multiset of numbers (within tolerance), compared sorted."""
    if g.n != p.n or _nulls(g) != _nulls(p):
        return False
    gs, hs = _golden_sorted(g, half)
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


#: Most cells of a column pair :func:`_same_small_ints` compares in plain Python (a Spider answer has 1-20 rows).
_SMALL_CELLS = 64


def _same_small_ints(g: Column, p: Column) -> bool:
    """True when two number columns of at most :data:`_SMALL_CELLS` cells hold only Python ints (no NULL, as the C
    typing saw them: below 2**53, so exact as floats) and the same multiset of them: then :func:`value_agreement`
    is ``(1.0, 1.0)`` (whole numbers without decimals meet only their equals, and the sorted columns are equal),
    decided here without its NumPy calls. False otherwise (the full computation decides)."""
    return (g.n == p.n and g.n <= _SMALL_CELLS and g.num is not None and p.num is not None
            and g._types is not None and p._types is not None and g._types <= {int} and p._types <= {int}
            and sorted(g.raw) == sorted(p.raw))


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
    if _same_small_ints(g, p):
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
            if sample is not None and _numeric_containment(g, p, scale, half, rel_tol, sample) < 0.25:
                share = _numeric_containment(g, p, scale, half, rel_tol, sample)
            elif _same_sorted(g, p, scale, half, rel_tol):
                share = 1.0  # the same multiset of numbers: one vectorised comparison of the sorted columns
            else:
                share = _numeric_containment(g, p, scale, half, rel_tol)
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
        gs = g.cached("sorted", lambda: np.sort(g.num[~g.null]))
        return (_fast_common_min_count(gs, _sorted_numbers(p, scale)) + min(_nulls(g), _nulls(p))) / g.n
    ug, cg = g.cached("value_counts", lambda: np.unique(g.num[~g.null], return_counts=True))
    up, cp = p.cached(f"value_counts×{scale!r}", lambda: np.unique(p.num[~p.null] * scale, return_counts=True))
    # The values both hold (both sorted and distinct: one look-up each).
    ip = np.minimum(np.searchsorted(up, ug), max(up.size - 1, 0))
    common = (up[ip] == ug) if up.size else np.zeros(ug.size, dtype=bool)
    found = int(np.minimum(cg[common], cp[ip[common]]).sum()) + min(_nulls(g), _nulls(p))
    return found / g.n


def _same_content(a: Column, b: Column) -> bool:
    if a.n != b.n:
        return False
    if a.numeric and b.numeric:
        return bool(np.array_equal(a.num, b.num, equal_nan=True))
    return bool(np.array_equal(a.text, b.text))


def _compatible(g: Column, p: Column) -> bool:
    if g.kind == "null" or p.kind == "null":
        return True
    return g.numeric == p.numeric or "text" in (g.kind, p.kind)


#: Most cells of the per-column value-count matrix the exact-number shares are computed from (columns × distinct
#: values); past it the pairs are computed one by one.
_MAX_COUNT_CELLS = 1 << 22


def _exact_shares(golden: Sequence[Column], pred: Sequence[Column], pairs: list[tuple[int, int]], rel_tol: float
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
        v = c.num[~c.null]
        if v.size and float(np.abs(v).max()) >= bound:
            return False
        return not (golden_side and tolerances(c).any())

    g_ok = {i: eligible(golden[i], True) for i in {i for i, _ in pairs}}
    p_ok = {j: eligible(pred[j], False) for j in {j for _, j in pairs}}
    todo = [(i, j) for i, j in pairs if g_ok[i] and p_ok[j]]
    if not todo:
        return {}
    gi = sorted({i for i, _ in todo})
    pj = sorted({j for _, j in todo})
    cols = [golden[i] for i in gi] + [pred[j] for j in pj]
    values = [c.num[~c.null] for c in cols]
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
            gv = g.num[_sample_rows(g.n)]
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


def _named_partners(names: np.ndarray, conflict: np.ndarray) -> list[int] | None:
    """For each golden column the one prediction column of its name (name score >= 0.95), if every golden column
    has exactly one, none conflicting and no two the same; else ``None``. ``names``, ``conflict``: ``(k_g, k_p)``."""
    out = []
    for i in range(names.shape[0]):
        c = np.flatnonzero(names[i] >= 0.95)
        if c.size != 1 or conflict[i, c[0]]:
            return None
        out.append(int(c[0]))
    return out if len(set(out)) == len(out) else None


def pair_columns(
    golden: Sequence[Column],
    pred: Sequence[Column],
    *,
    rate_columns: Sequence[str] = (),
    rel_tol: float = REL_TOL,
) -> Pairing:
    """:func:`pair_columns_full` (the definition; its docstring says what a pairing is), through the plain-Python
    path of :func:`goldeval.answers.small.small_pair_by_names` where the names alone decide (the same Pairing)."""
    from goldeval.answers.small import small_pair_by_names

    out = small_pair_by_names(golden, pred, rate_columns=rate_columns, rel_tol=rel_tol)
    return out if out is not None else pair_columns_full(golden, pred, rate_columns=rate_columns, rel_tol=rel_tol)


def pair_columns_full(
    golden: Sequence[Column],
    pred: Sequence[Column],
    *,
    rate_columns: Sequence[str] = (),
    rel_tol: float = REL_TOL,
) -> Pairing:
    """Pair each golden column with the prediction column that carries its meaning.

    Args:
        golden: ``(k_g,)`` golden columns.
        pred: ``(k_p,)`` prediction columns (extra columns are fine: containment).
        rate_columns: Golden column names declared as rates (also detected by name).
        rel_tol: Relative numeric tolerance.

    Returns:
        A :class:`Pairing`. Cost: ``-(2·value_share + 1·name_score + 2·[same name] + 0.25·multiset_share)``;
        pairs whose names' roles conflict are forbidden. Solved with ``scipy.optimize.linear_sum_assignment`` (Hungarian-type, polynomial).

    Notes:
        A pair survives when its values agree fully, or its names agree (``name_score ≥ 0.5``), or at least half
        its values agree. A golden column left over pairs by elimination when exactly one compatible,
        non-conflicting prediction column remains for it, unless that column agrees on no value and has no name
        evidence: the golden column is then unpaired (missing), and the candidate is listed in ``rejected`` with
        ``"no_evidence": True``.
    """
    gnames = unique_names([c.name for c in golden])
    pnames = unique_names([c.name for c in pred])
    out = Pairing(gnames, pnames)
    kg, kp = len(golden), len(pred)
    if kg == 0:
        return out
    agree = np.full((kg, kp), np.nan)
    scales = np.ones((kg, kp))
    names = np.zeros((kg, kp))
    conflict = np.zeros((kg, kp), dtype=bool)
    g_roles = [role_tags(name_tokens(c.name)) for c in golden]
    p_roles = [role_tags(name_tokens(c.name)) for c in pred]
    for i, g in enumerate(golden):
        for j, p in enumerate(pred):
            conflict[i, j] = roles_conflict(g_roles[i], p_roles[j])
            names[i, j] = name_score(g.name, p.name)
    rate_g = [is_rate_name(g.name, rate_columns) for g in golden]
    done: list[tuple[int, int]] = []

    def agreement(i: int, j: int) -> None:
        rate = rate_g[i] or ("count" not in g_roles[i] and is_rate_name(pred[j].name))
        share, scale = value_agreement(golden[i], pred[j], rate=rate, rel_tol=rel_tol)
        if share is not None:
            agree[i, j] = share
            scales[i, j] = scale
        done.append((i, j))

    # Every golden column has exactly one prediction column of its name (name score >= 0.95), a different one each,
    # and holds all its values: those pairs score >= 5 and every other pair < 3.2 (2 + 0.95 + 0.25 at most), so
    # they are the one best assignment, and nothing the pairing reports reads another pair. The other k² value
    # agreements are then not computed.
    named = _named_partners(names, conflict)
    by_name = named is not None
    for i, j in enumerate(named or ()):
        agreement(i, j)
        if np.isnan(agree[i, j]) or agree[i, j] < 1 - 1e-12:
            by_name = False
            break
    if by_name:
        # The assignment is those pairs (see above: any other one scores less), each full on values and named
        # alike, so its basis is "name+values"; with every golden column paired there is no elimination, repeat,
        # unpaired column, name/value conflict (basis "name" only) or ambiguity (basis values/elimination only)
        # to look for. The same Pairing as the score matrix and linear_sum_assignment below give (test).
        assert named is not None
        for i in range(kg):
            out.basis[gnames[i]] = "name+values"
        for i, j in enumerate(named):
            out.index[i] = j
            out.scale[i] = float(scales[i, j])
            out.agreement[gnames[i]] = float(agree[i, j])
        return out
    exact: dict[tuple[int, int], tuple[float, float]] = {}
    if not by_name:
        seen = set(done)
        rest = [(i, j) for i in range(kg) for j in range(kp) if not conflict[i, j] and (i, j) not in seen]
        # Pairs of whole-number columns, all at once (no rate reading: those pairs also try ×100 and ÷100).
        exact = _exact_shares(golden, pred, [(i, j) for i, j in rest if not (
            rate_g[i] or ("count" not in g_roles[i] and is_rate_name(pred[j].name)))], rel_tol)
        for i, j in rest:
            if (i, j) in exact:
                agree[i, j] = exact[i, j][0]
                done.append((i, j))
            else:
                agreement(i, j)
        done.sort()
    # Tie-break between columns that contain the same set of values: the one that holds them as often (a multiset).
    histo = np.zeros((kg, kp))
    for i, j in done:
        g, p = golden[i], pred[j]
        if g.numeric and p.numeric and not np.isnan(agree[i, j]) and agree[i, j] >= 0.5:
            histo[i, j] = exact[i, j][1] if (i, j) in exact else multiset_share(g, p, scale=float(scales[i, j]), rel_tol=rel_tol)
    score = (_W_VALUES * np.nan_to_num(agree, nan=0.0) + _W_NAME * names + _W_SAME_NAME * (names >= 0.95)
             + _W_MULTISET * histo)
    score[conflict] = _FORBIDDEN
    assigned: dict[int, int] = {}
    if kp:
        rows, cols = linear_sum_assignment(-score)
        for i, j in zip(rows.tolist(), cols.tolist()):
            if conflict[i, j]:
                continue
            a = agree[i, j]
            full = not np.isnan(a) and a >= 1 - 1e-12
            if full:
                out.basis[gnames[i]] = "name+values" if names[i, j] >= 0.5 else "values"
            elif names[i, j] >= 0.5:
                out.basis[gnames[i]] = "name"
            elif not np.isnan(a) and a >= 0.5:
                out.basis[gnames[i]] = "values (partial)"
            else:
                continue
            assigned[i] = j
    # Elimination: a golden column left alone takes the one compatible, non-conflicting column left for it.
    free = [j for j in range(kp) if j not in assigned.values()]
    no_evidence: list[tuple[int, int]] = []
    for i in range(kg):
        if i in assigned:
            continue
        cands = [j for j in free if not conflict[i, j] and _compatible(golden[i], pred[j])]
        if len(cands) == 1:
            others = [i2 for i2 in range(kg) if i2 != i and i2 not in assigned
                      and not conflict[i2, cands[0]] and _compatible(golden[i2], pred[cands[0]])]
            c = cands[0]
            if not others and agree[i, c] == 0 and names[i, c] == 0:
                # The one column left agrees on no value and its name is no evidence (golden id, name against
                # predicted id, age): not a partner, the golden column is missing (issue 11, item 6).
                no_evidence.append((i, c))
            elif not others:
                assigned[i] = cands[0]
                free.remove(cands[0])
                out.basis[gnames[i]] = "elimination"
    # A golden column repeated in the golden (``SELECT id, …, id``: the same name, the same cells) is read from the
    # prediction column of its first copy: the answer need not repeat a column to contain it.
    twins: dict[int, int] = {}
    for i in range(kg):
        if i in assigned:
            continue
        for i2 in sorted(assigned):
            if golden[i].name.strip().lower() == golden[i2].name.strip().lower() and _same_content(golden[i], golden[i2]):
                twins[i] = i2
                break
    for i in range(kg):
        if i in twins:
            i2 = twins[i]
            out.index[i] = assigned[i2]
            out.scale[i] = float(scales[i2, assigned[i2]])
            out.basis[gnames[i]] = f"repeat of {gnames[i2]}"
            a = agree[i2, assigned[i2]]
            out.agreement[gnames[i]] = None if np.isnan(a) else float(a)
        elif i in assigned:
            j = assigned[i]
            out.index[i] = j
            out.scale[i] = float(scales[i, j])
            a = agree[i, j]
            out.agreement[gnames[i]] = None if np.isnan(a) else float(a)
        else:
            out.unpaired.append(gnames[i])
            for j in range(kp):
                if conflict[i, j]:
                    share, _ = value_agreement(golden[i], pred[j], rel_tol=rel_tol)
                    why = f"roles differ ({'/'.join(sorted(g_roles[i]))} vs {'/'.join(sorted(p_roles[j]))})"
                    if share:
                        why += f"; shared values ({share:.0%}) are not evidence of meaning"
                    out.rejected.append({"golden": gnames[i], "prediction": pnames[j], "why": why})
            for i2, j in no_evidence:
                if i2 == i:
                    out.rejected.append({"golden": gnames[i], "prediction": pnames[j], "no_evidence": True,
                                         "why": "agrees on no value and its name is no evidence"})
    # Names against values: the column named like the golden one disagrees, another column holds the golden's values.
    settled = {j2 for i2, j2 in out.index.items() if out.basis[gnames[i2]] == "name+values"}  # already right by name and values
    for i, j in out.index.items():
        if out.basis[gnames[i]] != "name":
            continue
        full = [j2 for j2 in range(kp) if j2 != j and j2 not in settled and not conflict[i, j2]
                and not np.isnan(agree[i, j2]) and agree[i, j2] >= 1 - 1e-12]
        if full:
            out.name_value_conflicts.append({"golden": gnames[i], "named": pnames[j], "values_in": [pnames[j2] for j2 in full]})
    # Ambiguity: another column fits this golden column exactly as well and holds different values.
    for i, j in out.index.items():
        if out.basis[gnames[i]] not in ("values", "values (partial)", "elimination"):
            continue
        cands = [j2 for j2 in range(kp) if j2 != j and not conflict[i, j2]
                 and abs(score[i, j2] - score[i, j]) <= 1e-9 and not _same_content(pred[j2], pred[j])]
        if cands:
            out.ambiguous.append({"golden": gnames[i], "chosen": pnames[j], "candidates": [pnames[j2] for j2 in cands]})
            for j2 in cands:
                alt = dict(out.index)
                other = next((i2 for i2, jj in alt.items() if jj == j2), None)
                alt[i] = j2
                if other is not None:
                    if conflict[other, j]:
                        continue
                    alt[other] = j
                out.alternatives.append(alt)
    return out
