"""The order and top-N facts of a row comparison (split from :mod:`goldeval.answers.rows`): whether the prediction's
rows come in the golden's order (:func:`order_of`), and for a top-N golden whether the prediction holds the N rows
that rank first, ties included (:func:`top_n_of`). Both read the encoded tables :func:`goldeval.answers.rows._encode`
builds (:class:`EncodedRows`, defined here so that both modules read it).

Source: ``DESIGN.md`` "Data answers" (ordered goldens, top-N and ties), goldeval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from goldeval.answers.matching import match_rows as _match
from goldeval.answers.numbers import number_text as _num
from goldeval.answers.numbers import numbers_close
from goldeval.answers.numbers import rows_all_close as _rows_all_close
from goldeval.answers.pairing import Pairing
from goldeval.answers.values import Column


@dataclass(slots=True)
class EncodedRows:
    names: list[str]          # golden names: text pairs first, then numeric pairs
    tg: np.ndarray            # (n_g, t) int64 text ids (-1 NULL)
    tp: np.ndarray            # (n_p, t)
    ng: np.ndarray            # (n_g, m) float64 (NaN NULL)
    np_: np.ndarray           # (n_p, m) float64, already scaled
    half: np.ndarray          # (n_g, m) display-precision half-units
    g_index: list[int]        # golden column index per encoded column (text then numeric)
    vocab: list[dict[str, Column]] = field(default_factory=list)  # per text column: {"g": Column, "p": Column}
    rel: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (m,) relative tolerance per numeric pair
    dec: list[int] = field(default_factory=list)  # (m,) most decimals a golden cell is written with (0: no display precision)
    #: (m,) per numeric column the golden and the prediction Column its cells are, unchanged (None: scaled, or not
    #: known): their facts (:func:`_facts`) are then computed once per column, not once per comparison.
    sources: list[tuple[Column, Column | None]] = field(default_factory=list)


def _monotone(values: np.ndarray) -> int:
    """+1 non-decreasing, -1 non-increasing, 0 neither or fewer than 2 distinct values (NaN breaks it)."""
    if values.size < 2 or np.isnan(values).any():
        return 0
    d = np.diff(values)
    if (d == 0).all():
        return 0
    if (d >= 0).all():
        return 1
    if (d <= 0).all():
        return -1
    return 0


def order_of(e: EncodedRows, golden: Sequence[Column], pred: Sequence[Column], pairing: Pairing) -> str:
    if e.tg.shape[0] != e.tp.shape[0]:
        return "different"
    same = np.array_equal(e.tg, e.tp) and _rows_all_close(e.ng, e.np_, e.half, e.rel)
    if same:
        return "same"
    # Which golden columns are sorted? The prediction must be sorted the same way in every one of them.
    keys_g, keys_p = [], []
    for c in range(e.ng.shape[1]):
        keys_g.append(e.ng[:, c])
        keys_p.append(e.np_[:, c])
    for c in range(e.tg.shape[1]):
        gi = e.g_index[c]
        g = golden[gi]
        p = pred[pairing.index[gi]]
        if g.kind in ("text", "date") and p.kind in ("text", "date"):
            vocab = sorted(set(v for v in g.text.tolist() if v is not None) | set(v for v in p.text.tolist() if v is not None))
            rank = {v: i for i, v in enumerate(vocab)}
            keys_g.append(np.array([np.nan if v is None else rank[v] for v in g.text.tolist()], dtype=float))
            keys_p.append(np.array([np.nan if v is None else rank[v] for v in p.text.tolist()], dtype=float))
    dirs = [(_monotone(kg), kp) for kg, kp in zip(keys_g, keys_p)]
    sorted_cols = [(d, kp) for d, kp in dirs if d != 0]
    if not sorted_cols:
        return "unknown"
    kept = [_monotone(kp) == d or (np.diff(kp) * d >= 0).all() for d, kp in sorted_cols]
    if all(kept):
        return "ties reordered"
    if any(kept):
        return "unknown"
    return "different"


# --- top-N ----------------------------------------------------------------------------------------------------

def _worst(v: np.ndarray, sign: float) -> int:
    """Index of the worst kept value of a top-N column (the boundary), NULLs aside: SQLite sorts NULL first, so a
    NULL in an ascending top-N sits above the boundary, not on it (``np.argmax`` picked the NaN and the boundary
    read "nan"). All NULL: index 0."""
    x = np.where(np.isnan(v), -np.inf, sign * v)
    return int(np.argmax(x))


def top_n_of(e: EncodedRows, pairing: Pairing, top: dict[str, Any]) -> dict[str, Any]:
    by = str(top.get("by"))
    direction = str(top.get("direction", "desc")).lower()
    sign = -1.0 if direction.startswith("desc") else 1.0
    t = e.tg.shape[1]
    if by not in e.names:
        return {"qualifies": False, "why": f"top-N column '{by}' is not among the paired golden columns"}
    k = e.names.index(by)
    if k >= t:
        c = k - t
        gv, pv, hv = e.ng[:, c], e.np_[:, c], e.half[:, c]
    else:
        # A text or date column (ISO dates sort as text): rank both sides' values on one scale.
        g_text, p_text = e.vocab[k]["g"].text.tolist(), e.vocab[k]["p"].text.tolist()
        ranks = {v: float(i) for i, v in enumerate(sorted({v for v in g_text + p_text if v is not None}))}
        gv = np.array([np.nan if v is None else ranks[v] for v in g_text], dtype=float)
        pv = np.array([np.nan if v is None else ranks[v] for v in p_text], dtype=float)
        hv = np.zeros_like(gv)
        e = EncodedRows(e.names, e.tg, e.tp, np.column_stack([e.ng, gv]), np.column_stack([e.np_, pv]),
                     np.column_stack([e.half, hv]), e.g_index, e.vocab, np.append(e.rel, 0.0))
        c = e.ng.shape[1] - 1
    n_g, n_p = gv.size, pv.size
    rel_tol = float(e.rel[c])  # the top-N column's; whole rows below use e.rel
    if n_p > n_g and n_g:
        # Every tied row returned? Rows above the boundary all there, every other row at the boundary value.
        g_bound = gv[_worst(gv, sign)]
        hb = hv[_worst(gv, sign)]
        at_g = numbers_close(gv, np.full(n_g, g_bound), hv, rel_tol=rel_tol)
        at_p = numbers_close(pv, np.full(n_p, g_bound), np.full(n_p, float(hb)), rel_tol=rel_tol)
        above_g, above_p = np.flatnonzero(~at_g), np.flatnonzero(~at_p)
        mm = _match(e.tg[above_g], e.tp[above_p], e.ng[above_g], e.np_[above_p], e.half[above_g], e.rel)
        if int((mm >= 0).sum()) == above_g.size == above_p.size:
            return {"qualifies": False, "all_ties": True, "boundary": float(g_bound),
                    "why": f"{n_p} rows for a top {n_g}: every row tied at the boundary value {_num(float(g_bound))} is returned"}
        return {"qualifies": False, "why": f"{n_p} rows returned for a top {n_g}"}
    if n_p != n_g:
        return {"qualifies": False, "why": f"{n_p} rows returned for a top {n_g}"}
    if n_g == 0:
        return {"qualifies": True, "boundary": None, "tie_break_differs": False}
    g_bound = gv[_worst(gv, sign)]   # worst value kept in the golden
    p_bound = pv[_worst(pv, sign)]
    half = hv[_worst(gv, sign)]
    if not bool(numbers_close(np.array([g_bound]), np.array([p_bound]), np.array([half]), rel_tol=rel_tol)[0]):
        return {"qualifies": False, "boundary": float(g_bound), "why": f"boundary value {_num(p_bound)} instead of {_num(g_bound)}"}
    at_g = numbers_close(gv, np.full(n_g, g_bound), hv, rel_tol=rel_tol)
    at_p = numbers_close(pv, np.full(n_p, g_bound), np.full(n_p, float(half)), rel_tol=rel_tol)
    above_g = np.flatnonzero(~at_g)
    above_p = np.flatnonzero(~at_p)
    # Rows above the boundary must be the golden's rows, all of them.
    mm = _match(e.tg[above_g], e.tp[above_p], e.ng[above_g], e.np_[above_p], e.half[above_g], e.rel)
    if int((mm >= 0).sum()) != above_g.size or above_p.size != above_g.size:
        return {"qualifies": False, "boundary": float(g_bound), "why": "rows above the boundary differ from the golden's"}
    if int(at_p.sum()) != int(at_g.sum()):
        return {"qualifies": False, "boundary": float(g_bound), "why": "a different number of rows at the boundary"}
    tie = _match(e.tg[at_g], e.tp[at_p], e.ng[at_g], e.np_[at_p], e.half[at_g], e.rel)
    differs = int((tie >= 0).sum()) != int(at_g.sum())
    return {"qualifies": True, "boundary": float(g_bound), "tie_break_differs": differs}


# --- entry point ----------------------------------------------------------------------------------------------
