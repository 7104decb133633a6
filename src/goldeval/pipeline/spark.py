"""Spark orchestration of a run (``--engine spark``): the driver reads the input with Spark, scores it on the
executors, aggregates exactly from one partial state per partition, records each case as it streams back partition
by partition (never all rows at once), gates, and writes the results; ``per_case`` writes the per-case DataFrame as
Parquet (for ``goldeval runs import``). A run that keeps no case (``--no-store``, no ``per_case``) on a local JSONL
file with a ``local[...]`` master folds each task's byte range where it is scored
(:func:`goldeval.engines.spark.fold_path`): no per-case DataFrame is built. The data-answer judge runs its rules on the executors and the LLM stage on
the driver. A Spark run is not resumable (a re-run is a new run; ``runs import`` is idempotent).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from goldeval.errors import InputError
from goldeval.pipeline.gating import apply_definition, check_slice_gates, hold_finish_for_gates, load_definition
from goldeval.pipeline.recording import RunRecording
from goldeval.pipeline.result import Evaluation, Observer
from goldeval.answers.judge import AnswerConfig
from goldeval.answers.judge import JUDGE_NAME
from goldeval.answers.judge import JUDGE_VERSION
from goldeval.engines import spark as gs
from goldeval.engines import spark_judge
from goldeval.io.outputs import check_outputs
from goldeval.io.outputs import sqlite_files
from goldeval.io.reading import file_sha256
from goldeval.io.resultsfile import write_results
from goldeval.llm.options import cache_files
from goldeval.llm.options import judge_config
from goldeval.pipeline.llm_stage import refuse_answering_model
from goldeval.runs.recorder import rubric_text
from goldeval.scoring.registry import get_scorer
from goldeval.scoring.registry import with_extra
from goldeval.scoring.slices import sliced

__all__ = ["judge_on_spark", "score_on_spark"]


def _write(results: dict[str, Any], out: str | None, out_format: str) -> None:
    if out:
        write_results(results, out, out_format)


def score_on_spark(scorer_name: str, file: str, options: dict[str, Any], *, master: str, per_case: str | None,
                   out: str | None, gates: str | os.PathLike[str] | None, recording: RunRecording,
                   observer: Observer | None = None, guard: Mapping[str, Any] | None = None,
                   out_format: str = "json", slice_by: str | None = None) -> Evaluation:
    """Score *file* with the scorer *scorer_name* on Spark (see the module docstring).

    Args:
        scorer_name: The scorer. file: Any path Spark reads. options: The scorer's options.
        master: The Spark master (``local[N]``, ``spark://host:7077``…). per_case: Parquet path for the per-case
            DataFrame (must not exist). out, out_format: The results file (``jsonl`` writes the results, which hold
            no ``per_example``, as one line). gates: A definition of done. recording: The run's recording policy.
        observer: Hooks (note, summary, gate report). guard: More outputs to check before any work.
        slice_by: A case field: every metric per value of it too (``results["slices"]``), folded on the executors
            from the same partials as the whole (:func:`goldeval.scoring.slices.sliced`).

    Returns:
        An :class:`~goldeval.pipeline.result.Evaluation` (``problem`` when no row could be scored).

    Raises:
        InputError: bad input (an output over an input, an existing ``per_case``, a bad gates file, a scorer's
            option). JudgeError / StoreError as the run meets them.
    """

    observer = observer if observer is not None else Observer()
    local_file = os.path.isfile(file)
    check_outputs({"--out": out, "--per-case": per_case, **(guard or {})},
                  {"FILE": file if local_file else None, "--gates": gates, "--store": recording.files()})
    scorer = get_scorer(scorer_name)
    if scorer.one_file_hint is not None:
        raise InputError(f"the {scorer.name} scorer does not score one file's rows: {scorer.one_file_hint}")
    config = scorer.configure(**options, source=os.path.basename(file.rstrip("/")))
    definition = load_definition(gates, scorer=scorer.name)
    check_slice_gates(definition, slice_by)
    if slice_by is not None:
        scorer = sliced(scorer, slice_by)
    if per_case is not None and os.path.exists(per_case):
        raise InputError(f"--per-case {per_case}: already exists; Spark writes a folder there. Choose a new path or remove it.")
    t0 = time.perf_counter()
    # No case is kept (no store, no --per-case): each task folds its byte range into one partial (gs.fold_path).
    # The driver's read of the file (its ranges, its sha256, whether an id repeats: gs.fold_plan) runs in a thread
    # while this one starts the session (a JVM and its context: seconds, mostly waiting), so the two overlap.
    # Else the per-case DataFrame, which the store reads.
    folded = None
    fold = recording.no_store and per_case is None and gs.foldable(master, file)
    if fold:
        hasher = hashlib.sha256()
        cancel = threading.Event()
        with ThreadPoolExecutor(1, thread_name_prefix="goldeval-fold-plan") as pool:
            planned = pool.submit(gs.fold_plan, file, scorer, cores=gs.master_cores(master), hasher=hasher,
                                  cancel=cancel, **config)
            try:
                spark = gs.session(master)  # (in this thread: pyspark sets its Ctrl-C handler in the main thread only)
            except BaseException:  # (Java missing, Ctrl-C: the read stops at its next block, not at the file's end)
                cancel.set()
                raise
            plan = planned.result()
    else:
        spark = gs.session(master)
    with gs.executor_failures(f"scoring {file}"):
        if fold and gs.foldable(spark, file):  # (an active session of another master is taken as it is)
            folded = gs.fold_path(spark, file, scorer, plan=plan, **config)
            sha256: str | None = hasher.hexdigest()
        else:
            cases = gs.score_path(spark, file, scorer, **config)
            sha256 = _sha256(file) if local_file else None
    extra = {"input": {"path": file, "sha256": sha256}}
    with gs.executor_failures(f"scoring {file}"), recording.recording(
        scorer_name=scorer.name, scorer_version=scorer.version, inputs={"predictions": file} if local_file else {},
        config=scorer.store_config(config), tokenizer=config.get("tokenizer"), dod=gates,
    ) as recorder:
        hold_finish_for_gates(recorder, definition)
        results = with_extra(scorer, folded if folded is not None else gs.aggregate(cases, scorer=scorer, config=config), extra)
        results["engine"]["master"] = master
        if "elapsed_sec" in results["aggregate"]:
            results["aggregate"]["elapsed_sec"] = time.perf_counter() - t0
        if recorder is not None:
            previous = recorder.previous()
            for rec in gs.iter_records(cases):
                if rec.get("id") is not None and "duplicate_of" not in rec and (previous.get(rec["id"]) or {}).get("status") != rec["status"]:
                    recorder.record(rec)
            recorder.finish(results)
        if per_case is not None:
            # the Parquet names the run its cases were recorded as: `runs import` of it then adds no second run
            (cases if recorder is None else gs.with_run(cases, recorder.run_id)).write.parquet(per_case)
        if recording.note:
            observer.recorded(recording.note)
        observer.summary(results, scorer)
        report = apply_definition(results, definition, recorder=recorder)
        if report is not None:
            observer.gates(report)
    recording.stamp(results)  # the top-level "run": {id, arm, store}, as a local run's results (absent without a store)
    _write(results, out, out_format)
    agg = results["aggregate"]
    problem = None
    if agg.get("n_scored", agg.get("n")) == 0:
        first = results["failures"][0]["error"] if results.get("failures") else "no rows"
        problem = f"no row of {file} could be scored ({agg.get('n_failed', 0)} failed); the first: {first}"
    return Evaluation(results, report, recording.run_id, recording.resumed, problem)


def _sha256(path: str) -> str:
    return file_sha256(path)


def judge_on_spark(cases: str, attempts: str, *, db: str | None, timeout_s: float, max_rows: int, check_canonical: bool,
                   master: str, per_case: str | None, out: str | None, gates: str | os.PathLike[str] | None,
                   recording: RunRecording, llm_opts: Any, observer: Observer | None = None,
                   guard: Mapping[str, Any] | None = None, out_format: str = "json",
                   max_result_bytes: int | None = None, slice_by: str | None = None) -> Evaluation:
    """Judge *attempts* against *cases* on Spark: the rules on the executors, the LLM stage (``llm_opts``) on the
    driver; see :mod:`goldeval.engines.spark_judge`.

    Args:
        cases, attempts: The case and attempt files (any path Spark reads). db: One SQLite / DuckDB file.
        timeout_s, max_rows, check_canonical, max_result_bytes: The rule judge's query bounds and checks.
        master, per_case, out, out_format, gates, recording, observer, guard: As :func:`score_on_spark`.
        slice_by: A case field: the verdicts' aggregate per value of it too (``results["slices"]``, after the LLM
            stage when there is one).
        llm_opts: :class:`~goldeval.llm.options.LlmOptions` (``model=None``: rules only).

    Returns:
        An :class:`~goldeval.pipeline.result.Evaluation`; after an LLM dry run, ``dry_run`` is set, nothing was
        recorded and ``results["llm_dry_run"]`` holds the count. ``problem`` when no case could be judged.

    Raises:
        InputError: bad input (an output over an input, an existing ``per_case``, a bad gates file, ``dry_run``
            without a model, the judge model answered these cases). JudgeError / StoreError as met.
    """

    observer = observer if observer is not None else Observer()
    local = {role: p for role, p in (("cases", cases), ("attempts", attempts)) if os.path.isfile(p)}
    check_outputs({"--out": out, "--per-case": per_case, **(guard or {})},
                  {"CASES": local.get("cases"), "ATTEMPTS": local.get("attempts"), "--db": sqlite_files(db),
                   "--gates": gates, "--store": recording.files(), "judge cache": cache_files(llm_opts)})
    definition = load_definition(gates, scorer=JUDGE_NAME)
    check_slice_gates(definition, slice_by)
    if llm_opts.dry_run and not llm_opts.enabled:
        raise InputError("--dry-run counts the calls the LLM judge would make: give --llm MODEL with it.")
    if llm_opts.enabled:
        if "attempts" in local:
            refuse_answering_model(attempts, judge_config(llm_opts).model)
        if llm_opts.dry_run:
            recording.no_store = True
    if per_case is not None and os.path.exists(per_case):
        raise InputError(f"--per-case {per_case}: already exists; Spark writes a folder there. Choose a new path or remove it.")
    limits: dict[str, Any] = {} if max_result_bytes is None else {"max_result_bytes": max_result_bytes}
    config = AnswerConfig(db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=check_canonical, **limits)
    t0 = time.perf_counter()
    spark = gs.session(master)
    with gs.executor_failures(f"judging {cases}"):
        cases_df, failures = spark_judge.judge(spark, cases, attempts, db=db, timeout_s=timeout_s, max_rows=max_rows,
                                               check_canonical=check_canonical, keep_materials=llm_opts.enabled,
                                               slice_by=slice_by, **limits)
        results = gs.aggregate(cases_df)
    results["failures"] = failures
    results["aggregate"]["n_row_failures"] = len(failures)
    results["inputs"] = {"cases": cases, "cases_sha256": file_sha256(cases) if "cases" in local else None,
                         "attempts": attempts, "attempts_sha256": file_sha256(attempts) if "attempts" in local else None,
                         "db": db, "db_sha256": file_sha256(db) if db else None}
    results["engine"]["master"] = master
    merged: dict[str, Any] = {}
    if llm_opts.enabled:
        with gs.executor_failures(f"judging {cases}"):
            results, merged = spark_judge.llm_stage(cases_df, results, llm_opts)
        if llm_opts.dry_run:
            _write(results, out, out_format)
            return Evaluation(results, None, None, False, None, dry_run=True)
    results["elapsed_sec"] = time.perf_counter() - t0
    with gs.executor_failures(f"judging {cases}"), recording.recording(
        scorer_name=JUDGE_NAME, scorer_version=JUDGE_VERSION,
        inputs={"cases": local.get("cases"), "attempts": local.get("attempts"), "db": db},
        config={**config.to_dict(), **llm_opts.run_config()}, judge_version=JUDGE_VERSION,
        rubric_text=rubric_text(cases) if "cases" in local else None, dod=gates,
    ) as recorder:
        hold_finish_for_gates(recorder, definition)
        if recorder is not None:
            for rec in gs.iter_records(cases_df):
                recorder.record(merged.get(str(rec["id"]), rec))
        if per_case is not None:
            (cases_df if recorder is None else gs.with_run(cases_df, recorder.run_id)).write.parquet(per_case)
        if recording.note:
            observer.recorded(recording.note)
        observer.summary({**results, "per_example": list(merged.values())}, None)
        if recorder is not None:
            recorder.finish(results)  # held until the gates are applied (hold_finish_for_gates)
        report = apply_definition(results, definition, recorder=recorder)
        if report is not None:
            observer.gates(report)
    recording.stamp(results)  # the top-level "run": {id, arm, store}, as a local run's results (absent without a store)
    _write(results, out, out_format)
    agg = results["aggregate"]
    problem = None
    if agg.get("n", 0) == 0 or agg.get("unscored", 0) == agg.get("n", 0):
        first = failures[0]["error"] if failures else "every case is unscored (see --per-case or the store)"
        problem = (f"no case could be judged ({agg.get('n', 0)} cases, {agg.get('unscored', 0)} unscored); the first: "
                   f"{first.rstrip('.')}. Check the argument order (CASES first, then ATTEMPTS) and --db.")
    return Evaluation(results, report, recording.run_id, recording.resumed, problem)
