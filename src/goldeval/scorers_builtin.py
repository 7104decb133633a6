"""The built-in scorers behind the :class:`goldeval.scorers.Scorer` interface: labels and the judge (token F1 lives
with its row rule in :mod:`goldeval.freetext_score`, and is re-exported here).

Each wraps the scorer module's own per-row function (the labels row rules, ``answers.judge.judge_case``) and
aggregates from mergeable partials whose results equal today's functions' (``score_label_rows``, ``judge_file``)
key for key: the tests compare them on the published sets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from goldeval.errors import InputError, given
from goldeval.freetext_score import TokenF1
from goldeval.scorers import MetricSpec, Option, Partial, Reused, Scorer, counter_merge, failure_entry, numbered

__all__ = ["TokenF1", "Labels", "AnswerJudge", "join_answer_files"]

def _unscored(rid: str | None, line: int, error: str) -> dict[str, Any]:
    return {"id": rid, "line": line, "status": "unscored", "error": error}


# ---------------------------------------------------------------------------------------------------------------
# labels


class Labels(Scorer):
    """Labels for one positive label: :func:`goldeval.labels.score_label_rows` behind the Scorer interface.

    Records: ``{"id", "line", "status": "scored", "gold", "pred", "outcome", "second_gold"?, "warnings"?}`` or
    ``{"id", "line", "status": "unscored", "error"}``. The state is the (gold, pred) pair counts, so any split of
    the rows gives the same precision, recall, missed and kappa. Results: those of ``score_label_rows``.
    """

    name = "labels"
    version = "1"
    per_example_from_cases = None  # an entry is {id, line, gold, pred, outcome}; the record holds more
    options = {
        "positive": Option(None, str, "the positive label, compared as text (a label 1 is the string '1')"),
        "id_field": Option("id", str, "field or column with the case id"),
        "gold_field": Option("gold", str, "field or column with the gold label"),
        "pred_field": Option("pred", str, "field or column with the predicted label"),
        "second_gold_field": Option(None, str, "field or column with a second annotator's label (agreement)"),
        "require_positive": Option(True, bool, "refuse a positive label that occurs in neither gold nor pred"),
    }
    headline = "f1"
    report_kind = "labels"

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        from goldeval.io import RowError
        from goldeval.labels import read_label_row

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
        return {"id": record["id"], "line": record["line"], "gold": record["gold"], "pred": record.get("pred"),
                "outcome": record.get("outcome")}

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        return _LabelsPartial(keep_cases)

    def render_summary(self, results: Mapping[str, Any], console: Any) -> None:
        """Precision, recall, missed, F1, kappa and counts; the per-label table; annotator agreement."""
        from goldeval.report.labels import render_labels

        render_labels(dict(results), console)

    def score_path(self, path: str, config: Mapping[str, Any], *, recorder: Any = None, keep_cases: bool = True,
                   on_examples: Any = None, on_example_lines: Any = None) -> dict[str, Any]:
        """The labels batch kernel (:func:`goldeval.labelfile.score_label_path`): ids read first (repeats kept as
        hashes), then one pass into the pair counts, plain JSONL rows counted by the C reader with no dict per row.
        No row scored is refused (InputError, with the first failure); the results carry ``dataset``."""
        from goldeval.labelfile import score_label_path

        return score_label_path(
            path, positive=config["positive"], id_field=config["id_field"], gold_field=config["gold_field"],
            pred_field=config["pred_field"], second_gold_field=config["second_gold_field"],
            require_positive=config["require_positive"], recorder=recorder, refuse_empty=True,
            keep_per_example=keep_cases, on_examples=on_examples, on_example_lines=on_example_lines)

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
        from goldeval.agreement import kappa_from_pairs
        from goldeval.labels import (
            UNDEFINED_REASONS, _loose, _matrix_from_pairs, _no_column, _table_from_pairs, labels_seen, score_from_pairs,
        )

        assert isinstance(partial, _LabelsPartial)
        p = partial
        src = config.get("source") or ""
        where = src if src and src != "rows" else "labels"
        positive, second_field = config["positive"], config["second_gold_field"]
        n_scored = sum(p.counts.values())
        if p.fields is not None and not p.id_present:
            raise InputError(_no_column(where, config["id_field"], p.fields, "the case id column with --id-column"))
        if n_scored and not p.pred_present:
            raise InputError(_no_column(where, config["pred_field"], p.fields, "the prediction column with --pred-column"))
        if p.n_rows and not p.gold_present and p.fields is not None:
            raise InputError(_no_column(where, config["gold_field"], p.fields, "the gold column with --gold-column"))
        if second_field is not None and n_scored and not p.second_present and p.fresh:
            raise InputError(_no_column(where, second_field, p.fields, "the second annotator's column with --second-gold-column"))
        counts = p.counts
        if positive is None:
            seen = ", ".join(repr(str(s)) for s in labels_seen(counts))
            raise InputError(f"positive label: none given; labels seen: {seen}. Pass --positive LABEL (goldeval labels; "
                             "-O positive=LABEL on goldeval score --scorer labels) or set positive in the gates file.")
        # the message names the file, not an option: `labels` takes --positive, `score --scorer labels` -O positive=
        score = score_from_pairs(counts, positive=positive, require_positive=config["require_positive"],
                                 where=where)
        warnings = sorted(p.warnings, key=lambda w: w["line"])
        key = _loose(positive)
        for side, firsts in (("gold", p.gold_first), ("pred", p.pred_first)):
            for label in sorted((x for x in firsts if x != positive and _loose(x) == key), key=str):
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
            "per_label": [r.to_dict() for r in _table_from_pairs(counts)],
            "confusion_matrix": _matrix_from_pairs(counts).to_dict(),
            "per_example": p.per_example,
            "disagreements": disagreements,
            "warnings": warnings,
            "failures": sorted(p.failures, key=lambda f: f["line"]),
        }


class _LabelsPartial(Partial):
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
        assert isinstance(other, _LabelsPartial)
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


# ---------------------------------------------------------------------------------------------------------------
# the data-answer judge (rules)


class AnswerJudge(Scorer):
    """The rule-based data-answer judge: :func:`goldeval.answers.judge.judge_case` behind the Scorer interface.

    Rows are joined cases: ``{"id", "case": {...}, "case_line": int, "attempt": {...} | None, "attempt_line": int
    | None, "attempt_error": str | None}`` (:func:`join_answer_files` builds them from two files; the Spark
    engine by a join on id). A row failure (a malformed line of either file) is ``{"row_failure": {"line", "id",
    "error", "file"}}``. Records: ``CaseOutcome.to_dict()`` plus ``line``. Results: those of
    :func:`goldeval.answers.judge.judge_file` without ``inputs`` and ``elapsed_sec`` (the caller adds them).
    """

    name = "answer_judge"
    version = "1.6.0"  # = goldeval.answers.JUDGE_VERSION (test_answer_judge_equals_judge_file pins them equal)
    options = {
        "db": Option(None, str, "database to re-execute final queries on: a SQLite / DuckDB file or a postgresql:// URL"),
        "timeout_s": Option(5.0, float, "time limit of one query, in seconds"),
        "max_rows": Option(1_000_000, int, "most rows one query may return"),
        "check_canonical": Option(True, bool, "re-execute each golden's canonical query to doubt the golden"),
        "engine": Option(None, str, "database engine of --db: sqlite or duckdb (default: by the file)"),
        "sql_dialect": Option(None, str, "SQL dialect the final queries are written in"),
        "db_dir": Option(None, str, "directory of the databases cases name with \"db\""),
        "cases_name": Option("cases", str, "name of the case file in messages"),
        "attempts_name": Option("attempts", str, "name of the attempt file in messages"),
        "keep_materials": Option(False, bool, "keep what the LLM stage needs for the undecided cases"),
        "max_result_bytes": Option(256_000_000, int, "most bytes one query's result may hold"),
    }
    metrics = {"pass_rate": MetricSpec("match / (match + no_match)")}
    headline = "pass_rate"
    report_kind = "answers"
    result_names = ("llm_judge",)
    per_example_from_cases = "all"

    def __init__(self, *, db: Any = None, databases: Any = None, answer: Any = None) -> None:
        #: An open database / DatabaseDir to judge on (and leave open) instead of opening the config's: the local
        #: judge opens a server database before the run is recorded (its identity keys the run).
        self.db, self.databases = db, databases
        #: The caller's AnswerConfig (with a PostgreSQL password given apart from the URL), used instead of one
        #: built from the options.
        self.answer = answer

    def example_entry(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """A case's ``per_example`` entry (every status): the outcome without ``line`` and the LLM materials."""
        if record.get("status") == "row_failure":
            return None
        from goldeval.spark_judge import MATERIALS_KEY

        return {k: v for k, v in record.items() if k != "line" and k != MATERIALS_KEY and k != "reused"}

    def case_record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        entry = self.example_entry(record)
        return entry if entry is not None else dict(record)

    def render_summary(self, results: Mapping[str, Any], console: Any) -> None:
        """One line per case kept in ``per_example`` (verdict, confidence, why), a line counting the cases not kept
        (a run that streamed them), and the pass-rate line with the counts beside it."""
        from goldeval.report.answers import render_judge

        shown = results.get("per_example")
        shown = shown if isinstance(shown, list) else []
        render_judge({**results, "per_example": shown}, console,
                     not_shown=max(0, int((results.get("aggregate") or {}).get("n", 0)) - len(shown)))

    def store_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in config.items() if k not in ("source", "cases_name", "attempts_name", "keep_materials")}
        if out.get("db") is not None:
            out["db"] = self.answer_config(config).db  # a PostgreSQL URL without its password
        if out.get("sql_dialect") is None:
            out.pop("sql_dialect", None)
        if out.get("db_dir") is None:
            out.pop("db_dir", None)
        return out

    def answer_config(self, config: Mapping[str, Any]) -> Any:
        if self.answer is not None:
            return self.answer
        from goldeval.answers.judge import AnswerConfig

        return AnswerConfig(db=config["db"], timeout_s=config["timeout_s"], max_rows=config["max_rows"],
                            engine=config["engine"], check_canonical=config["check_canonical"],
                            sql_dialect=config.get("sql_dialect"), db_dir=config.get("db_dir"),
                            allow_privileged_role=bool(config.get("allow_privileged_role")),
                            max_result_bytes=config.get("max_result_bytes", 256_000_000))

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Records of joined rows (dicts, or :class:`~goldeval.io.Row` items holding them): a row failure's
        ``{"status": "row_failure", "line", "row_failure"}``; a reused case's record as it was (``reused``); else
        the case judged (:func:`goldeval.answers.judge.judge_case`), on the database its ``db`` names under
        ``db_dir`` when it names one."""
        from goldeval.answers.batch import case_database
        from goldeval.answers.judge import judge_case
        from goldeval.io import Row
        from goldeval.verdict import CaseOutcome

        cfg = self.answer_config(config)
        cname, aname = config["cases_name"], config["attempts_name"]
        own_db, own_dir = self.db is None, self.databases is None
        db = cfg.open_database() if own_db else self.db
        databases = None
        try:
            databases = cfg.open_database_dir() if own_dir else self.databases
            for row in rows:
                if type(row) is Row:
                    row = row.data
                if "row_failure" in row:
                    yield {"status": "row_failure", "line": row["row_failure"]["line"], "row_failure": row["row_failure"]}
                    continue
                reused = row.get("reused")
                if reused is not None:
                    yield {**reused, "line": row.get("case_line", reused.get("line")), "reused": True}
                    continue
                cid, line, att = row["id"], row["case_line"], row.get("attempt")
                where = f"{cname}:{line} (id {cid!r})"
                case_db, why = case_database(row["case"], db, databases, where)
                if why is not None:
                    yield {**CaseOutcome(cid, "unscored", reason=why).to_dict(), "line": line}
                    continue
                if att is None and row.get("attempt_error"):
                    yield {**CaseOutcome(cid, "unscored", reason=row["attempt_error"]).to_dict(), "line": line}
                    continue
                a_where = f"{aname}:{row['attempt_line']} (id {cid!r})" if att is not None else ""
                result = judge_case(row["case"], att, db=case_db, config=cfg, where=where, attempt_where=a_where,
                                    materials=bool(config.get("keep_materials")))  # read below only then
                rec = {**result.outcome.to_dict(), "line": line}
                v = result.outcome.verdict
                if config.get("keep_materials") and v is not None and v.needs_human:
                    from goldeval.spark_judge import MATERIALS_KEY

                    model = (att or {}).get("model") or (att or {}).get("answer_model")
                    rec[MATERIALS_KEY] = {**result.materials, "_answer_model": model}
                yield rec
        finally:
            if own_db and db is not None:
                db.close()
            if own_dir and databases is not None:
                databases.close()

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        return _JudgePartial(keep_cases)

    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
        assert isinstance(partial, _JudgePartial)
        p = partial
        counts = {k: p.counts[k] for k in ("match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong")}
        decided = counts["match"] + counts["no_match"]
        agg: dict[str, Any] = {"pass_rate": counts["match"] / decided if decided else 0.0, "match": counts["match"],
                               "no_match": counts["no_match"], "decided": decided}
        for k in ("near_match", "needs_human", "unscored", "verified_wrong"):
            agg[k] = counts[k]
        agg.update({"n": p.n, "n_scored": p.n_scored, "n_failed": p.n - p.n_scored, "n_row_failures": len(p.failures)})
        agg["undefined"] = {"pass_rate": "nothing was decided: no case came out match or no_match"} if not decided else {}
        per_example = [{k: v for k, v in r.items() if k != "line"} for r in sorted(p.per_example, key=lambda r: r["line"])]
        out = {
            "scorer": {"name": self.name, "version": self.version},
            "config": self.answer_config(config).to_dict(),
            "aggregate": agg,
            "per_example": per_example,
            "failures": p.failures,
        }
        if config.get("keep_materials") and p.keep:  # what the local LLM stage sends (the undecided cases)
            out["llm_materials"] = [m for _, m in sorted(p.materials, key=lambda lm: lm[0])]
        return out


def _verdict_class(rec: Mapping[str, Any]) -> str:
    """The pass-rate class of one outcome, as :func:`goldeval.verdict.pass_rate` counts it (one accounting)."""
    from goldeval.verdict import pass_rate_class

    return pass_rate_class(rec)


class _JudgePartial(Partial):
    def __init__(self, keep_cases: bool) -> None:
        self.keep = keep_cases
        self.counts: Counter = Counter()
        self.n = self.n_scored = 0
        self.per_example: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.materials: list[tuple[int, dict[str, Any]]] = []  # (line, LLM materials) of the undecided, kept cases

    def add(self, rec: Mapping[str, Any]) -> None:
        if rec.get("status") == "row_failure":
            self.failures.append(dict(rec["row_failure"]))
            return
        self.n += 1
        self.n_scored += rec.get("status") == "scored"
        self.counts[_verdict_class(rec)] += 1
        if self.keep:
            from goldeval.spark_judge import MATERIALS_KEY

            self.per_example.append({k: v for k, v in rec.items() if k != MATERIALS_KEY and k != "reused"})
            m = rec.get(MATERIALS_KEY)
            if m is not None:
                self.materials.append((rec["line"], {k: v for k, v in m.items() if k != "_answer_model"}))

    def merge(self, other: Partial) -> None:
        assert isinstance(other, _JudgePartial)
        counter_merge(self.counts, other.counts)
        self.n += other.n
        self.n_scored += other.n_scored
        self.per_example += other.per_example
        self.failures += other.failures
        self.materials += other.materials


def join_answer_files(cases_path: str, attempts_path: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The joined rows :meth:`AnswerJudge.score_batch` takes, from a case file and an attempt file (JSONL), in
    case-file order, and the row failures of both files (``{"line", "id", "error", "file"}``), as
    :func:`goldeval.answers.judge.iter_judged` reads them.

    Raises:
        InputError: a file is missing, empty or not UTF-8.
    """
    from pathlib import Path

    from goldeval.answers.batch import _read_keyed

    failures: list[dict[str, Any]] = []
    cname, aname = Path(cases_path).name, Path(attempts_path).name
    cases, order = _read_keyed(cases_path, cname, failures)
    attempts, _ = _read_keyed(attempts_path, aname, failures)
    for aid, (line, _) in attempts.items():
        if aid not in cases:
            failures.append({"line": line, "id": aid, "error": f"{aname}:{line}: attempt {aid!r} has no case in {cname}.", "file": aname})
    attempt_errors = {f["id"]: f["error"] for f in failures if f.get("id") and f.get("file") == aname}
    rows = []
    for cid in order:
        line, case = cases[cid]
        att = attempts.get(cid)
        rows.append({"id": cid, "case": case, "case_line": line, "attempt": att[1] if att else None,
                     "attempt_line": att[0] if att else None, "attempt_error": attempt_errors.get(cid) if att is None else None})
    return rows, failures
