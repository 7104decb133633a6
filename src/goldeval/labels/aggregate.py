"""The mergeable state of the labels scorer and its results: :class:`LabelsPartial` (``(gold, pred)`` pair
counts, any split of the rows gives the same numbers) and :func:`label_results`. Shared by the Labels scorer
(:mod:`goldeval.labels.scorer`) and the file reader's batch kernel (:mod:`goldeval.labels.reader`), so both give
one set of results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from goldeval.errors import InputError
from goldeval.labels.agreement import kappa_from_pairs
from goldeval.labels.metrics import (
    SCORER_NAME,
    SCORER_VERSION,
    UNDEFINED_REASONS,
    labels_seen,
    loose_label,
    matrix_from_pairs,
    no_column_message,
    score_from_pairs,
    table_from_pairs,
)
from goldeval.scoring.protocol import Partial, counter_merge, failure_entry

__all__ = ["LabelsPartial", "label_results"]

def label_results(partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
    """The labels results of a :class:`LabelsPartial` under *config* (the options of :class:`goldeval.labels.scorer.Labels`
    plus ``source``): aggregate, per-label table, confusion matrix, per_example, disagreements, warnings, failures.

    Raises:
        InputError: a missing id / gold / prediction / second-annotator column, no positive label, or a positive
            label seen nowhere (with ``require_positive``).
    """
    assert isinstance(partial, LabelsPartial)
    p = partial
    src = config.get("source") or ""
    where = src if src and src != "rows" else "labels"
    positive, second_field = config["positive"], config["second_gold_field"]
    n_scored = sum(p.counts.values())
    if p.fields is not None and not p.id_present:
        raise InputError(no_column_message(where, config["id_field"], p.fields, "the case id column with --id-column"))
    if n_scored and not p.pred_present:
        raise InputError(no_column_message(where, config["pred_field"], p.fields, "the prediction column with --pred-column"))
    if p.n_rows and not p.gold_present and p.fields is not None:
        raise InputError(no_column_message(where, config["gold_field"], p.fields, "the gold column with --gold-column"))
    if second_field is not None and n_scored and not p.second_present and p.fresh:
        raise InputError(no_column_message(where, second_field, p.fields, "the second annotator's column with --second-gold-column"))
    counts = p.counts
    if positive is None:
        seen = ", ".join(repr(str(s)) for s in labels_seen(counts))
        raise InputError(f"positive label: none given; labels seen: {seen}. Pass --positive LABEL (goldeval labels; "
                         "-O positive=LABEL on goldeval score --scorer labels) or set positive in the gates file.")
    # the message names the file, not an option: `labels` takes --positive, `score --scorer labels` -O positive=
    score = score_from_pairs(counts, positive=positive, require_positive=config["require_positive"],
                             where=where)
    warnings = sorted(p.warnings, key=lambda w: w["line"])
    key = loose_label(positive)
    for side, firsts in (("gold", p.gold_first), ("pred", p.pred_first)):
        for label in sorted((x for x in firsts if x != positive and loose_label(x) == key), key=str):
            line, rid = firsts[label]
            n = sum(c for pair, c in counts.items() if pair[0 if side == "gold" else 1] == label)
            effect = "a negative case, not a gold positive" if side == "gold" else "not a positive prediction (a miss when gold is positive)"
            warnings.append({"line": line, "id": rid, "warning": (
                f"{where}:{line}: {side} label {label!r} ({n} {'row' if n == 1 else 'rows'}) differs from the positive label "
                f"{str(positive)!r} only by case, spaces or invisible characters; it is scored as another label: {effect}. "
                f"Fix the file if it means {str(positive)!r}.")})
    kappa, kappa_why = kappa_from_pairs(counts)
    aggregate: dict[str, Any] = {
        "n": p.n_rows, "n_scored": n_scored, "n_failed": len(p.failures),
        **{k: v for k, v in score.to_dict().items() if k not in ("undefined", "n", "positive")},
        "agreement": (sum(c for (g, q), c in counts.items() if g == q) / n_scored) if n_scored else 0.0,
        "kappa": kappa, "null_predictions": p.null_predictions,
    }
    undefined = dict(score.undefined)
    if not n_scored:
        undefined["agreement"] = UNDEFINED_REASONS["agreement"]
    if kappa_why:
        undefined["kappa"] = kappa_why
    disagreements: list[dict[str, Any]] = []
    if second_field is not None:
        n2 = sum(p.annotator.values())
        aggregate["annotator_n"] = n2
        aggregate["annotator_agreement"] = (sum(c for (a, b), c in p.annotator.items() if a == b) / n2) if n2 else 0.0
        k2, why2 = kappa_from_pairs(p.annotator)
        aggregate["annotator_kappa"] = k2
        if not n2:
            undefined["annotator_agreement"] = "there are no cases"
        if why2:
            undefined["annotator_kappa"] = why2
        disagreements = sorted(p.disagreements, key=lambda d: d["line"])
    aggregate["undefined"] = undefined
    return {
        "scorer": {"name": SCORER_NAME, "version": SCORER_VERSION},
        "positive": positive,
        "config": {k: config[k] for k in ("id_field", "gold_field", "pred_field", "second_gold_field", "require_positive")},
        "aggregate": aggregate,
        "per_label": [r.to_dict() for r in table_from_pairs(counts)],
        "confusion_matrix": matrix_from_pairs(counts).to_dict(),
        "per_example": p.per_example,
        "disagreements": disagreements,
        "warnings": warnings,
        "failures": sorted(p.failures, key=lambda f: f["line"]),
    }


class LabelsPartial(Partial):
    """The mergeable state of :class:`Labels`: ``(gold, pred)`` pair counts (and the two annotators' pairs), the
    first fields seen, warnings, failures and, with ``keep_cases``, the ``per_example`` entries."""

    def __init__(self, keep_cases: bool) -> None:
        self.keep = keep_cases
        self.counts: Counter = Counter()
        self.annotator: Counter = Counter()
        self.disagreements: list[dict[str, Any]] = []
        self.per_example: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.warnings: list[dict[str, Any]] = []
        self.gold_first: dict[str, tuple[int, str]] = {}
        self.pred_first: dict[str, tuple[int, str]] = {}
        self.n_rows = self.null_predictions = 0
        self.fields: list[str] | None = None
        self.fields_line = 0
        self.id_present = self.gold_present = self.pred_present = self.second_present = self.fresh = False

    def add(self, rec: Mapping[str, Any]) -> None:
        self.n_rows += 1
        line = rec["line"]
        if "fields" in rec and (self.fields is None or line < self.fields_line):
            self.fields, self.fields_line = rec["fields"], line
        self.id_present = self.id_present or rec.get("id_present", False) or rec.get("gold") is not None
        self.gold_present = self.gold_present or rec.get("gold_present", False)
        if rec["status"] != "scored":
            self.failures.append(failure_entry(rec))
            return
        if "fields" in rec or "gold_present" in rec:
            self.fresh = True
        else:  # a case reused from the store: it had both fields
            self.gold_present = self.pred_present = True
        self.pred_present = self.pred_present or rec.get("pred_present", False)
        self.second_present = self.second_present or rec.get("second_present", False)
        g, p, rid = rec["gold"], rec.get("pred"), rec["id"]
        self.counts[(g, p)] += 1
        if p is None:
            self.null_predictions += 1
        for label, firsts in ((g, self.gold_first), (p, self.pred_first)):
            if label is not None and (label not in firsts or line < firsts[label][0]):
                firsts[label] = (line, rid)
        for w in rec.get("warnings") or ():
            self.warnings.append({"line": line, "id": rid, "warning": w})
        s2 = rec.get("second_gold")
        if s2 is not None:
            self.annotator[(g, s2)] += 1
            if g != s2:
                self.disagreements.append({"id": rid, "a": g, "b": s2, "line": line})
        if self.keep:
            self.per_example.append({"id": rid, "line": line, "gold": g, "pred": p, "outcome": rec["outcome"]})

    def merge(self, other: Partial) -> None:
        assert isinstance(other, LabelsPartial)
        counter_merge(self.counts, other.counts)
        counter_merge(self.annotator, other.annotator)
        for mine, theirs in ((self.gold_first, other.gold_first), (self.pred_first, other.pred_first)):
            for label, at in theirs.items():
                if label not in mine or at[0] < mine[label][0]:
                    mine[label] = at
        self.disagreements += other.disagreements
        self.per_example += other.per_example
        self.failures += other.failures
        self.warnings += other.warnings
        self.n_rows += other.n_rows
        self.null_predictions += other.null_predictions
        if other.fields is not None and (self.fields is None or other.fields_line < self.fields_line):
            self.fields, self.fields_line = other.fields, other.fields_line
        for flag in ("id_present", "gold_present", "pred_present", "second_present", "fresh"):
            setattr(self, flag, getattr(self, flag) or getattr(other, flag))
