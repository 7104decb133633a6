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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
    out = make_column(col.name, [col.raw[i] for i in idx])
    return out.exact() if exact else out


def _keys(cols: Sequence[Column]) -> list[tuple[Any, ...]]:
    texts = [c.text.tolist() for c in cols]
    return list(zip(*texts)) if texts else []


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
    g_keys = _keys(gcols)
    order = sorted(pairing.index)
    p_keys = _keys([pcols[pairing.index[gi]] for gi in order])
    g_count, p_count = Counter(g_keys), Counter(p_keys)
    if len(g_count) == len(g_keys) and len(p_count) == len(p_keys):
        return None  # no row repeats on either side
    g_first = list({k: i for i, k in reversed(list(enumerate(g_keys)))}.values())[::-1]
    p_first = list({k: i for i, k in reversed(list(enumerate(p_keys)))}.values())[::-1]
    g_first.sort()
    p_first.sort()
    g_sub = [_take(c, g_first, exact_golden) for c in gcols]
    p_sub = [_take(c, p_first, False) for c in pcols]
    rc = compare_rows(g_sub, p_sub, pairing, rel_tol=rel_tol)
    if not rc.complete:
        return None
    # Repeat counts per distinct row; a golden row's prediction partner is the one with the same canonical cells
    # (when tolerance or scaling made them meet without equal text, the counts are given by total only).
    g_in_order = [g_keys[i] for i in g_first]
    differ = [(k, g_count[k], p_count.get(k)) for k in g_in_order if p_count.get(k) != g_count[k]]
    names = pairing.golden_names
    repeats = [({names[gi]: gcols[gi].raw[g_keys.index(k)] for gi in range(len(gcols))}, g, p)
               for k, g, p in differ[:_LISTED]]
    if not differ:
        return None
    return Multiplicity(len(g_first), len(g_keys), len(p_keys), repeats, len(differ))


def question_fixes_multiplicity(question: str) -> str | None:
    """The phrase of *question* that fixes how often a row appears (``"how many"``, ``"each time"``…), or ``None``."""
    m = _FIXES.search(question or "")
    return m.group(0) if m else None
