"""A scorer run over a whole file (or rows) in one call: :func:`score_file` / :func:`score_rows` (token F1) and
:func:`judge_file` / :func:`judge_answer_file` (the data-answer judge), the library's one-call entry points.

Each builds the domain's Scorer (:class:`goldeval.freetext.scorer.TokenF1`, :class:`goldeval.answers.scorer.AnswerJudge`)
and runs it on the local engine (:func:`goldeval.engines.local.run`: a first pass for repeated ids, chunks scored in
this process or on every core, the store written beside the scoring). Running an engine is pipeline work, so these
live here and the domain packages keep only their pure parts (the row rule, the joins, the summaries).

Free text: rows are ``{"id", "prediction", "reference"}`` with strings (whole note) or objects of section name → text
(sections; the whole note is then the pooled text). The output follows upstream Open-Scribe ``run_eval.py``:
``aggregate`` {``n``, ``n_failed``, ``elapsed_sec``, ``whole_note_f1_mean``, ``whole_note_precision_mean``,
``whole_note_recall_mean``} and ``per_example`` [{``id``, ``whole_note``: {``precision``, ``recall``, ``f1``}}],
plus what a user needs: the tokenizer, ``n_scored``, ``n_rows``, ``failures`` with line numbers, section scores.
As upstream, ``n`` counts the scored rows and failed rows are left out of the means (that is how the published
PriMock57 and ACI-Bench figures were computed); unlike upstream, every failure is listed with its line and reason.
Large files (≥ ``PARALLEL_MIN_ROWS`` rows) are scored on every core when ``workers`` is ``None`` (in one process
where token F1's compiled line kernel reads the file: faster there, see :func:`goldeval.engines.local.run`). With
``keep_per_example=False`` (what ``goldeval score`` does: the examples stream to ``--out`` and to the store) memory
does not grow with the file: means are exact running sums, repeated ids are found by a first pass (see
``goldeval.io.ids``).

Data answers: a case file judged against an attempt file, one case at a time, recorded and summarized (the
joins and the summary are :mod:`goldeval.answers.batch`'s).

Source: ``DESIGN.md`` "Data answers" and "Runs", goldeval; output keys of Open-Scribe ``eval/run_eval.py``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from goldeval.answers.batch import joined_rows
from goldeval.answers.config import AnswerConfig
from goldeval.answers.scorer import AnswerJudge
from goldeval.engines.local import PARALLEL_MIN_ROWS, run
from goldeval.freetext.scorer import TokenF1
from goldeval.freetext.tokens import Tokenizer, get_tokenizer
from goldeval.io.reading import check_input_file, count_rows, file_sha256
from goldeval.io.streams import display_name, input_sha256
from goldeval.scoring.slices import sliced

__all__ = ["PARALLEL_MIN_ROWS", "judge_answer_file", "judge_file", "score_file", "score_rows"]


def score_file(
    path: str | os.PathLike[str],
    *,
    prediction_field: str = "prediction",
    reference_field: str = "reference",
    id_field: str = "id",
    tokenizer: str | Tokenizer = "openscribe",
    workers: int | None = 1,
    recorder: Any = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    keep_per_example: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Token F1 of every row of a JSONL file: the results dict the ``goldeval score`` command writes.

    Memory does not grow with the rows when ``keep_per_example`` is false: the means are exact running sums
    (:class:`goldeval.scoring.sums.ExactSum`, equal to :func:`statistics.mean` to the last digit), ids are checked for
    repeats by a first pass that keeps only the hashes seen twice, and each example goes to ``on_example`` (a
    streaming writer) and to the recorder as it is scored. Only ``failures`` (one entry per row that could not be
    scored) is kept.

    Args:
        path: JSONL file, one ``{"id", <prediction_field>, <reference_field>}`` object per line, UTF-8.
            Each text field is a string (whole note) or an object of section name → text (sections).
        prediction_field, reference_field, id_field: Field names to read.
        tokenizer: Token rule name or object (default ``openscribe``, the published figures' rule).
        workers: Processes to score with (default 1). ``None``: automatic — one below ``PARALLEL_MIN_ROWS`` rows,
            else every core (what the CLI does), one where the compiled line kernel reads the file. More than one worker starts processes, so a script that asks for
            them needs the usual ``if __name__ == "__main__":`` guard (Python's multiprocessing rule). Capped at the
            number of cores.
        recorder: Run-store recorder (``previous()``, ``record(case)``, ``finish(results)``) or ``None``.
            Rows already recorded as scored are taken from it, not scored again. A ``record`` that also takes
            ``status=`` (as :class:`goldeval.Recorder`'s does) is given each scored row with ``status="scored"``;
            otherwise it is given ``{"status": "scored", **row}``.
        progress: Called with the number of rows just finished (for a progress bar).
        on_total: Called once with the number of lines in the file before scoring starts.
        keep_per_example: Keep every example in ``results["per_example"]`` (default). False: that key holds
            ``{"$streamed": true, "n": int, "ids_sha256": str}`` instead (the count of examples and the sha256 of the
            JSON array of their ids, in order, which the run store checks its cases against).
        on_example: Called with each ``per_example`` entry, in order, as soon as it is scored (e.g. the
            ``goldeval score --out`` writer); the entry must not be changed.

    Returns:
        ``{"scorer", "tokenizer", "config", "input", "aggregate", "per_example", "failures"}``. ``aggregate`` has
        ``n`` (= ``n_scored``, rows scored), ``n_failed``, ``n_rows``, ``elapsed_sec``, ``whole_note_f1_mean``,
        ``whole_note_precision_mean``, ``whole_note_recall_mean`` (macro-averages over scored rows, unrounded;
        ``null`` when no row could be scored, as upstream), ``tokenizer``, ``n_with_unreadable_text`` (scored rows
        holding some letters the rule could not read: they are scored on the rest and flagged ``unreadable``;
        under openscribe ``n_with_split_words`` counts those where a word was split at a non-ASCII letter, "Café" →
        caf, with ``first_split_word``),
        ``undefined`` (metric → reason, when no row could be scored), and for sectioned rows
        ``section_f1_mean`` (and precision/recall) with per-section means in ``sections``. ``per_example`` items:
        ``{"id", "line", "whole_note": {"precision", "recall", "f1"}, "tokens": {...}}`` (+ ``sections``,
        ``section_macro``). ``failures``: ``[{"line", "id", "error"}]`` — rows left out of the means.

    Raises:
        InputError: missing, empty or non-UTF-8 file; unknown tokenizer.

    Source:
        Output keys of Open-Scribe ``eval/run_eval.py``; scores as :func:`goldeval.token_f1`.
    """

    p = check_input_file(path)
    scorer = TokenF1()
    config = scorer.configure(prediction_field=prediction_field, reference_field=reference_field, id_field=id_field,
                              tokenizer=get_tokenizer(tokenizer).name, source=p.name)
    return run(scorer, p, config, workers=workers, recorder=recorder, progress=progress, on_total=on_total,
               on_example=on_example, keep_cases=keep_per_example)


def score_rows(
    rows: Iterable[dict[str, Any]],
    *,
    prediction_field: str = "prediction",
    reference_field: str = "reference",
    id_field: str = "id",
    tokenizer: str | Tokenizer = "openscribe",
    recorder: Any = None,
    keep_per_example: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """:func:`score_file` over in-memory rows (dicts); row numbers in messages count from 1 (``rows:N: ...``). Same
    output, with ``input`` ``{"path": None, "sha256": None, "workers": 1}``. (Ids are kept to find repeats: the rows
    are in memory already.)"""

    scorer = TokenF1()
    config = scorer.configure(prediction_field=prediction_field, reference_field=reference_field, id_field=id_field,
                              tokenizer=get_tokenizer(tokenizer).name, source="rows")
    return run(scorer, rows, config, recorder=recorder, on_example=on_example, keep_cases=keep_per_example,
               extra={"input": {"path": None, "sha256": None, "workers": 1}})


def judge_file(
    cases_path: str | Path,
    attempts_path: str | Path,
    *,
    config: AnswerConfig | None = None,
    recorder: Any = None,
    keep_materials: bool = False,
    db: Any = None,
    keep_per_example: bool = True,
    on_example: Any = None,
    on_total: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
    slice_by: str | None = None,
) -> dict[str, Any]:
    """Judge a case file against an attempt file; the results object every scorer writes.

    Runs the one Scorer interface (:class:`goldeval.answers.scorer.AnswerJudge`) on the local engine
    (:func:`goldeval.engines.local.run`) over :func:`goldeval.answers.batch.joined_rows`: cases streamed in file order, each joined with its
    attempt; a case the recorder's run already holds is reused, not judged again.

    Args:
        cases_path: JSONL of cases.
        attempts_path: JSONL of attempts.
        config: :class:`goldeval.answers.config.AnswerConfig`.
        recorder: Optional run-store recorder (``previous`` / ``record`` / ``finish``).
        keep_materials: Add ``"llm_materials"``: for every ``needs_human`` case, what an LLM judge needs (see
            :func:`goldeval.answers.batch.llm_materials`). Needs ``keep_per_example``.
        db: An open database to use (and leave open) instead of opening ``config.db``.
        keep_per_example: Keep every case in ``results["per_example"]`` (default). False: the cases stream to
            *on_example* (and to the store) and that key holds ``{"$streamed": true, "n", "ids_sha256", ...}``.
        on_example: Called with each ``per_example`` entry, in case-file order, as soon as it is judged.
        on_total: Called once, before the first case, with the number of rows of the case file (its non-blank
            lines for JSONL), for a progress display.
        progress: Called with 1 as each case is judged (or reused from a resumed run).
        slice_by: A case field (``difficulty``, ``db``): the aggregate per value of it too, under ``slices``
            (:func:`goldeval.scoring.slices.sliced`; each case's ``slice`` in its entry).

    Returns:
        ``{"scorer": {"name", "version"}, "config", "inputs", "aggregate": {"pass_rate", "match", "no_match",
        "decided", "near_match", "needs_human", "unscored", "verified_wrong", "n", "n_scored", "n_failed",
        "undefined"}, "per_example": [CaseOutcome.to_dict()...], "failures": [{"line", "id", "error"}],
        "elapsed_sec"}``. ``pass_rate = match / (match + no_match)``, unrounded.

    Raises:
        InputError: unreadable files or database.
    """

    check_input_file(cases_path)  # (the case file is named first when both are missing)
    check_input_file(attempts_path)
    cfg = config or AnswerConfig()
    start = time.perf_counter()
    own = db is None and cfg.db is not None
    db = cfg.open_database() if own else db
    databases = None
    try:
        # A database file is hashed once it is open: removed or replaced later in the run, it is still the file the
        # queries read (the connection holds it open), and the run records that file's sha256.
        db_sha256 = file_sha256(cfg.db) if cfg.db and db is not None and not hasattr(db, "identity") else None
        databases = cfg.open_database_dir()
        scorer: AnswerJudge = AnswerJudge(db=db, databases=databases, answer=cfg)
        if slice_by is not None:
            scorer = sliced(scorer, slice_by)  # type: ignore[assignment]  # (a subclass of AnswerJudge)
        sconfig = scorer.configure(db=cfg.db, timeout_s=cfg.timeout_s, max_rows=cfg.max_rows, check_canonical=cfg.check_canonical,
                                   engine=cfg.engine, sql_dialect=cfg.sql_dialect, db_dir=cfg.db_dir,
                                   max_result_bytes=cfg.max_result_bytes,
                                   cases_name=Path(cases_path).name, attempts_name=Path(attempts_path).name,
                                   keep_materials=keep_materials and keep_per_example)
        inputs: dict[str, Any] = {
            "cases": display_name(cases_path), "cases_sha256": input_sha256(cases_path),
            "attempts": display_name(attempts_path), "attempts_sha256": input_sha256(attempts_path),
            "db": cfg.db, "db_sha256": db_sha256,
        }
        previous = dict(recorder.previous()) if recorder is not None else {}
        if on_total is not None:
            on_total(count_rows(cases_path))
        each = on_example
        if progress is not None:  # (the engine reports a chunk of 500 rows at once: a judged case is slower)

            def each(entry: dict[str, Any]) -> None:
                if on_example is not None:
                    on_example(entry)
                progress(1)

        out = run(scorer, joined_rows(cases_path, attempts_path, previous=previous), sconfig, recorder=recorder,
                  keep_cases=keep_per_example, on_example=each, unique_ids=True, extra={"inputs": inputs},
                  finish=False)
        identity = db.identity() if db is not None and hasattr(db, "identity") else None
        used = dict(databases.opened_files) if databases is not None else None
    finally:
        if own and db is not None:
            db.close()
        if databases is not None:
            databases.close()
    materials = out.pop("llm_materials", None)
    out["elapsed_sec"] = time.perf_counter() - start
    if identity is not None:  # a server database: its identity stands in for a file's sha256
        inputs["db_identity"] = identity
    if used is not None:  # --db-dir: every database a case named and the run opened, with its sha256
        inputs["db_dir"] = cfg.db_dir
        inputs["databases"] = {name: {"path": p, "sha256": sha} for name, (p, sha) in used.items()}
    if keep_materials:
        out["llm_materials"] = materials or []
    if recorder is not None:
        recorder.finish(out)
    return out


def judge_answer_file(cases_path: str | Path, attempts_path: str | Path, **kwargs: Any) -> dict[str, Any]:
    """Same as :func:`judge_file` (the name ``goldeval`` exports)."""
    return judge_file(cases_path, attempts_path, **kwargs)
