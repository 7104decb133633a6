"""Row comparison after pairing: multiset rows, asked-for order, top-N with ties, and what differs.

Rows are compared on the paired columns only (extra prediction columns never reduce a containing answer). Rows
are a multiset: a duplicated golden row must appear twice. Order counts only when the golden says it was asked
for. A prediction with every golden row plus more rows is *not* containment (a shotgun answer does not match).

Speed: both tables are encoded as integer ids (text) and floats (numbers); when the row counts agree the two
sides are sorted lexicographically and compared in one vectorised pass (1e5 × 10 in well under a second). Only
when that fails does the bucketed matching of :mod:`~goldeval.answers.matching` run (text keys exact, numbers
within tolerance).

Source: ``DESIGN.md`` "Data answers" (rows are a multiset; top-N with ties; large row sets), goldeval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import numpy as np

from goldeval.answers.matching import exact_keys
from goldeval.answers.matching import group_ids as _group_ids
from goldeval.answers.matching import match_rows as _match
from goldeval.answers.matching import stack_pairs as _stack_pairs
from goldeval.answers.numbers import (
    REL_TOL,
    describe_scale,
    numbers_close,
    pair_rel_tol,
    tolerances,
)
from goldeval.answers.numbers import constant_ratio as _constant_ratio
from goldeval.answers.numbers import number_text as _num
from goldeval.answers.numbers import rows_all_close as _rows_all_close
from goldeval.answers.pairing import Pairing
from goldeval.answers.row_order import (  # split from this module
    EncodedRows,
    order_of,
    top_n_of,
)
from goldeval.answers.small import small_rows_equal
from goldeval.answers.values import Column

try:  # the optional C fast path (see _fast.c); the NumPy code of _number_facts stays the definition and the fallback
    from goldeval._fast import number_facts as _fast_number_facts
except ImportError:  # pragma: no cover - the extension is optional
    _fast_number_facts = None

__all__ = ["RowComparison", "compare_rows", "describe_scale"]

_MAX_LISTED = 20


@dataclass(slots=True)
class RowComparison:
    """How the prediction's rows meet the golden rows under one pairing.

    Attributes:
        golden_rows: Number of golden rows.
        pred_rows: Number of prediction rows.
        found: Golden rows located in the prediction (each prediction row used once).
        missing: Up to 20 missing golden rows, as ``{golden column: value}``.
        missing_count: How many golden rows are missing in all.
        extra: Prediction rows that located no golden row.
        order: ``None`` when order was not asked for; else ``"same"``, ``"ties reordered"``, ``"different"`` or
            ``"unknown"`` (the order key is not among the columns and the positions differ).
        top_n: For a top-N golden: ``{"boundary", "tie_break_differs", "qualifies"}``; else ``None``.
        mismatch: A short description of how the rows differ, or ``None`` when they do not.
    """

    golden_rows: int
    pred_rows: int
    found: int
    missing: list[dict[str, Any]] = field(default_factory=list)
    missing_count: int = 0
    extra: int = 0
    order: str | None = None
    top_n: dict[str, Any] | None = None
    mismatch: str | None = None

    @property
    def complete(self) -> bool:
        """Every golden row located, nothing extra, and the order right where it was asked for."""
        if self.top_n is not None:
            return bool(self.top_n.get("qualifies"))
        return self.found == self.golden_rows and self.extra == 0 and self.order in (None, "same", "ties reordered")

    def located(self) -> dict[str, Any]:
        """The verdict's ``located`` block: ``{"golden_rows", "found", "missing": [...], "extra": n}``."""
        out: dict[str, Any] = {"golden_rows": self.golden_rows, "found": self.found, "missing": self.missing, "extra": self.extra}
        if self.missing_count > len(self.missing):
            out["missing_not_listed"] = self.missing_count - len(self.missing)
        return out


# --- encoding -------------------------------------------------------------------------------------------------

def _encode(golden: Sequence[Column], pred: Sequence[Column], pairing: Pairing, rel_tol: float = REL_TOL) -> EncodedRows:
    n_g = golden[0].n if golden else 0
    n_p = pred[0].n if pred else 0
    t_names, t_g, t_p, t_idx = [], [], [], []
    n_names, n_g_cols, n_p_cols, halves, n_idx, rels, decs, sources = [], [], [], [], [], [], [], []
    vocabs: list[dict[str, Column]] = []
    for gi in sorted(pairing.index):
        g, p = golden[gi], pred[pairing.index[gi]]
        if g.numeric and p.numeric:
            n_names.append(pairing.golden_names[gi])
            n_g_cols.append(g.nums)
            scale = pairing.scale.get(gi, 1.0)
            n_p_cols.append(p.nums if scale == 1.0 else p.nums * scale)  # stacked below: a copy either way
            sources.append((g, p if scale == 1.0 else None))
            halves.append(tolerances(g))
            decs.append(int(g.decimals.max()) if g.n and halves[-1].any() else 0)
            n_idx.append(gi)
            rels.append(pair_rel_tol(g, p, rel_tol))
        else:
            # Text ids from the golden's distinct values (NULL is -1; a value the golden lacks is -2).
            g_text = g.text.tolist()
            vocab: defaultdict[Any, int] = defaultdict(lambda: -2)
            vocab.update(zip(dict.fromkeys(g_text), count()))
            vocab[None] = -1
            ids_g = np.fromiter(map(vocab.__getitem__, g_text), dtype=np.int64, count=g.n)
            ids_p = np.fromiter(map(vocab.__getitem__, p.text.tolist()), dtype=np.int64, count=p.n)
            t_names.append(pairing.golden_names[gi])
            vocabs.append({"g": g, "p": p})
            t_g.append(ids_g)
            t_p.append(ids_p)
            t_idx.append(gi)

    def stack(cols: list[np.ndarray], n: int, dtype: Any) -> np.ndarray:
        return np.stack(cols, axis=1) if cols else np.zeros((n, 0), dtype=dtype)

    return EncodedRows(
        t_names + n_names,
        stack(t_g, n_g, np.int64), stack(t_p, n_p, np.int64),
        stack(n_g_cols, n_g, float), stack(n_p_cols, n_p, float), stack(halves, n_g, float),
        t_idx + n_idx,
        vocabs,
        np.array(rels, dtype=float),
        decs,
        sources,
    )


def _lexorder(t: np.ndarray, n: np.ndarray) -> np.ndarray:
    if t.shape[1]:
        # One int64 code for the text ids; when it is unique per row (a key column), it alone fixes the order.
        code = _group_ids(t)
        if np.unique(code).size == code.size:
            return np.argsort(code, kind="stable")
        keys = [n[:, k] for k in range(n.shape[1] - 1, -1, -1)] + [code]
    else:
        keys = [n[:, k] for k in range(n.shape[1] - 1, -1, -1)]
    if not keys:
        return np.arange(t.shape[0])
    return np.lexsort(keys)


def _number_facts(v: np.ndarray) -> tuple[int, bool, int | None]:
    """What the cheap proofs below read of one numeric column ``(n,)`` float64 (NaN NULL): ``(NULL cells, every
    other cell a finite whole number, their int64 sum when each is whole and below 2**62 in magnitude, else
    None)``. The C extension reads them in one pass (a contiguous column); the NumPy lines are the definition."""
    if _fast_number_facts is not None and v.dtype == np.float64 and v.ndim == 1 and v.flags.c_contiguous:
        return _fast_number_facts(v)
    nan = np.isnan(v)
    f = v[~nan]
    with np.errstate(invalid="ignore"):
        whole = bool((f == np.floor(f)).all())
        finite = bool(np.isfinite(f).all())
        small = bool((np.abs(f) < 2.0**62).all())
    return int(nan.sum()), finite and whole, int(f.astype(np.int64).sum()) if whole and small else None


def _facts(e: EncodedRows, c: int, side: str) -> tuple[int, bool, int | None]:
    """:func:`_number_facts` of numeric column *c* of side ``g`` or ``p``: read from its Column (once per column and
    judgement) where the cells are that Column's own, else from the encoded cells."""
    col = (e.sources[c][0] if side == "g" else e.sources[c][1]) if c < len(e.sources) else None
    if col is not None:
        return col.cached("number_facts", lambda: _number_facts(col.nums))
    return _number_facts(e.ng[:, c] if side == "g" else e.np_[:, c])


def _columns_differ(e: EncodedRows) -> bool:
    """A cheap proof that the rows cannot be equal: some text column holds other ids (their sums differ), some
    numeric column another number of NULLs, or a column of finite whole numbers (the golden written without
    decimals, so they meet only their equals) another sum. Equal rows have equal column multisets, hence equal
    sums (int64, wrapping: still equal for equal multisets)."""
    if e.tg.shape[1] and not np.array_equal(e.tg.sum(axis=0), e.tp.sum(axis=0)):
        return True
    for c in range(e.ng.shape[1]):
        g_null, _, g_sum = _facts(e, c, "g")
        p_null, _, p_sum = _facts(e, c, "p")
        if g_null != p_null:
            return True
        if e.half[:, c].any() or g_sum is None or p_sum is None:
            continue
        if g_sum != p_sum:
            return True
    return False


def _exact_columns(e: EncodedRows) -> bool:
    """True when every numeric column can only meet its equal: finite whole numbers (or NULL) on both sides, the
    golden written without decimals (``numbers_close`` then allows no slack), so rows meet exactly when their bits
    are equal (-0.0 read as 0.0)."""
    for c in range(e.ng.shape[1]):
        if e.dec[c] or e.half[:, c].any():
            return False
        if not (_facts(e, c, "g")[1] and _facts(e, c, "p")[1]):
            return False
    return True


def _pairs_by_keys(e: EncodedRows) -> bool:
    """Every golden row paired with a prediction row of the same key, and each pair within tolerance.

    The key of a row is its text ids and its numbers' bits, a prediction number first rounded to the most decimals
    its golden column is written with (a golden of 58.74 against 58.744924: both 58.74). Equal keys pair off as a
    multiset (one hash grouping, no sort of the rows); the pairs are then checked with the tolerance rule itself,
    so rounding only proposes the pairs. ``True`` means a one-to-one pairing of all rows within tolerance exists."""
    n = e.tg.shape[0]
    p_num = e.np_
    if any(e.dec):
        p_num = p_num.copy()
        for c, d in enumerate(e.dec):
            if d:
                with np.errstate(invalid="ignore", over="ignore"):
                    p_num[:, c] = np.round(p_num[:, c], min(d, 15))
    if not (e.tg.shape[1] + e.ng.shape[1]):
        return True
    if n > _SMALL_ROWS:
        a, b = _stack_pairs(e.tg, e.tp, gnum=e.ng, pnum=p_num)
    else:
        a, b = _small_stack_pairs(np.concatenate([e.tg, exact_keys(e.ng)], axis=1), np.concatenate([e.tp, exact_keys(p_num)], axis=1))
    if a.size != n:
        return False
    # A column whose prediction numbers were not rounded met on equal keys: with no infinity on either side its
    # cells are equal numbers or both NULL, hence within tolerance (an infinity is no such proof: inf - inf is NaN,
    # never close, and a NULL's key is +inf's). Only the other columns need the rule.
    check = [c for c in range(e.ng.shape[1]) if e.dec[c] or np.isinf(e.ng[:, c]).any() or np.isinf(e.np_[:, c]).any()]
    if not check:
        return True
    # Every golden row took a partner, so *a* is 0, 1, … n - 1 (ascending, distinct): the golden rows as they are.
    cols = slice(None) if len(check) == e.ng.shape[1] else check
    return _rows_all_close(e.ng[:, cols], e.np_[b][:, cols], e.half[:, cols], e.rel[cols])


#: Tables up to this many rows pair their keys in plain Python (:func:`_small_stack_pairs`): on a few rows the
#: dozen NumPy calls of the hash grouping cost more than the rows themselves (issue 15: a Spider answer has 1-20).
_SMALL_ROWS = 64


def _small_stack_pairs(gkeys: np.ndarray, pkeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~goldeval.answers.matching.stack_pairs` for a few rows, with the same pairs: among equal keys the
    first golden row takes the last prediction row, the next one the row before it; ``a`` ascending."""
    stacks: dict[tuple[int, ...], list[int]] = {}
    for j, k in enumerate(map(tuple, pkeys.tolist())):
        stacks.setdefault(k, []).append(j)
    a, b = [], []
    for i, k in enumerate(map(tuple, gkeys.tolist())):
        s = stacks.get(k)
        if s:
            a.append(i)
            b.append(s.pop())
    return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)


def _fast_equal(e: EncodedRows) -> bool:
    """Same row count and every row met within tolerance, one to one: rows paired by equal keys
    (:func:`_pairs_by_keys`), else both sides sorted the same way and compared in order."""
    if e.tg.shape[0] != e.tp.shape[0]:
        return False
    # The column sums are a cheap proof that no pairing exists (sound: equal rows have equal column multisets), worth
    # its NumPy calls on many rows only; on a few, the key pairing below answers as fast and the same.
    if e.tg.shape[0] > _SMALL_ROWS and _columns_differ(e):
        return False
    if _pairs_by_keys(e):
        return True
    if _exact_columns(e):
        return False  # rows meet only their equals, and the two multisets of rows differ
    og, op = _lexorder(e.tg, e.ng), _lexorder(e.tp, e.np_)
    if not np.array_equal(e.tg[og], e.tp[op]):
        return False
    return _rows_all_close(e.ng[og], e.np_[op], e.half[og], e.rel)


def _match_cols(e: EncodedRows, keep_num: Sequence[int], keep_text: bool = True) -> np.ndarray:
    t_g = e.tg if keep_text else e.tg[:, :0]
    t_p = e.tp if keep_text else e.tp[:, :0]
    idx = list(keep_num)
    return _match(t_g, t_p, e.ng[:, idx], e.np_[:, idx], e.half[:, idx], e.rel[idx])


# --- descriptions ---------------------------------------------------------------------------------------------

def _cell_text(e: EncodedRows, c: int, side: str, r: int) -> str:
    """The raw cell of text column *c*, row *r*, on side ``g`` or ``p``, for a message (NULL shown as NULL)."""
    col = e.vocab[c][side]
    v = col.raw[r]
    return "NULL" if v is None else repr(v)


#: Prefix of the mismatch text for a key column that holds another label for the same rows (the judge does not
#: call that wrong by rule).
RELABELLED = "one column relabelled"


def _relabelled(e: EncodedRows, c: int, mm: np.ndarray) -> str | None:
    """A text column that differs in every row, but as a one-to-one map onto labels the golden never uses (country
    names for country codes): the same rows under other labels, not wrong values. Needs ≥ 3 distinct golden
    values (fewer is no evidence of a map), and no predicted label may be a golden label (a permutation of the
    golden's own labels is a wrong assignment)."""
    g_text = e.vocab[c]["g"].text
    p_text = e.vocab[c]["p"].text
    pairs = {(g_text[r], p_text[int(mm[r])]) for r in range(len(mm))}
    gs = {a for a, _ in pairs}
    ps = {b for _, b in pairs}
    if None in gs or None in ps or len(gs) < 3 or not (len(pairs) == len(gs) == len(ps)) or gs & ps:
        return None
    r = 0
    return (f"{RELABELLED}: '{e.names[c]}' holds another label for the same rows in all {len(mm)} (a one-to-one map onto "
            f"values the golden never uses, e.g. {_cell_text(e, c, 'p', int(mm[r]))} for golden {_cell_text(e, c, 'g', r)}; "
            "every other value right)")


def _sorted_cells(e: EncodedRows, c: int, side: str) -> np.ndarray:
    """``np.sort`` of numeric column *c* of side ``g`` or ``p`` (NULLs last): the sorted numbers the pairing already
    made of its Column where the cells are that Column's own and none is NULL."""
    col = (e.sources[c][0] if side == "g" else e.sources[c][1]) if c < len(e.sources) else None
    if col is not None and _facts(e, c, side)[0] == 0 and not col.null.any():
        return col.cached("sorted", lambda: np.sort(col.nums[~col.null]))
    return np.sort(e.ng[:, c] if side == "g" else e.np_[:, c])


def _diagnose(e: EncodedRows, match: np.ndarray) -> str | None:
    n_g, n_p = e.tg.shape[0], e.tp.shape[0]
    t, m = e.tg.shape[1], e.ng.shape[1]
    found = int((match >= 0).sum())
    if found == n_g and n_p == n_g:
        return None
    if found == n_g and n_p > n_g:
        return f"extra rows: every golden row is there, plus {n_p - n_g} more (not containment)"
    if n_g == 1 and n_p == 1 and m == 0 and t >= 1:
        parts = [f"'{e.names[c]}' is {_cell_text(e, c, 'p', 0)}, golden {_cell_text(e, c, 'g', 0)}"
                 for c in range(t) if e.tg[0, c] != e.tp[0, c]]
        return "different value: " + "; ".join(parts) if parts else None
    if n_g == 1 and n_p == 1 and m >= 1 and t == 0:
        parts = []
        for c in range(m):
            g, p = e.ng[0, c], e.np_[0, c]
            if not bool(numbers_close(np.array([g]), np.array([p]), e.half[0:1, c], rel_tol=e.rel[c])[0]):
                k = _constant_ratio(np.array([g]), np.array([p]))
                ratio = f" ({describe_scale(k)} the golden)" if k is not None and describe_scale(k) != "×1" else ""
                parts.append(f"'{e.names[t + c]}' is {_num(p)}, golden {_num(g)}{ratio}")
        return "different value: " + "; ".join(parts) if parts else None
    # Same population (text keys) but numbers off?
    key_match = _match_cols(e, []) if t else None
    if n_g == n_p and t >= 1 and (t + m) >= 2:
        # One text column off, everything else right (e.g. NULL written as '').
        for c in range(t):
            keep = [k for k in range(t) if k != c]
            mm = _match(e.tg[:, keep], e.tp[:, keep], e.ng, e.np_, e.half, e.rel)
            if int((mm >= 0).sum()) == n_g:
                bad = np.flatnonzero(e.tg[:, c] != e.tp[mm, c])
                relabel = _relabelled(e, c, mm) if bad.size == n_g else None
                if relabel is not None:
                    return relabel
                if bad.size:
                    r = int(bad[0])
                    return (f"one column off: '{e.names[c]}' ({bad.size} of {n_g} rows differ, every other value right; "
                            f"e.g. {_cell_text(e, c, 'p', int(mm[r]))} for golden {_cell_text(e, c, 'g', r)})")
    if t and key_match is not None and int((key_match >= 0).sum()) == n_g == n_p:
        if m == 0:
            return "values differ"
        off = []
        for c in range(m):
            rest = [k for k in range(m) if k != c]
            mm = _match_cols(e, rest)
            if int((mm >= 0).sum()) == n_g:
                k = _constant_ratio(e.ng[:, c], e.np_[mm, c])
                name = e.names[t + c]
                if k is not None:
                    return f"uniformly scaled {describe_scale(k)}: column '{name}' (every other value right)"
                n_bad = int((~numbers_close(e.ng[:, c], e.np_[mm, c], e.half[:, c], rel_tol=e.rel[c])).sum())
                off.append(f"one column off: '{name}' ({n_bad} of {n_g} rows differ, every other value right)")
        if len(off) == 1:
            return off[0]
        ks = [k for k in (_constant_ratio(e.ng[:, c], e.np_[key_match, c]) for c in range(m)) if k is not None]
        if len(ks) == m and len({round(k, 9) for k in ks}) == 1 and ks[0] != 1.0:  # a ratio in every column
            return f"uniformly scaled {describe_scale(ks[0])} in every numeric column"
        return "same rows (keys), different values in several columns"
    if t:
        key_found = int((key_match >= 0).sum()) if key_match is not None else 0
        extra_keys = n_p - key_found
        if key_found == 0:
            return f"different population: none of the {n_g} golden rows appears ({n_p} prediction rows)"
        if key_found == n_g:
            return f"extra rows: {n_p - n_g} more than the golden's {n_g} (not containment)"
        if extra_keys == 0:
            return f"missing rows: {n_g - key_found} of {n_g} golden rows are absent"
        return f"different population: {n_g - key_found} of {n_g} golden rows have no counterpart, {extra_keys} prediction rows are not in the golden"
    # Only numbers paired.
    if n_g != n_p:
        return f"different number of rows: {n_p} instead of {n_g} ({found} golden rows found)"
    if m:
        gs = [_sorted_cells(e, c, "g") for c in range(m)]
        ps = [_sorted_cells(e, c, "p") for c in range(m)]
        def sorted_half(c: int) -> np.ndarray:  # the golden's half-units in the sorted order (all zero: no sort needed)
            h = e.half[:, c]
            return h[np.argsort(e.ng[:, c], kind="stable")] if h.any() else h

        offs = [c for c in range(m) if not _rows_all_close(gs[c][:, None], ps[c][:, None], sorted_half(c)[:, None], e.rel[c:c + 1])]
        ratios = [k for k in (_constant_ratio(gs[c], ps[c]) for c in offs) if k is not None]  # of the columns off
        if len(offs) == 1 and ratios:
            return f"uniformly scaled {describe_scale(ratios[0])}: column '{e.names[offs[0]]}'"
        if len(offs) == 1:
            return f"one column off: '{e.names[offs[0]]}'"
        if offs and len(ratios) == len(offs) and len({round(k, 9) for k in ratios}) == 1:
            return f"uniformly scaled {describe_scale(ratios[0])} in every numeric column"
    return f"different values: {n_g - found} of {n_g} golden rows not found"


# --- the comparison (the order and top-N facts: goldeval.answers.row_order) -------------------------------------

def compare_rows(
    golden: Sequence[Column],
    pred: Sequence[Column],
    pairing: Pairing,
    *,
    ordered: bool = False,
    top_n: dict[str, Any] | None = None,
    rel_tol: float = REL_TOL,
) -> RowComparison:
    """Compare the rows of a prediction with the golden rows under *pairing*.

    Args:
        golden: ``(k_g,)`` golden columns, each ``(n_g,)`` cells.
        pred: ``(k_p,)`` prediction columns, each ``(n_p,)`` cells.
        pairing: From :func:`~goldeval.answers.pairing.pair_columns`; only paired columns are compared.
        ordered: The question asks for an order: the prediction's order must agree (rows tied in every sorted
            golden column may be swapped).
        top_n: ``{"n", "by", "direction"}``: rows above the boundary must be the golden's; rows at the boundary
            need only carry the boundary value (a valid tie-break).
        rel_tol: Relative numeric tolerance for binary floats; a column pair with a ``Decimal`` uses its own
            (:func:`~goldeval.answers.numbers.pair_rel_tol`).

    Returns:
        A :class:`RowComparison` (``located`` block, ``mismatch`` text, ``complete``).
    """
    if not top_n:
        # A small table whose cells are equal, row for row as a multiset: the complete comparison the code below
        # gives, without its NumPy encoding (goldeval.answers.small; that code stays the definition).
        small = small_rows_equal(golden, pred, pairing.index, pairing.scale, ordered=ordered)
        if small is not None:
            n = golden[0].n
            return RowComparison(n, n, n, [], 0, 0, order="same" if ordered else None)
    return _compare_rows_full(golden, pred, pairing, ordered=ordered, top_n=top_n, rel_tol=rel_tol)


def _compare_rows_full(
    golden: Sequence[Column],
    pred: Sequence[Column],
    pairing: Pairing,
    *,
    ordered: bool = False,
    top_n: dict[str, Any] | None = None,
    rel_tol: float = REL_TOL,
) -> RowComparison:
    """:func:`compare_rows` without the small-table path: the definition."""
    e = _encode(golden, pred, pairing, rel_tol)
    n_g, n_p = e.tg.shape[0], e.tp.shape[0]
    if _fast_equal(e):
        match = np.arange(n_g)
    else:
        match = _match(e.tg, e.tp, e.ng, e.np_, e.half, e.rel, exact_only=_exact_columns(e))
    found = int((match >= 0).sum())
    missing_idx = np.flatnonzero(match < 0)
    extra = n_p - found
    missing = [
        {pairing.golden_names[gi]: _jsonable(golden[gi].raw[r]) for gi in range(len(golden))}
        for r in missing_idx[:_MAX_LISTED].tolist()
    ]
    out = RowComparison(n_g, n_p, found, missing, int(missing_idx.size), extra)
    if top_n:
        out.top_n = top_n_of(e, pairing, top_n)
        if not out.top_n.get("qualifies"):
            out.mismatch = "top-N: " + out.top_n.get("why", "rows do not qualify")
        elif out.top_n.get("tie_break_differs"):
            out.mismatch = "top-N: a different tie-break at the boundary value"
        if ordered and out.top_n.get("qualifies") and str(top_n.get("by")) in e.names[e.tg.shape[1]:]:
            c = e.names.index(str(top_n.get("by"))) - e.tg.shape[1]
            sign = -1 if str(top_n.get("direction", "desc")).lower().startswith("desc") else 1
            if n_p > 1 and not (np.diff(e.np_[:, c]) * sign >= -1e-12).all():
                out.top_n["qualifies"] = False
                out.order = "different"
                out.mismatch = f"top-N rows not in {top_n.get('direction', 'desc')} order of '{top_n.get('by')}'"
        return out
    out.mismatch = _diagnose(e, match)
    if ordered and found == n_g and extra == 0:
        out.order = order_of(e, golden, pred, pairing)
        if out.order == "different":
            out.mismatch = "same rows in a different order (the question asks for an order)"
        elif out.order == "unknown":
            out.mismatch = "same rows, order differs and the order key cannot be checked from the columns"
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, np.generic):
        return v.item()
    return str(v)
