"""Two label runs compared in the words of labels: missed positives and false positives (how many in each run,
which are new, which were fixed), and the cases whose predicted label changed.

A label case's outcome is one of ``tp``, ``fp``, ``fn`` (a missed positive), ``tn`` for the run's positive label
(:mod:`goldeval.labels`). Between two runs of the same gold labels a case can only move between ``tp`` and ``fn``
(a positive caught, then missed: a **new miss**; or the reverse: a **fixed miss**) or between ``tn`` and ``fp``
(a **new false positive**, or a **fixed** one); any other move means the gold label itself differs between the
runs, and the case is listed under ``gold_changed``. A **label flip** is a case whose predicted label differs,
whatever that does to its outcome (``approve`` → ``reject`` on a gold ``approve`` is a flip that leaves it ``tn``).

The verdict view of the same runs (:func:`goldeval.runs.compare.compare_runs` ``verdicts``: a right label passes,
a wrong one fails, McNemar and the paired bootstrap on that) stays as it is; this part names what moved.

Source: ``DESIGN.md`` "Labels" and "Runs, versions, comparisons"; issue 10 item 11 ("compare of two label runs
speaks of labels, not verdicts").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from goldeval.labels.metrics import Confusion, score_confusion

__all__ = ["LABEL_OUTCOMES", "is_label_run", "compare_labels"]

#: The outcomes a recorded label case carries.
LABEL_OUTCOMES: tuple[str, ...] = ("tp", "fp", "fn", "tn")

#: (outcome in A, outcome in B) → the list of the result it goes to.
_MOVES = {
    ("tp", "fn"): ("missed", "new"),
    ("fn", "tp"): ("missed", "fixed"),
    ("tn", "fp"): ("false_positives", "new"),
    ("fp", "tn"): ("false_positives", "fixed"),
}


def _scored(case: Mapping[str, Any]) -> bool:
    return case.get("status", "scored") == "scored" and case.get("outcome") in LABEL_OUTCOMES


def is_label_run(cases: Mapping[str, Mapping[str, Any]]) -> bool:
    """``True`` when *cases* (case id → stored record) hold label outcomes and no verdict: a ``labels`` run."""
    if getattr(cases, "scores_only", False):
        return False  # a CompareCases whose every case is a status and a score: no outcome, no verdict
    has_outcome = False
    for c in cases.values():
        if c.get("verdict") is not None or isinstance(c.get("correct"), bool):
            return False
        has_outcome = has_outcome or c.get("outcome") in LABEL_OUTCOMES
    return has_outcome


def _counts(cases: Mapping[str, Mapping[str, Any]], positive: Any) -> dict[str, Any]:
    n = Counter(c["outcome"] for c in cases.values() if _scored(c))
    score = score_confusion(Confusion(n["tp"], n["fp"], n["fn"], n["tn"]), positive=positive).to_dict()
    return {**score, "n_cases": len(cases), "n_unscored": len(cases) - score["n"]}


def _change(cid: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": cid, "gold_a": a.get("gold"), "gold_b": b.get("gold"), "pred_a": a.get("pred"), "pred_b": b.get("pred"),
            "outcome_a": a.get("outcome"), "outcome_b": b.get("outcome")}


def compare_labels(
    cases_a: Mapping[str, Mapping[str, Any]],
    cases_b: Mapping[str, Mapping[str, Any]],
    common: list[str],
    *,
    positive_a: Any = None,
    positive_b: Any = None,
) -> dict[str, Any]:
    """Compare two label runs case by case, in labels.

    Args:
        cases_a, cases_b: case id → stored per-case record (``{"id", "status", "gold", "pred", "outcome", ...}``).
        common: The case ids present in both runs, in the order to report them.
        positive_a, positive_b: Each run's positive label (from its recorded configuration), or ``None``.

    Returns:
        ``{"positive": {"a", "b"}, "a", "b", "transitions", "missed", "false_positives", "label_flips",
        "gold_changed", "scored_in_one_only"}``: ``a`` and ``b`` are each whole run's counts and rates
        (:class:`goldeval.labels.metrics.LabelScore` fields — ``tp fp fn tn missed precision recall …`` with ``undefined``
        — plus ``n_cases`` and ``n_unscored``); ``transitions`` counts ``"tp->fn"``-style moves over the cases
        scored in both; ``missed`` and ``false_positives`` each hold ``new`` and ``fixed`` lists of changes
        ``{"id", "gold_a", "gold_b", "pred_a", "pred_b", "outcome_a", "outcome_b"}``; ``label_flips`` lists the
        changes whose predicted label differs; ``gold_changed`` those whose gold label differs;
        ``scored_in_one_only`` the ids scored in one run only.
    """
    transitions: Counter[str] = Counter()
    out: dict[str, Any] = {
        "positive": {"a": positive_a, "b": positive_b},
        "a": _counts(cases_a, positive_a),
        "b": _counts(cases_b, positive_b),
        "transitions": {},
        "missed": {"new": [], "fixed": []},
        "false_positives": {"new": [], "fixed": []},
        "label_flips": [],
        "gold_changed": [],
        "scored_in_one_only": [],
    }
    for cid in common:
        ca, cb = cases_a[cid], cases_b[cid]
        if not (_scored(ca) and _scored(cb)):
            if _scored(ca) != _scored(cb):
                out["scored_in_one_only"].append(cid)
            continue
        oa, ob = ca["outcome"], cb["outcome"]
        transitions[f"{oa}->{ob}"] += 1
        change = _change(cid, ca, cb)
        if ca.get("gold") != cb.get("gold"):
            out["gold_changed"].append(change)
        elif (oa, ob) in _MOVES:
            kind, which = _MOVES[(oa, ob)]
            out[kind][which].append(change)
        if ca.get("pred") != cb.get("pred"):
            out["label_flips"].append(change)
    out["transitions"] = dict(sorted(transitions.items()))
    return out
