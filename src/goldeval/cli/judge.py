"""``goldeval judge``: the rule-based data-answer judge over a case file and an attempt file."""

from __future__ import annotations

import gc
import sys
from typing import Any

import click

from goldeval.cli._answers import check_privileged_role, check_sql_dialect, max_result_bytes, query_options
from goldeval.cli._ci import ci_options
from goldeval.cli._common import EXIT_BAD_INPUT, EXIT_OK, calibration_option, exit_codes, fail, guarded, report_console
from goldeval.cli._gating import gates_option, slice_option
from goldeval.cli._inputs import INPUT
from goldeval.cli._llm import llm_options, render_llm_stage
from goldeval.cli._observe import ConsoleObserver
from goldeval.cli._spark import judge_on_spark, spark_options
from goldeval.cli._store import store_options
from goldeval.errors import InputError


@click.command()
@exit_codes
@click.argument("cases", type=INPUT)
@click.argument("attempts", type=INPUT)
@click.option("--db", default=None, type=click.Path(dir_okay=False, path_type=str),
              help="SQLite (or DuckDB) file, or postgresql://user@host:port/dbname: re-execute each attempt's "
                   "final_query read-only; those rows are judged. A PostgreSQL password comes from PGPASSWORD or "
                   "~/.pgpass (one written in the URL is used but never recorded).")
@click.option("--db-dir", default=None, type=click.Path(file_okay=False, path_type=str),
              help="Folder of SQLite / DuckDB databases that cases name (\"db\": NAME -> NAME.sqlite, NAME.duckdb, "
                   "NAME.db or NAME/NAME.sqlite); each is opened once, read-only. A many-database set in one run.")
@query_options
@click.option("--out", "-o", default=None, metavar="PATH", help="Write the results JSON here ('-' for stdout), as the cases are judged.")
@click.option(
    "--out-format", type=click.Choice(["json", "jsonl"]), default="json", show_default=True,
    help="json: one object, per_example one entry a line; jsonl: one per_example entry a line, then a line with the rest.",
)
@click.option("--quiet", "-q", is_flag=True, help="No summary on the console (the JSON still goes to --out; with --gates the gate table and decision are still printed).")
@spark_options
@llm_options
@gates_option
@calibration_option
@slice_option
@ci_options
@store_options
@guarded
def judge(cases, attempts, db, db_dir, sql_dialect, out, out_format, timeout_s, max_rows, no_canonical, allow_functions,
          allow_privileged_role, max_result_mb, quiet, engine, spark_master, per_case, gates, calibration, slice_by, run_store,
          llm_opts, ci):
    """Judge data answers by rule: verdict per case and the pass rate.

    CASES is JSONL {"id", "question", "golden": {"kind", "columns", "rows" | "value", "ordered"?, "top_n"?,
    "canonical_query"?}, "rubric"?, "must_not_use"?}; ATTEMPTS is JSONL {"id", "final_query"?, "columns"?,
    "rows"?, "text"?}. Pass rate = match / (match + no_match); near_match, needs_human, unscored and
    verified_wrong goldens are counted beside it. With --gates (e.g. `pass_rate = { min = 0.9 }`) exit 1 when a
    gate fails; else exit 0 when judged. With --calibration, the pass rate is also given corrected for the judge's
    sensitivity and specificity measured on human verdicts (gateable: pass_rate_corrected, pass_rate_corrected_low).
    """
    check_privileged_role(allow_privileged_role, db)
    if engine == "spark":  # the rules on the executors, the LLM stage on the driver (goldeval.engines.spark_judge)
        if db_dir is not None:
            raise InputError("--db-dir with --engine spark: not supported yet (the Spark judge ships one --db file). "
                             "Judge locally, or give --db.")
        if sql_dialect is not None:
            raise InputError("--sql-dialect with --engine spark: not supported yet (the Spark judge runs SQLite or "
                             "DuckDB files). Judge locally, or drop --sql-dialect.")
        if allow_functions:
            raise InputError("--allow-function with --engine spark: not supported yet (the Spark judge runs the "
                             "built-in allowlist only). Judge locally, or drop --allow-function.")
        if calibration is not None:
            raise InputError("--calibration with --engine spark: not supported yet. Judge locally, or correct the "
                             "recorded run afterwards: goldeval report RUN --calibration FILE|RUN.")
        if llm_opts.enabled and llm_opts.send == "all":
            raise InputError("--llm-send all with --engine spark: not supported (on Spark only the cases the rules leave "
                             "undecided go to the LLM judge). Drop --llm-send all, or judge locally.")
        return judge_on_spark(cases, attempts, db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=not no_canonical,
                              max_result_bytes=max_result_bytes(max_result_mb),
                              master=spark_master, per_case=per_case, out=out, quiet=quiet, gates=gates,
                              run_store=run_store, llm_opts=llm_opts, ci=ci, out_format=out_format, slice_by=slice_by)
    if per_case is not None:
        raise InputError("--per-case writes the per-case Parquet of a Spark run: give it with --engine spark.")
    # start-up: the answer judge (it loads numpy) loads only when the command runs, not for --help
    from goldeval.answers.judge import AnswerConfig
    from goldeval.answers.render import render_judge
    from goldeval.pipeline.judging import judge_answers

    check_sql_dialect(sql_dialect, db, db_dir)
    # A password written in a PostgreSQL URL is split out here: config.db is the URL without it, from now on.
    config = AnswerConfig(db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=not no_canonical,
                          sql_dialect=sql_dialect, db_dir=db_dir, allow_functions=allow_functions,
                          allow_privileged_role=allow_privileged_role, max_result_bytes=max_result_bytes(max_result_mb))
    console = report_console(out)
    # every case streams, as it is judged, to --out, to the store and (the first TABLE_CASES) to the console table:
    # nothing is kept per case but what --junit-cases needs (a few keys)
    state = {"n": 0}
    shown: list[dict[str, Any]] = []
    junit_cases: list[dict[str, Any]] | None = [] if ci.junit_cases else None

    def on_example(entry: dict[str, Any]) -> None:
        state["n"] += 1
        if len(shown) < TABLE_CASES and not quiet:
            shown.append(_slim(entry))
        if junit_cases is not None:
            junit_cases.append(_slim(entry))

    def render(results: dict[str, Any], scorer: Any, c: Any) -> None:
        kept_in = " and ".join(w for w in (f"--out {out}" if out else None, "the run store" if not run_store.no_store else None) if w)
        render_judge({**results, "per_example": shown}, c, not_shown=state["n"] - len(shown), kept_in=kept_in)

    class Show(ConsoleObserver):
        def ready(self, database: Any, config: Any) -> None:
            _settle_start_up(database, config)

        def llm_stage(self, stage: Any) -> None:
            self.display.stop()  # the bar goes before the stage's line is printed
            render_llm_stage(stage, llm_opts, None if quiet else console)

    with Show(console, quiet=quiet, render=render, what="judging", unit="cases") as observer:
        ev = judge_answers(cases, attempts, config, llm_opts=llm_opts, gates=gates, recording=run_store, out=out,
                           out_format=out_format, on_example=on_example, observer=observer, guard=ci.outputs(),
                           calibration=calibration, slice_by=slice_by)
    if ev.dry_run:
        return EXIT_OK
    results = ev.results
    ci.write(results if junit_cases is None else {**results, "per_example": junit_cases})
    if ev.problem is not None:
        fail(ev.problem, EXIT_BAD_INPUT)
    sys.exit(ev.exit_code)


#: Cases listed one per line in the console table; past this many the rest are counted, not listed (every case
#: is in --out and in the store), so the console keeps no list of every case.
TABLE_CASES = 200

#: The keys of a per_example entry the console table (render_judge) and a JUnit testcase of one case
#: (report.junit._case_tests) read.
_SHOWN_KEYS = ("id", "status", "reason", "error", "verdict", "why", "gold_status", "confidence", "needs_human")


def _slim(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: entry[k] for k in _SHOWN_KEYS if k in entry}


def _settle_start_up(database: Any, config: Any) -> None:
    """The last of start-up, before the first case (issue 15): the SQL dialect's parser and generator are loaded
    when a database is in play (the golden checks parse queries in it; loaded at the first case that needs one,
    they cost 5 ms in the middle of the run), then every object start-up made is moved out of the cyclic garbage
    collector's reach (``gc.freeze()``): modules, classes and tables live to the end of the process, and each full
    collection walked them again (2.5 % of a Spider pass's instructions, counted by valgrind). Objects made from
    here on are collected as ever."""

    if database is not None or getattr(config, "db_dir", None):
        from goldeval.answers.doubt import sql_dialect  # start-up: the answer judge loads only when the command runs

        dialect = getattr(database, "query_dialect", None) or "sqlite"
        d = sql_dialect(dialect)
        d.generate(d.parse("SELECT 1")[0])  # tokenizer, parser and generator, each loaded once
    gc.freeze()


__all__ = ["TABLE_CASES", "judge"]
