"""The data-answer judge's rules behind the :class:`goldeval.scoring.protocol.Scorer` interface
(:class:`AnswerJudge`), and :func:`join_answer_files`, the joined rows it takes.

It wraps :func:`goldeval.answers.case.judge_case` and aggregates from mergeable partials whose results equal
:func:`goldeval.pipeline.files.judge_file`'s key for key (the tests compare them on the published sets).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from goldeval.answers.case import judge_case
from goldeval.answers.config import MATERIALS_KEY, AnswerConfig
from goldeval.answers.databases import case_database
from goldeval.answers.join import read_keyed_rows
from goldeval.answers.render import render_judge
from goldeval.io.reading import Row
from goldeval.scoring.protocol import MetricSpec, Option, Partial, Scorer, counter_merge
from goldeval.scoring.slices import NOT_A_CASE
from goldeval.verdict import CaseOutcome, pass_rate_class

__all__ = ["AnswerJudge", "join_answer_files"]


# ---------------------------------------------------------------------------------------------------------------
# the data-answer judge (rules)


class AnswerJudge(Scorer):
    """The rule-based data-answer judge: :func:`goldeval.answers.judge.judge_case` behind the Scorer interface.

    Rows are joined cases: ``{"id", "case": {...}, "case_line": int, "attempt": {...} | None, "attempt_line": int
    | None, "attempt_error": str | None}`` (:func:`join_answer_files` builds them from two files; the Spark
    engine by a join on id). A row failure (a malformed line of either file) is ``{"row_failure": {"line", "id",
    "error", "file"}}``. Records: ``CaseOutcome.to_dict()`` plus ``line``. Results: those of
    :func:`goldeval.pipeline.files.judge_file` without ``inputs`` and ``elapsed_sec`` (the caller adds them).
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
    slice_columns = ("n", "pass_rate", "match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong")
    report_kind = "answers"
    gate_families = ("answers",)
    inputs_as_hashes = ("llm_judge",)  # `goldeval llm-judge --out` names each input by its sha256
    result_names = ("llm_judge",)
    per_example_from_cases = "all"
    one_file_hint = ("it judges each case of a case file against its answer in an answer file. Run `goldeval judge "
                     "CASES ANSWERS --db DB` (or --db-dir DIR), or goldeval.judge_file(cases, answers, config=...) "
                     "in Python.")

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

        return {k: v for k, v in record.items() if k != "line" and k != MATERIALS_KEY and k != "reused"}

    def case_record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        entry = self.example_entry(record)
        return entry if entry is not None else dict(record)

    def render_summary(self, results: Mapping[str, Any], console: Any) -> None:
        """One line per case kept in ``per_example`` (verdict, confidence, why), a line counting the cases not kept
        (a run that streamed them), and the pass-rate line with the counts beside it."""
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

        return AnswerConfig(db=config["db"], timeout_s=config["timeout_s"], max_rows=config["max_rows"],
                            engine=config["engine"], check_canonical=config["check_canonical"],
                            sql_dialect=config.get("sql_dialect"), db_dir=config.get("db_dir"),
                            allow_privileged_role=bool(config.get("allow_privileged_role")),
                            max_result_bytes=config.get("max_result_bytes", 256_000_000))

    def slice_value(self, data: Mapping[str, Any], field: str) -> Any:
        """The slice field of a joined row's case (``difficulty``, ``db``), else of its attempt; a row failure (a
        malformed line, no case) is in no slice (:data:`goldeval.scoring.slices.NOT_A_CASE`)."""
        if "row_failure" in data:
            return NOT_A_CASE
        for side in ("case", "attempt"):
            part = data.get(side)
            if isinstance(part, Mapping) and part.get(field) is not None:
                return part[field]
        return None

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Records of joined rows (dicts, or :class:`~goldeval.io.reading.Row` items holding them): a row failure's
        ``{"status": "row_failure", "line", "row_failure"}``; a reused case's record as it was (``reused``); else
        the case judged (:func:`goldeval.answers.judge.judge_case`), on the database its ``db`` names under
        ``db_dir`` when it names one."""

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


    failures: list[dict[str, Any]] = []
    cname, aname = Path(cases_path).name, Path(attempts_path).name
    cases, order = read_keyed_rows(cases_path, cname, failures)
    attempts, _ = read_keyed_rows(attempts_path, aname, failures)
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
