"""The labels scorer behind the :class:`goldeval.scoring.protocol.Scorer` interface (:class:`Labels`).

It wraps the labels row rules (:mod:`goldeval.labels.metrics`) and aggregates from mergeable partials whose results
equal :func:`goldeval.labels.reader.score_label_rows`'s key for key: the tests compare them on the published sets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from goldeval.errors import InputError, given
from goldeval.io.reading import RowError
from goldeval.labels.agreement import kappa_from_pairs
from goldeval.labels.metrics import (
    UNDEFINED_REASONS,
    label_value,
    labels_seen,
    loose_label,
    matrix_from_pairs,
    no_column_message,
    score_from_pairs,
    table_from_pairs,
)
from goldeval.scoring.protocol import (
    Partial,
    Reused,
    Scorer,
    counter_merge,
    failure_entry,
    numbered,
)

__all__ = ["Labels"]

def _unscored(rid: str | None, line: int, error: str) -> dict[str, Any]:
    return {"id": rid, "line": line, "status": "unscored", "error": error}


# ---------------------------------------------------------------------------------------------------------------
# labels


class Labels(Scorer):
    """Labels for one positive label: :func:`goldeval.labels.reader.score_label_rows` behind the Scorer interface.

    Records: ``{"id", "line", "status": "scored", "gold", "pred", "outcome", "second_gold"?, "warnings"?}`` or
    ``{"id", "line", "status": "unscored", "error"}``. The state is the (gold, pred) pair counts, so any split of
    the rows gives the same precision, recall, missed and kappa. Results: those of ``score_label_rows``.
    """

    name = "labels"
    version = "1"
    per_example_from_cases = None  # an entry is {id, line, gold, pred, outcome}; the record holds more
    options = {"positive": None, "id_field": "id", "gold_field": "gold", "pred_field": "pred",
               "second_gold_field": None, "require_positive": True}
    headline = "f1"

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        src = config.get("source") or ""
        prefix = f"{src}:" if src and src != "rows" else "line "
        id_field, gold_field, pred_field = config["id_field"], config["gold_field"], config["pred_field"]
        second_field, positive = config["second_gold_field"], config["positive"]
        seen: dict[str, int] = {}
        first = True
        for item in numbered(rows, src or "rows"):
            if type(item) is Reused:
                rec = dict(item.record)
                seen.setdefault(rec["id"], rec["line"])
                yield rec
                continue
            if type(item) is RowError:
                yield _unscored(item.id, item.line, item.error)
                continue
            data, line = item.data, item.line
            rec: dict[str, Any] = {}
            if first:
                rec["fields"] = [str(k) for k in data]
                first = False
            raw = data.get(id_field)
            if id_field in data:
                rec["id_present"] = True
            if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
                what = given(data, id_field)
                yield {**rec, **_unscored(None, line, f"{prefix}{line}: field '{id_field}' must be a non-empty string, {what}. Give every row a stable id.")}
                continue
            rid = str(raw)
            if rid in seen:
                yield {**rec, **_unscored(rid, line, f"{prefix}{line}: id {rid!r} repeats line {seen[rid]}. Ids must be unique; remove or rename the duplicate."),
                       "duplicate_of": seen[rid]}
                continue
            seen[rid] = line
            if gold_field not in data:
                yield {**rec, **_unscored(rid, line, f"{prefix}{line}: field '{gold_field}' is missing; every case needs a gold label. Add it or pass --gold-column.")}
                continue
            rec["gold_present"] = True
            g, problem = label_value(data[gold_field])
            if problem or g is None:
                why = problem or ("is null" if data[gold_field] is None else f"is blank ({data[gold_field]!r})")
                yield {**rec, **_unscored(rid, line, f"{prefix}{line}: gold label {why}; every case needs an adjudicated gold label. Adjudicate it or remove the row.")}
                continue
            warnings = []
            if pred_field in data:
                rec["pred_present"] = True
                p, problem = label_value(data[pred_field])
                if problem:
                    warnings.append(f"{prefix}{line}: field '{pred_field}' {problem}; scored as no prediction (a miss when gold is {positive!r}).")
            else:
                p = None
                warnings.append(f"{prefix}{line}: no '{pred_field}' field; scored as no prediction (a miss when gold is {positive!r}).")
            out = {"id": rid, "line": line, "status": "scored", "gold": g, "pred": p,
                   "outcome": None if positive is None else (("tp" if p == positive else "fn") if g == positive else ("fp" if p == positive else "tn")),
                   **rec}
            if second_field is not None:
                if second_field in data:
                    out["second_present"] = True
                s2, problem = label_value(data.get(second_field))
                if problem:
                    warnings.append(f"{prefix}{line}: field '{second_field}' {problem}; the case is scored but left out of the annotator agreement.")
                out["second_gold"] = s2
            if warnings:
                out["warnings"] = warnings
            yield out

    def example_entry(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        if record.get("status") != "scored":
            return None
        return {"id": record["id"], "line": record["line"], "gold": record["gold"], "pred": record.get("pred"),
                "outcome": record.get("outcome")}

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        return LabelsPartial(keep_cases)

    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
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
            "scorer": {"name": self.name, "version": self.version},
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
