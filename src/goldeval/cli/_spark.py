"""``--engine spark`` for ``score`` (and ``judge``): the CLI side of :mod:`goldeval.engines.spark`.

The driver reads INPUT with Spark (any path Spark reads), scores it on the executors, aggregates exactly from one
partial state per partition, gates, and writes the results; with the store on, it records each case as it streams
back partition by partition (never all rows at once); ``--per-case PATH`` writes the per-case DataFrame as Parquet
(for ``goldeval runs import``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from goldeval.cli._common import EXIT_BAD_INPUT, fail, guard_outputs, report_console, write_json, write_results
from goldeval.cli._gating import apply_gates, hold_finish_for_gates, load_definition

__all__ = ["spark_options", "score_on_spark"]


def spark_options(f: Any) -> Any:
    """``--engine local|spark``, ``--spark-master URL``, ``--per-case PATH``."""
    f = click.option("--per-case", "per_case", default=None, metavar="PATH",
                     help="With --engine spark: write the per-case DataFrame here as Parquet (for `goldeval runs import`).")(f)
    f = click.option("--spark-master", default="local[2]", show_default=True, metavar="URL",
                     help="With --engine spark: the Spark master (local[N], spark://host:7077, yarn...).")(f)
    f = click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
                     help="Where to score: this machine, or Apache Spark (pip install 'goldeval[spark]'). A Spark run is "
                          "not resumable (a re-run is a new run; `runs import` is idempotent); the Spark judge takes "
                          "one --db, without --db-dir, --sql-dialect or --llm-send all.")(f)
    return f


def score_on_spark(scorer_name: str, file: str, options: dict, *, master: str, per_case: str | None, out: str | None,
                   quiet: bool, gates: str | None, run_store: Any, ci: Any = None, out_format: str = "json") -> None:
    """``goldeval score FILE --engine spark``: see the module docstring. Exits with the gate code. The results hold
    no ``per_example`` (the cases stay in Spark: ``--per-case``, the store); ``--out-format jsonl`` writes them as
    one line, as the local engine writes its last line."""
    import time

    from goldeval.engines import spark as gs
    from goldeval.scoring.registry import get_scorer, with_extra

    console = report_console(out)
    local_file = os.path.isfile(file)
    guard_outputs({"--out": out, "--per-case": per_case, **(ci.outputs() if ci is not None else {})},
                  {"FILE": file if local_file else None, "--gates": gates, "--store": run_store.files()})
    scorer = get_scorer(scorer_name)
    config = scorer.configure(**options, source=os.path.basename(file.rstrip("/")))
    definition = load_definition(gates, scorer=scorer.name)
    if per_case is not None and os.path.exists(per_case):
        from goldeval.errors import InputError

        raise InputError(f"--per-case {per_case}: already exists; Spark writes a folder there. Choose a new path or remove it.")
    t0 = time.perf_counter()
    spark = gs.session(master)
    with gs.executor_failures(f"scoring {file}"):
        cases = gs.score_path(spark, file, scorer, **config)
    extra = {"input": {"path": file, "sha256": _sha256(file) if local_file else None}}
    with gs.executor_failures(f"scoring {file}"), run_store.recording(
        scorer_name=scorer.name, scorer_version=scorer.version, inputs={"predictions": file} if local_file else {},
        config=scorer.store_config(config), tokenizer=config.get("tokenizer"), dod=gates,
    ) as recorder:
        hold_finish_for_gates(recorder, definition)
        results = with_extra(scorer, gs.aggregate(cases), extra)
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
            cases.write.parquet(per_case)
        if run_store.note and not quiet:
            click.echo(f"goldeval: {run_store.note}", err=True)
        if not quiet:
            from goldeval.report.scorer import render_scorer

            render_scorer(results, console)
        code = apply_gates(results, gates, console, definition=definition, recorder=recorder)
    if out and out_format == "jsonl":
        from goldeval.io.resultsfile import ResultsFile

        with ResultsFile(out, "jsonl") as writer:
            writer.close(results)
    elif out:
        write_json(results, out)
    if ci is not None:
        ci.write(results)  # --junit / --summary-md (cases stay in the per-case output: one testcase per gate)
    agg = results["aggregate"]
    if agg.get("n_scored", agg.get("n")) == 0:
        first = results["failures"][0]["error"] if results.get("failures") else "no rows"
        fail(f"no row of {file} could be scored ({agg.get('n_failed', 0)} failed); the first: {first}", EXIT_BAD_INPUT)
    sys.exit(code)


def _sha256(path: str) -> str:
    from goldeval.io.reading import file_sha256

    return file_sha256(path)


def judge_on_spark(cases: str, attempts: str, *, db: str | None, timeout_s: float, max_rows: int, check_canonical: bool,
                   master: str, per_case: str | None, out: str | None, quiet: bool, gates: str | None, run_store: Any,
                   llm_opts: Any, ci: Any = None, out_format: str = "json", max_result_bytes: int | None = None) -> None:
    """``goldeval judge CASES ATTEMPTS --engine spark``: the rules on the executors, the LLM stage (``--llm``) on the
    driver; see :mod:`goldeval.engines.spark_judge`. Exits with the gate code (2 when no case could be judged)."""
    import time

    from goldeval.engines import spark as gs
    from goldeval.engines import spark_judge
    from goldeval.answers.judge import JUDGE_NAME, JUDGE_VERSION, AnswerConfig
    from goldeval.cli._llm import llm_cache_files
    from goldeval.errors import InputError
    from goldeval.io.reading import file_sha256
    from goldeval.io.outputs import sqlite_files
    from goldeval.runs.recorder import rubric_text

    console = report_console(out)
    local = {role: p for role, p in (("cases", cases), ("attempts", attempts)) if os.path.isfile(p)}
    guard_outputs({"--out": out, "--per-case": per_case, **(ci.outputs() if ci is not None else {})},
                  {"CASES": local.get("cases"), "ATTEMPTS": local.get("attempts"), "--db": sqlite_files(db),
                   "--gates": gates, "--store": run_store.files(), "judge cache": llm_cache_files(llm_opts)})
    definition = load_definition(gates, scorer=JUDGE_NAME)
    if llm_opts.dry_run and not llm_opts.enabled:
        raise InputError("--dry-run counts the calls the LLM judge would make: give --llm MODEL with it.")
    if llm_opts.enabled:
        from goldeval.cli._llm import llm_config
        from goldeval.cli.judge import _refuse_answering_model

        if "attempts" in local:
            _refuse_answering_model(attempts, llm_config(llm_opts).model)
        if llm_opts.dry_run:
            run_store.no_store = True
    if per_case is not None and os.path.exists(per_case):
        raise InputError(f"--per-case {per_case}: already exists; Spark writes a folder there. Choose a new path or remove it.")
    limits = {} if max_result_bytes is None else {"max_result_bytes": max_result_bytes}
    config = AnswerConfig(db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=check_canonical, **limits)
    t0 = time.perf_counter()
    spark = gs.session(master)
    with gs.executor_failures(f"judging {cases}"):
        cases_df, failures = spark_judge.judge(spark, cases, attempts, db=db, timeout_s=timeout_s, max_rows=max_rows,
                                               check_canonical=check_canonical, keep_materials=llm_opts.enabled, **limits)
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
            dr = results["llm_dry_run"]
            click.echo(f"goldeval: dry run: {dr['sent']} of {results['aggregate']['n']} cases go to the LLM judge "
                       f"{llm_opts.model!r}, {dr['calls']} calls ({llm_opts.repeat} per case), {dr['cached']} cached, "
                       f"{dr['http_calls']} would be sent.", err=True)
            if out:
                write_results(results, out, out_format)
            sys.exit(0)
    results["elapsed_sec"] = time.perf_counter() - t0
    with gs.executor_failures(f"judging {cases}"), run_store.recording(
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
            cases_df.write.parquet(per_case)
        if run_store.note and not quiet:
            click.echo(f"goldeval: {run_store.note}", err=True)
        if not quiet:
            from goldeval.cli.judge import render_judge

            render_judge({**results, "per_example": list(merged.values())}, console)
        if recorder is not None:
            recorder.finish(results)  # held until the gates are applied (hold_finish_for_gates)
        code = apply_gates(results, gates, console, definition=definition, recorder=recorder)
    if out:
        write_results(results, out, out_format)
    if ci is not None:
        ci.write(results)  # --junit / --summary-md (cases stay in the per-case output: one testcase per gate)
    agg = results["aggregate"]
    if agg.get("n", 0) == 0 or agg.get("unscored", 0) == agg.get("n", 0):
        first = failures[0]["error"] if failures else "every case is unscored (see --per-case or the store)"
        fail(f"no case could be judged ({agg.get('n', 0)} cases, {agg.get('unscored', 0)} unscored); the first: {first.rstrip('.')}. "
             "Check the argument order (CASES first, then ATTEMPTS) and --db.", EXIT_BAD_INPUT)
    sys.exit(code)
