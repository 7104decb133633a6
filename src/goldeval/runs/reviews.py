"""Human reviews of a judged case settled into one verdict: all reviewers agree, or the latest review settles a
disagreement; otherwise the case stays unsettled (a conflict). Used by the regressions file (its settled entries)
and by the judge's calibration against people.

Source: ``DESIGN.md`` "Runs" (human review), goldeval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from goldeval.errors import InputError

__all__ = ["VERDICTS", "settle_reviews"]

#: The verdicts a person settles on, and the judge's decided verdicts (the categories of the kappa).
VERDICTS: tuple[str, ...] = ("match", "near_match", "no_match")


def settle_reviews(reviews: Iterable[Mapping[str, Any]]) -> tuple[dict[tuple[str | None, str], dict[str, Any]], list[dict[str, Any]]]:
    """Settle the human verdicts of each case: ``(settled, conflicts)``.

    Args:
        reviews: Human reviews in the order they were recorded (oldest first), each a mapping with ``case_id`` (or
            ``id``), ``verdict`` (match | near_match | no_match), and optionally ``run_id``, ``reviewer``,
            ``reviewed_at``, ``note`` and ``settles`` (true: this review settled a conflict, the way ``review import
            --on-conflict latest`` records it). The same review seen twice (store and regression file: same run,
            case, reviewer, verdict) counts once, at the place of its latest settling copy when one settles (a
            reviewer who settles a conflict on the verdict they gave first gave the latest review).

    Returns:
        ``settled``: ``(run_id, case_id) → {"run_id", "case_id", "verdict", "reviewers", "note", "reviewed_at",
        "n_reviews", "settled_by": "agreement" | "latest"}``; ``conflicts``: ``[{"run_id", "case_id", "verdicts":
        [{"verdict", "reviewer", "reviewed_at", "note"}]}]`` for cases whose reviewers disagree and were never
        settled, in the order first seen.

    Raises:
        InputError: a review without a case id or with a verdict outside match | near_match | no_match.
    """
    groups: dict[tuple[str | None, str], list[Mapping[str, Any]]] = {}
    for r in reviews:
        cid = r.get("case_id", r.get("id"))
        if not isinstance(cid, str) or r.get("verdict") not in VERDICTS:
            raise InputError(f"human review {dict(r)!r}: expected a case id and a verdict in {', '.join(VERDICTS)}. "
                             "Fix the review (or the regression file line) it came from.")
        key = (r.get("run_id"), cid)
        seen = groups.setdefault(key, [])
        ident = (r.get("reviewer"), r.get("verdict"))
        same = [s for s in seen if (s.get("reviewer"), s.get("verdict")) == ident]
        if same:
            if not r.get("settles"):
                continue  # a copy (the store's review again in the regression file)
            # a reviewer who settles a conflict on the verdict they gave before: that review is now the latest
            seen.remove(same[0])
        seen.append(r)
    settled: dict[tuple[str | None, str], dict[str, Any]] = {}
    conflicts: list[dict[str, Any]] = []
    for (run_id, cid), rs in groups.items():
        verdicts = {r["verdict"] for r in rs}
        last = rs[-1]
        how = "agreement" if len(verdicts) == 1 else ("latest" if last.get("settles") else None)
        if how is None:
            conflicts.append({"run_id": run_id, "case_id": cid, "verdicts": [
                {k: r.get(k) for k in ("verdict", "reviewer", "reviewed_at", "note")} for r in rs]})
            continue
        settled[(run_id, cid)] = {
            "run_id": run_id, "case_id": cid, "verdict": last["verdict"],
            "reviewers": [r.get("reviewer") for r in rs if how == "agreement" or r is last],
            "note": last.get("note"), "reviewed_at": last.get("reviewed_at"), "n_reviews": len(rs), "settled_by": how,
        }
    return settled, conflicts
