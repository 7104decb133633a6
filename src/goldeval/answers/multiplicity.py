"""Same rows, different multiplicity: the prediction holds the golden's rows as a *set*, but some rows repeat a
different number of times (a join fan-out on either side, DISTINCT on one side only, distinct entities that share
the selected values).

Unless the question fixes how often a row appears (each time, every visit, how many…), that is a defensible
difference, not a wrong answer: ``near_match``, with the rows that repeat and how often. Where the question fixes
it, it stays ``no_match``, and the why says so.

Source: goldeval issue 11, item 1 (Spider dev-0037/0038 list a singer once per concert where the prediction says
DISTINCT; dev-0535 lists a student once per enrolment; dev-0752 a region once per country).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from goldeval.answers.matching import argsort_ids, cell_codes, stacked_groups
from goldeval.answers.numbers import tolerances
from goldeval.answers.pairing import Pairing
from goldeval.answers.rows import compare_rows
from goldeval.answers.values import Column, make_column

__all__ = ["Multiplicity", "same_set", "question_fixes_multiplicity"]

#: Phrases of a question that fix how often a row appears (a row per occurrence, or a count of them).
_FIXES = re.compile(
    r"\b(?:how many|how often|(?:each|every|per|all(?: the)?) (?:times?|visits?|admissions?|enrol(?:l)?ments?|orders?|sales?"
    r"|transactions?|appointments?|bookings?|purchases?|trips?|performances?|occurrences?|events?|payments?|shipments?)"
    r"|once (?:per|for each|for every)|one row (?:per|for each)|as many times|(?:the )?number of times"
    r"|different|distinct|unique|including duplicates|with duplicates|with repetitions?)\b",
    re.IGNORECASE,
)

_LISTED = 5


@dataclass(slots=True)
class Multiplicity:
    """Rows equal as a set, different as a multiset.

    Attributes:
        distinct: Number of distinct rows (the same on both sides).
        golden_rows: Golden row count.
        pred_rows: Prediction row count.
        repeats: Up to five ``(row as {golden column: value}, times in golden, times in prediction)``, the rows
            whose counts differ (``None`` when the prediction's partner row met it only within tolerance).
        n_differ: How many distinct rows repeat a different number of times.
    """

    distinct: int
    golden_rows: int
    pred_rows: int
    repeats: list[tuple[dict[str, Any], int, int | None]]
    n_differ: int

    def describe(self) -> str:
        """``same rows, different multiplicity: ('Justin Brown') ×2 in the golden, ×1 in the prediction``."""
        parts = [f"({', '.join(repr(v) if isinstance(v, str) else str(v) for v in row.values())}) ×{g} in the golden, "
                 + (f"×{p} in the prediction" if p is not None else "another count in the prediction")
                 for row, g, p in self.repeats]
        more = f"; and {self.n_differ - len(self.repeats)} more" if self.n_differ > len(self.repeats) else ""
        return (f"same rows, different multiplicity ({self.distinct} distinct rows; {self.golden_rows} golden rows, "
                f"{self.pred_rows} in the prediction): " + "; ".join(parts) + more)


def _take(col: Column, idx: Sequence[int], exact: bool) -> Column:
    raw = col.raw
    out = make_column(col.name, list(map(raw.__getitem__, idx)))
    return out.exact() if exact else out


def _only_equal_meets(gcols: list[Column], pcols: list[Column], pairing: Pairing, exact_golden: bool) -> bool:
    """True when, under *pairing*, a golden cell can only meet a prediction cell with the same canonical text: text
    compared as text, and numbers that are finite whole numbers on both sides, unscaled, the golden written
    without decimals (or computed: *exact_golden*). The distinct rows then match completely only if the two sets
    of distinct rows are equal."""
    for gi, pj in pairing.index.items():
        g, p = gcols[gi], pcols[pj]
        if not (g.numeric and p.numeric):
            continue
        if pairing.scale.get(gi, 1.0) != 1.0 or not (_whole(g) and _whole(p)):
            return False
        if not exact_golden and tolerances(g).any():
            return False
    return True


def _whole(c: Column) -> bool:
    def make() -> bool:
        v = c.nums[~c.null]
        return bool(np.isfinite(v).all() and (v == np.floor(v)).all())
    return c.cached("whole", make)


def same_set(gcols: list[Column], pcols: list[Column], pairing: Pairing, *, rel_tol: float,
             exact_golden: bool = False) -> Multiplicity | None:
    """The multiplicity difference when the paired rows are equal as sets but not as multisets, else ``None``.

    Args:
        gcols: ``(k_g,)`` golden columns, each ``(n_g,)``.
        pcols: ``(k_p,)`` prediction columns, each ``(n_p,)``.
        pairing: A pairing with every golden column paired (``pairing.index``: golden index → prediction index).
        rel_tol: Relative numeric tolerance (as :func:`~goldeval.answers.rows.compare_rows`).
        exact_golden: The golden's numbers were computed (no display precision), as the judge decided.

    Rows are deduplicated on their canonical cells (the paired columns only); the distinct rows are then compared
    with :func:`~goldeval.answers.rows.compare_rows`, so tolerance and rate scaling apply as for the full rows.
    """
    if not gcols or not gcols[0].n or not pcols or not pcols[0].n or len(pairing.index) != len(gcols):
        return None
    order = sorted(pairing.index)
    # One id per distinct row (its paired cells' canonical texts), shared by both sides.
    g_codes, p_codes = cell_codes([gcols[gi] for gi in order], [pcols[pairing.index[gi]] for gi in order])
    n_g = g_codes.shape[0]
    ids = stacked_groups(g_codes, p_codes)
    g_ids, p_ids = ids[:n_g], ids[n_g:]
    n_ids = int(ids.max()) + 1
    g_count = np.bincount(g_ids, minlength=n_ids)
    p_count = np.bincount(p_ids, minlength=n_ids)
    g_first = _first_rows(g_ids, n_ids)
    p_first = _first_rows(p_ids, n_ids)
    if g_first.size == n_g and p_first.size == p_ids.size:
        return None  # no row repeats on either side
    if _only_equal_meets(gcols, pcols, pairing, exact_golden):
        # The distinct rows can only meet their equals: they match completely exactly when the two sets of them
        # are equal (the row comparison of the distinct rows would find each one its equal, and nothing else).
        if not np.array_equal(np.flatnonzero(g_count), np.flatnonzero(p_count)):
            return None
    else:
        g_sub = [_take(c, g_first.tolist(), exact_golden) for c in gcols]
        p_sub = [_take(c, p_first.tolist(), False) for c in pcols]
        rc = compare_rows(g_sub, p_sub, pairing, rel_tol=rel_tol)
        if not rc.complete:
            return None
    # Repeat counts per distinct row; a golden row's prediction partner is the one with the same canonical cells
    # (when tolerance or scaling made them meet without equal text, the counts are given by total only).
    first_ids = g_ids[g_first]
    differ_at = np.flatnonzero(g_count[first_ids] != p_count[first_ids])
    if not differ_at.size:
        return None
    names = pairing.golden_names
    repeats = []
    for r in differ_at[:_LISTED].tolist():
        k = int(first_ids[r])
        row = int(g_first[r])
        p = int(p_count[k])
        repeats.append(({names[gi]: gcols[gi].raw[row] for gi in range(len(gcols))}, int(g_count[k]), p if p else None))
    return Multiplicity(int(g_first.size), n_g, int(p_ids.size), repeats, int(differ_at.size))


def _first_rows(ids: np.ndarray, n_ids: int) -> np.ndarray:
    """The position of the first row of each distinct id, ascending."""
    order = argsort_ids(ids, n_ids)
    s = ids[order]
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] != s[:-1]
    return np.sort(order[new])


def question_fixes_multiplicity(question: str) -> str | None:
    """The phrase of *question* that fixes how often a row appears (``"how many"``, ``"each time"``…), or ``None``."""
    m = _FIXES.search(question or "")
    return m.group(0) if m else None
