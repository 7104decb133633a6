"""Golden checks: flag goldens that cannot be right, without bending the verdict.

``gold_status`` is one of ``verified`` · ``verified_benign`` · ``suspect`` · ``verified_wrong``. The verdict is
always computed against the golden as given; the status says whether to trust it. A ``verified_wrong`` golden is
left out of the pass rate (counted beside it), see :func:`goldeval.verdict.pass_rate`.

Rules (each gives a ``gold_note`` that names the column and the value):

* a negative value in a count or rate column → ``verified_wrong`` (a count or a rate is never below 0);
* a share / proportion / fraction above 100 → ``verified_wrong`` (neither a fraction nor a percentage; a share
  column written as a percentage, all values in [0, 100], is normal and not flagged);
* a rate above 1 (named ``rate``, or declared in ``rate_columns``) → ``suspect``: "a rate outside [0, 1]" (rates per
  1,000 exist, so this is not proof); a percent column above 100 → ``suspect``;
* a total below its parts: a row labelled ``Total``/``All``/``Overall`` whose value is below the sum of the other
  rows (all non-negative) → ``verified_wrong``; a ``total…`` column below one or the sum of the count columns of
  the same row → ``suspect`` (those columns may not be its parts, or may overlap);
* every golden cell NULL → ``suspect`` (an aggregate over nothing: a filter that matched no row?);
* the canonical query, re-executed, does not give the golden rows → ``suspect`` (set by the judge).

Source: ``DESIGN.md`` "Terms" (gold_status), goldeval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from goldeval.answers.values import Column, is_rate_name, name_tokens, role_tags

__all__ = ["check_golden", "worse_status"]

_ORDER = {"verified": 0, "verified_benign": 1, "suspect": 2, "verified_wrong": 3}
_TOTAL_LABELS = {"total", "all", "overall", "grand total", "sum", "all wards", "all sites"}


def worse_status(a: tuple[str, str | None], b: tuple[str, str | None]) -> tuple[str, str | None]:
    """The more severe status of two ``(status, note)`` pairs, with both notes kept (joined by ``; ``)."""
    if b[1] is None and b[0] == "verified":  # the lines below give this (the least severe status, no note)
        return a[0], a[1] or None
    status = b[0] if _ORDER[b[0]] > _ORDER[a[0]] else a[0]
    notes = [n for n in (a[1], b[1]) if n]
    if len(notes) == 2 and notes[1] in notes[0]:
        notes = notes[:1]
    return status, "; ".join(notes) or None


#: Columns up to this many cells take their extremes in plain Python (issue 15: NumPy's per-call cost dominates).
_SMALL = 64


def _fmt(x: float) -> str:
    return f"{x:g}"


def _all_null(c: Column) -> bool:
    """``bool(c.null.all())``: read from a list on a few cells (NumPy's reduction costs more than they do)."""
    return all(c.null.tolist()) if c.n <= _SMALL else bool(c.null.all())


def check_golden(columns: Sequence[Column], *, rate_columns: Sequence[str] = ()) -> tuple[str, str | None]:
    """``(gold_status, gold_note)`` for a golden table.

    Args:
        columns: The golden's columns, each ``(n,)`` cells (see :func:`goldeval.answers.values.make_column`).
        rate_columns: Column names the case declares as rates.

    Returns:
        ``("verified", None)`` when nothing looks impossible, else the most severe finding.
    """
    status: tuple[str, str | None] = ("verified", None)
    if columns and columns[0].n and all(_all_null(c) for c in columns):
        status = ("suspect", "every golden cell is NULL: does its query filter out every row (a case-sensitive string, a wrong date)?")
    for c in columns:
        if not c.numeric or c.n == 0:
            continue
        if c.n <= _SMALL:
            # A few cells: their least and greatest number in plain Python (the same values as the NumPy lines
            # below: min and max of the non-NULL floats, a signed zero aside, which no check below can tell apart).
            present = [x for x in c.nums.tolist() if x == x]
            if not present:
                continue
            lo, hi = min(present), max(present)
        else:
            vals = c.nums[~np.isnan(c.nums)]
            if vals.size == 0:
                continue
            lo, hi = float(vals.min()), float(vals.max())
        toks = set(name_tokens(c.name))
        roles = role_tags(tuple(toks))
        if ("count" in roles or is_rate_name(c.name, rate_columns)) and lo < 0:
            status = worse_status(status, ("verified_wrong", f"column '{c.name}' holds {_fmt(lo)}: a count or rate is never negative"))
            continue
        if toks & {"share", "proportion", "fraction"} and hi > 1:
            if hi > 100:  # not a fraction, and not a percentage either
                status = worse_status(status, ("verified_wrong", f"column '{c.name}' holds {_fmt(hi)}: a share lies in [0, 1] (or [0, 100] as a percentage)"))
        elif "percent" in toks and hi > 100:
            status = worse_status(status, ("suspect", f"column '{c.name}' holds {_fmt(hi)}: a percentage above 100"))
        elif ("rate" in toks or c.name in rate_columns) and "percent" not in toks and hi > 1:
            status = worse_status(status, ("suspect", f"column '{c.name}' holds {_fmt(hi)}: a rate outside [0, 1] (a percentage, or a rate per 1,000?)"))
    status = worse_status(status, _total_rows(columns, rate_columns))
    status = worse_status(status, _total_columns(columns, rate_columns))
    return status


def _total_rows(columns: Sequence[Column], rate_columns: Sequence[str]) -> tuple[str, str | None]:
    labels = [c for c in columns if not c.numeric and c.kind == "text" and c.n >= 3]  # fewer rows hold no total row
    if not labels:
        return ("verified", None)
    nums = None  # the columns a total row adds up, read only once a label column holds one total label (issue 15)
    for lab in labels:
        text = lab.text.tolist()
        idx = [i for i, v in enumerate(text) if v in _TOTAL_LABELS]
        if len(idx) != 1:
            continue
        t = idx[0]
        if nums is None:
            nums = [c for c in columns if c.numeric and not is_rate_name(c.name, rate_columns)
                    and not ({"avg", "min", "max", "time", "id"} & role_tags(name_tokens(c.name)))]
        for c in nums:
            parts = np.delete(c.nums, t)
            if np.isnan(parts).any() or np.isnan(c.nums[t]) or (parts < 0).any():
                continue
            total, s = float(c.nums[t]), float(parts.sum())
            if total < s * (1 - 1e-9) - 1e-9:
                return ("verified_wrong", f"row '{lab.raw[t]}' has {c.name} = {_fmt(total)}, below the sum of the other rows ({_fmt(s)}): a total below its parts")
    return ("verified", None)


def _total_columns(columns: Sequence[Column], rate_columns: Sequence[str]) -> tuple[str, str | None]:
    if not any(c.numeric and "total" in name_tokens(c.name) for c in columns):
        return ("verified", None)  # no total column (what the lines below find first)
    nums = [c for c in columns if c.numeric and not is_rate_name(c.name, rate_columns)
            and not ({"avg", "min", "max", "time", "id"} & role_tags(name_tokens(c.name)))]
    totals = [c for c in nums if "total" in name_tokens(c.name)]
    if len(totals) != 1:
        return ("verified", None)
    tot = totals[0]
    parts = [c for c in nums if c is not tot and "count" in role_tags(name_tokens(c.name))]
    if not parts:
        return ("verified", None)
    P = np.stack([c.nums for c in parts], axis=1)
    T = tot.nums
    ok = ~np.isnan(T) & ~np.isnan(P).any(axis=1) & (P >= 0).all(axis=1)
    if not ok.any():
        return ("verified", None)
    below_one = ok & (P.max(axis=1) > T * (1 + 1e-9) + 1e-9)
    if below_one.any():
        r = int(np.flatnonzero(below_one)[0])
        return ("suspect", f"row {r + 1}: {tot.name} = {_fmt(T[r])} is below one of its parts ({_fmt(P[r].max())})")
    below_sum = ok & (P.sum(axis=1) > T * (1 + 1e-9) + 1e-9)
    if below_sum.any() and len(parts) > 1:
        r = int(np.flatnonzero(below_sum)[0])
        return ("suspect", f"row {r + 1}: {tot.name} = {_fmt(T[r])} is below the sum of {', '.join(c.name for c in parts)} ({_fmt(P[r].sum())})")
    return ("verified", None)
