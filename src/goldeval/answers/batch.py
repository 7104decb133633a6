"""The batch's domain part: a case file joined with an attempt file (:func:`joined_rows`), judged case by case
(:func:`iter_judged`), summarized (:func:`summarize`), and what an LLM judge needs (:func:`llm_materials`).

Running the judge over the files on the local engine, recorded (``judge_file``, ``judge_answer_file``), is pipeline
work: :mod:`goldeval.pipeline.files`. The old paths ``goldeval.answers.batch.judge_file`` / ``judge_answer_file``
still work, with a DeprecationWarning.

Source: ``DESIGN.md`` "Data answers" and "Runs", goldeval.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from goldeval._compat import moved_attribute
from goldeval.answers.case import judge_case, outcome_from_dict
from goldeval.answers.config import AnswerConfig, CaseResult
from goldeval.answers.databases import case_database
from goldeval.answers.join import AttemptIndex, read_keyed_rows, repeated_id_hashes
from goldeval.io.reading import (
    RowError,
    check_ids,
    check_input_file,
    read_rows,
)
from goldeval.verdict import CaseOutcome, pass_rate

__all__ = ["case_database", "iter_judged", "joined_rows", "llm_materials", "summarize"]


def __getattr__(name: str) -> Any:
    # the deprecation path of judge_file / judge_answer_file, which run the local engine and so moved up a layer to
    # goldeval.pipeline.files (see goldeval._compat.moved_attribute)
    return moved_attribute(__name__, name)


def joined_rows(cases_path: str | Path, attempts_path: str | Path, *,
                previous: Mapping[str, Mapping[str, Any]] | None = None) -> Iterator[dict[str, Any]]:
    """The rows :class:`goldeval.answers.scorer.AnswerJudge` scores, streamed: each case of the case file, in
    order, joined by id with its attempt; then the unusable rows. The same rows, failures and order as
    :func:`iter_judged` reads them.

    Yields:
        ``{"id", "case", "case_line", "attempt", "attempt_line", "attempt_error"}`` per case;
        ``{"reused": record, "case_line", "case"}`` for a case *previous* (a resumed run's cases) already holds, scored or
        unscored; ``{"row_failure": {"line", "id", "error", "file"}}`` for each row of either file that cannot be
        used (the case file's as they come; then the attempt file's, and its attempts without a case).

    Memory: about 25 bytes an attempt (:class:`goldeval.answers.join.AttemptIndex`: id hashes, byte offsets, lines
    of a JSONL attempt file; CSV and Parquet attempts are kept) and the few ids whose hash occurs twice in a file
    (:func:`goldeval.answers.join.repeated_id_hashes`); no case, case id or attempt is kept.

    Raises:
        InputError: a file is missing, empty or not UTF-8.
    """

    cname, aname = Path(cases_path).name, Path(attempts_path).name
    check_input_file(cases_path)
    attempt_failures: list[dict[str, Any]] = []
    attempts = AttemptIndex(attempts_path, attempt_failures)
    attempt_errors = {f["id"]: f["error"] for f in attempt_failures if f.get("id")}
    previous = previous or {}
    try:
        for item in check_ids(read_rows(cases_path, id_field="id"), file_name=cname, repeated=repeated_id_hashes(cases_path)):
            if isinstance(item, RowError):
                yield {"row_failure": {"line": item.line, "id": item.id, "error": item.error, "file": cname}}
                continue
            cid = str(item.data["id"])
            att = attempts.find(cid)  # (a case's attempt is used even when the case is reused)
            prev = previous.get(cid)
            if prev is not None and prev.get("status") in ("scored", "unscored"):
                yield {"reused": prev, "case_line": item.line, "case": item.data}
                continue
            yield {"id": cid, "case": item.data, "case_line": item.line, "attempt": att[1] if att else None,
                   "attempt_line": att[0] if att else None, "attempt_error": attempt_errors.get(cid) if att is None else None}
        for f in attempt_failures:
            yield {"row_failure": f}
        for line, aid in attempts.unused():
            yield {"row_failure": {"line": line, "id": aid, "error": f"{aname}:{line}: attempt {aid!r} has no case in {cname}.",
                                   "file": aname}}
    finally:
        attempts.close()


def iter_judged(
    cases_path: str | Path,
    attempts_path: str | Path,
    *,
    config: AnswerConfig | None = None,
    recorder: Any = None,
    failures: list[dict[str, Any]] | None = None,
    db: Any = None,
    databases: Any = None,
) -> Iterator[CaseResult]:
    """Judge every case of a case file against the attempt with the same id, one :class:`CaseResult` at a time.

    Args:
        cases_path: JSONL of cases (see :func:`judge_answer` for the golden's shape).
        attempts_path: JSONL of attempts ``{"id", "final_query"?, "columns"?, "rows"?, "text"?}``.
        config: :class:`AnswerConfig` (``db`` to re-execute queries read-only).
        recorder: Optional run-store recorder: cases in ``recorder.previous()`` are reused, not redone; each
            finished case is passed to ``recorder.record``. ``finish`` is left to :func:`judge_file`.
        failures: A list to which unusable rows of either file are appended (``{"line", "id", "error", "file"}``).
        db: An open database to use (and leave open) instead of opening ``config.db``.
        databases: An open :class:`~goldeval.answers.databases.DatabaseDir` to use (and leave open) instead of
            ``config.db_dir``'s. A case with ``"db": NAME`` is judged on that database (opened once, reused).

    Raises:
        InputError: a file is missing, empty or not UTF-8; the database cannot be opened.
    """
    cfg = config or AnswerConfig()
    fails = failures if failures is not None else []
    cases, order = read_keyed_rows(cases_path, Path(cases_path).name, fails)
    attempts, _ = read_keyed_rows(attempts_path, Path(attempts_path).name, fails)
    for aid, (line, _) in attempts.items():
        if aid not in cases:
            fails.append({"line": line, "id": aid, "error": f"{Path(attempts_path).name}:{line}: attempt {aid!r} has no case in {Path(cases_path).name}.",
                          "file": Path(attempts_path).name})
    attempt_errors = {f["id"]: f["error"] for f in fails if f.get("id") and f.get("file") == Path(attempts_path).name}
    previous = dict(recorder.previous()) if recorder is not None else {}
    own = db is None
    if own:
        db = cfg.open_database()
    own_dir = databases is None
    try:
        if own_dir:
            databases = cfg.open_database_dir()
        for cid in order:
            line, case = cases[cid]
            if cid in previous and previous[cid].get("status") in ("scored", "unscored"):
                yield CaseResult(outcome_from_dict(previous[cid]), {"id": cid, "reused": True})
                continue
            att = attempts.get(cid)
            where = f"{Path(cases_path).name}:{line} (id {cid!r})"
            case_db, why = case_database(case, db, databases, where)
            if why is not None:
                result = CaseResult(CaseOutcome(cid, "unscored", reason=why), {"id": cid})
            elif att is None and cid in attempt_errors:
                result = CaseResult(CaseOutcome(cid, "unscored", reason=attempt_errors[cid]), {"id": cid})
            else:
                a_where = f"{Path(attempts_path).name}:{att[0]} (id {cid!r})" if att else ""
                result = judge_case(case, att[1] if att else None, db=case_db, config=cfg, where=where, attempt_where=a_where)
            if recorder is not None:
                recorder.record(result.outcome.to_dict())
            yield result
    finally:
        if own and db is not None:
            db.close()
        if own_dir and databases is not None:
            databases.close()


def summarize(outcomes: Iterable[CaseOutcome], failures: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The ``aggregate`` block: ``pass_rate`` and the PassRate counts, ``n``, ``n_scored``, ``n_failed``, ``undefined``."""
    outs = list(outcomes)
    pr = pass_rate(outs)
    n_scored = sum(1 for o in outs if o.status == "scored")
    agg: dict[str, Any] = {"pass_rate": pr.rate}
    agg.update({k: v for k, v in pr.to_dict().items() if k not in ("rate", "undefined")})
    agg.update({"n": len(outs), "n_scored": n_scored, "n_failed": len(outs) - n_scored, "n_row_failures": len(failures)})
    agg["undefined"] = {"pass_rate": "nothing was decided: no case came out match or no_match"} if pr.undefined else {}
    return agg


def llm_materials(
    cases_path: str | Path,
    attempts_path: str | Path,
    *,
    config: AnswerConfig | None = None,
    only_undecided: bool = True,
) -> list[dict[str, Any]]:
    """Per case, the rule outcome plus what an LLM judge needs to decide it.

    Returns:
        ``[{"id", "rule": CaseOutcome.to_dict(), "question", "golden", "prediction": {"columns", "rows" (first 200),
        "row_count", "rows_truncated", "source": "executed" | "reported" | "text"}, "text", "final_query", "rubric",
        "must_not_use_prose", "breakdown"}]`` — for ``needs_human`` cases only unless *only_undecided* is False.
        The rule's verdict stays in ``rule`` so that rule/LLM agreement can be measured.
    """
    out = []
    for r in iter_judged(cases_path, attempts_path, config=config):
        v = r.outcome.verdict
        if only_undecided and (v is None or not v.needs_human):
            continue
        out.append(r.materials)
    return out

