"""The labels scorer behind the :class:`goldeval.scoring.protocol.Scorer` interface (:class:`Labels`).

It wraps the labels row rules (:mod:`goldeval.labels.metrics`) and aggregates from mergeable partials whose results
equal :func:`goldeval.labels.reader.score_label_rows`'s key for key: the tests compare them on the published sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from goldeval.errors import InputError, given
from goldeval.io.reading import RowError
from goldeval.labels.aggregate import LabelsPartial, label_results
from goldeval.labels.metrics import (
    SCORER_NAME,
    SCORER_VERSION,
    read_label_row,
)
from goldeval.labels.reader import score_label_path
from goldeval.labels.render import render_labels
from goldeval.scoring.protocol import (
    Option,
    Partial,
    Reused,
    Scorer,
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

    name = SCORER_NAME
    version = SCORER_VERSION
    per_example_from_cases = None  # an entry is {id, line, gold, pred, outcome}; the record holds more
    per_example_keys = ("id", "line", "gold", "pred", "outcome")
    options = {
        "positive": Option(None, str, "the positive label, compared as text (a label 1 is the string '1')"),
        "id_field": Option("id", str, "field or column with the case id"),
        "gold_field": Option("gold", str, "field or column with the gold label"),
        "pred_field": Option("pred", str, "field or column with the predicted label"),
        "second_gold_field": Option(None, str, "field or column with a second annotator's label (agreement)"),
        "require_positive": Option(True, bool, "refuse a positive label that occurs in neither gold nor pred"),
    }
    headline = "f1"
    slice_columns = ("n", "n_scored", "gold_positives", "precision", "recall", "missed_per_100", "f1")
    report_kind = "labels"
    gate_families = ("labels",)

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        src = config.get("source") or ""
        prefix = f"{src}:" if src and src != "rows" else "line "
        id_field, gold_field, pred_field = config["id_field"], config["gold_field"], config["pred_field"]
        second_field, positive = config["second_gold_field"], config["positive"]
        seen: dict[str, int] = {}
        first = True
        for item in numbered(rows, src or "rows"):
            if type(item) is Reused:
                rec: dict[str, Any] = dict(item.record)
                seen.setdefault(rec["id"], rec["line"])
                yield rec
                continue
            if type(item) is RowError:
                yield _unscored(item.id, item.line, item.error)
                continue
            data, line = item.data, item.line
            rec = {}
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
            g, p, s2, error, warnings = read_label_row(data, prefix, line, gold_field=gold_field, pred_field=pred_field,
                                                       second_gold_field=second_field, positive=positive)
            if error is not None:
                if gold_field in data:
                    rec["gold_present"] = True
                yield {**rec, **_unscored(rid, line, error)}
                continue
            rec["gold_present"] = True
            if pred_field in data:
                rec["pred_present"] = True
            out = {"id": rid, "line": line, "status": "scored", "gold": g, "pred": p,
                   "outcome": None if positive is None else (("tp" if p == positive else "fn") if g == positive else ("fp" if p == positive else "tn")),
                   **rec}
            if second_field is not None:
                if second_field in data:
                    out["second_present"] = True
                out["second_gold"] = s2
            if warnings:
                out["warnings"] = warnings
            yield out

    def example_entry(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        if record.get("status") != "scored":
            return None
        return {k: record.get(k) for k in self.per_example_keys}  # (a scored record has its id, line and gold)

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        return LabelsPartial(keep_cases)

    def render_summary(self, results: Mapping[str, Any], console: Any) -> None:
        """Precision, recall, missed, F1, kappa and counts; the per-label table; annotator agreement."""
        render_labels(dict(results), console)

    def score_path(self, path: str, config: Mapping[str, Any], *, recorder: Any = None, keep_cases: bool = True,
                   on_examples: Any = None, on_example_lines: Any = None, on_total: Any = None,
                   progress: Any = None) -> dict[str, Any]:
        """The labels batch kernel (:func:`goldeval.labels.reader.score_label_path`): ids read first (repeats kept as
        hashes), then one pass into the pair counts, plain JSONL rows counted by the C reader with no dict per row.
        No row scored is refused (InputError, with the first failure); the results carry ``dataset``."""
        return score_label_path(
            path, positive=config["positive"], id_field=config["id_field"], gold_field=config["gold_field"],
            pred_field=config["pred_field"], second_gold_field=config["second_gold_field"],
            require_positive=config["require_positive"], recorder=recorder, refuse_empty=True,
            keep_per_example=keep_cases, on_examples=on_examples, on_example_lines=on_example_lines, on_total=on_total,
            progress=progress)

    def results_head(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``scorer`` and ``positive``: the first keys of a labels results file."""
        return {"scorer": {"name": self.name, "version": self.version}, "positive": config["positive"]}

    def check_run_config(self, config: Mapping[str, Any]) -> None:
        """No positive label: refused before anything is read or recorded (``score`` has no --positive option)."""
        if config.get("positive") is None:
            raise InputError("score --scorer labels: no positive label given. Pass -O positive=LABEL (e.g. -O positive=escalate), "
                             "or --gates with a definition of done that sets positive = \"LABEL\" (or use goldeval labels FILE "
                             "--positive LABEL).")

    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
        return label_results(partial, config)

    def slice_config(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        """A slice may legitimately hold no positive (the whole run is checked for one): precision and recall are
        then undefined on it, never an error."""
        return {**config, "require_positive": False}
