"""``goldeval judge``: the rule-based data-answer judge over a case file and an attempt file."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import click

from goldeval.cli._answers import check_privileged_role, check_sql_dialect, max_result_bytes, query_options
from goldeval.cli._common import (EXIT_BAD_INPUT, EXIT_OK, exit_codes, fail, guard_outputs, guarded, report_console,
                                  write_results)
from goldeval.cli._ci import ci_options
from goldeval.cli._gating import apply_gates, gates_option, hold_finish_for_gates, load_definition
from goldeval.cli._inputs import INPUT
from goldeval.cli._llm import llm_cache_files, llm_options
from goldeval.cli._spark import spark_options
from goldeval.cli._store import store_options
from goldeval.errors import InputError
from goldeval.io.outputs import sqlite_files


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
@ci_options
@store_options
@guarded
def judge(cases, attempts, db, db_dir, sql_dialect, out, out_format, timeout_s, max_rows, no_canonical, allow_functions,
          allow_privileged_role, max_result_mb, quiet, engine, spark_master, per_case, gates, run_store, llm_opts, ci):
    """Judge data answers by rule: verdict per case and the pass rate.

    CASES is JSONL {"id", "question", "golden": {"kind", "columns", "rows" | "value", "ordered"?, "top_n"?,
    "canonical_query"?}, "rubric"?, "must_not_use"?}; ATTEMPTS is JSONL {"id", "final_query"?, "columns"?,
    "rows"?, "text"?}. Pass rate = match / (match + no_match); near_match, needs_human, unscored and
    verified_wrong goldens are counted beside it. With --gates (e.g. `pass_rate = { min = 0.9 }`) exit 1 when a
    gate fails; else exit 0 when judged.
    """
    check_privileged_role(allow_privileged_role, db)
    if engine == "spark":  # the rules on the executors, the LLM stage on the driver (goldeval.engines.spark_judge)
        from goldeval.cli._spark import judge_on_spark

        if db_dir is not None:
            raise InputError("--db-dir with --engine spark: not supported yet (the Spark judge ships one --db file). "
                             "Judge locally, or give --db.")
        if sql_dialect is not None:
            raise InputError("--sql-dialect with --engine spark: not supported yet (the Spark judge runs SQLite or "
                             "DuckDB files). Judge locally, or drop --sql-dialect.")
        if allow_functions:
            raise InputError("--allow-function with --engine spark: not supported yet (the Spark judge runs the "
                             "built-in allowlist only). Judge locally, or drop --allow-function.")
        if llm_opts.enabled and llm_opts.send == "all":
            raise InputError("--llm-send all with --engine spark: not supported (on Spark only the cases the rules leave "
                             "undecided go to the LLM judge). Drop --llm-send all, or judge locally.")
        return judge_on_spark(cases, attempts, db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=not no_canonical,
                              max_result_bytes=max_result_bytes(max_result_mb),
                              master=spark_master, per_case=per_case, out=out, quiet=quiet, gates=gates,
                              run_store=run_store, llm_opts=llm_opts, ci=ci, out_format=out_format)
    if per_case is not None:
        raise InputError("--per-case writes the per-case Parquet of a Spark run: give it with --engine spark.")
    from goldeval.answers.judge import JUDGE_NAME, AnswerConfig
    from goldeval.answers.postgres import is_postgres_url

    check_sql_dialect(sql_dialect, db, db_dir)
    # A password written in a PostgreSQL URL is split out here: config.db is the URL without it, from now on.
    config = AnswerConfig(db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=not no_canonical,
                          sql_dialect=sql_dialect, db_dir=db_dir, allow_functions=allow_functions,
                          allow_privileged_role=allow_privileged_role, max_result_bytes=max_result_bytes(max_result_mb))
    named = _named_databases(cases, db_dir)  # name -> file of every database the cases name (their sha256 key the run)
    server = is_postgres_url(db)
    db = config.db
    console = report_console(out)
    guard_outputs({"--out": out, **ci.outputs()}, {"CASES": cases, "ATTEMPTS": attempts, "--db": None if server else sqlite_files(db),
                                   "--gates": gates, "--store": run_store.files(), "judge cache": llm_cache_files(llm_opts),
                                   **{f"database {name!r}": sqlite_files(path) for name, path in named.items()}})
    # a bad gates file, or a gate on a metric the judge never produces, fails before any judging
    definition = load_definition(gates, scorer=JUDGE_NAME)
    if llm_opts.dry_run and not llm_opts.enabled:
        raise InputError("--dry-run counts the calls the LLM judge would make: give --llm MODEL with it.")
    if (llm_opts.max_cost is not None or llm_opts.max_calls is not None) and not llm_opts.enabled:
        raise InputError("--max-cost / --max-calls cap the LLM judge's calls, and no LLM judge runs: give --llm MODEL "
                         "with them, or drop them.")
    if llm_opts.enabled:
        from goldeval.cli._llm import llm_config

        _refuse_answering_model(attempts, llm_config(llm_opts).model)  # before any judging, not after the rules
        if not llm_opts.dry_run:  # no key, no client library: fail before a run is recorded, not after the rules
            from goldeval.llm.client import JudgeClient

            JudgeClient(llm_config(llm_opts)).check_ready()
        if llm_opts.dry_run:
            run_store.no_store = True  # a dry run records nothing: it must not become `latest` in the store
    # A server database is opened before the run is recorded: its identity (server version, database, catalog
    # sha256) stands in for a file's sha256 in the run key, so a run resumes only on the same database.
    database = config.open_database() if server else None
    try:
        _judge_recorded(cases, attempts, out, out_format, quiet, gates, run_store, llm_opts, config, database, definition, console, ci,
                        inputs={"cases": cases, "attempts": attempts, "db": None if server else db,
                                **{f"db:{name}": path for name, path in named.items()}},
                        identities={"db": database.identity()} if database is not None else None)
    finally:
        if database is not None:
            database.close()


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
    import gc

    if database is not None or getattr(config, "db_dir", None):
        from goldeval.answers.doubt import sql_dialect

        dialect = getattr(database, "query_dialect", None) or "sqlite"
        d = sql_dialect(dialect)
        d.generate(d.parse("SELECT 1")[0])  # tokenizer, parser and generator, each loaded once
    gc.freeze()


def _judge_recorded(cases, attempts, out, out_format, quiet, gates, run_store, llm_opts, config, database, definition,
                    console, ci, *, inputs, identities):
    """Judge, record, render, gate, write; exit. Without --llm every case streams, as it is judged, to --out, to
    the store and (the first :data:`TABLE_CASES`) to the console table: nothing is kept per case but what
    --junit-cases needs (a few keys). With --llm the rule results are kept whole (the LLM stage merges into them)."""
    from goldeval.answers.judge import JUDGE_NAME, JUDGE_VERSION, judge_file
    from goldeval.runs.recorder import rubric_text

    state: dict[str, Any] = {"first_reason": None, "n": 0}
    shown: list[dict[str, Any]] = []
    junit_cases: list[dict[str, Any]] | None = [] if ci.junit_cases else None
    with contextlib.ExitStack() as stack:
        writer = None
        if out and not llm_opts.enabled:
            from goldeval.answers.scorer import AnswerJudge
            from goldeval.io.resultsfile import ResultsFile

            writer = stack.enter_context(ResultsFile(out, out_format))
            writer.begin({"scorer": {"name": AnswerJudge.name, "version": AnswerJudge.version}, "config": config.to_dict()})

        def on_example(entry: dict[str, Any]) -> None:
            if writer is not None:
                writer.example(entry)
            if state["first_reason"] is None and entry.get("reason"):
                state["first_reason"] = entry["reason"]
            state["n"] += 1
            if len(shown) < TABLE_CASES and not quiet:
                shown.append(_slim(entry))
            if junit_cases is not None:
                junit_cases.append(_slim(entry))

        with run_store.recording(
            scorer_name=JUDGE_NAME, scorer_version=JUDGE_VERSION, inputs=inputs,
            config={**config.to_dict(), **llm_opts.run_config()}, judge_version=JUDGE_VERSION, rubric_text=rubric_text(cases),
            dod=gates, identities=identities,
        ) as recorder:
            hold_finish_for_gates(recorder, definition)  # the run is finished once, with its gate report
            _settle_start_up(database, config)
            if llm_opts.enabled:
                # With --llm the run is finished by the LLM stage: if that stage fails (no key, endpoint down) the run
                # is left interrupted (resumable), never recorded as finished on the rule verdicts alone.
                from goldeval.cli._llm import run_llm_stage

                results = judge_file(cases, attempts, config=config, recorder=_NoFinish(recorder) if recorder is not None else None,
                                     keep_materials=True, db=database)
                # the cases the rules could not decide go to the LLM judge (issue 6)
                merged = run_llm_stage(results, cases, attempts, llm_opts, answer_config=config, recorder=recorder,
                                       console=None if quiet else console)
                if merged is None:  # --dry-run: the count was printed; --out gets the rule results and the count
                    if out:
                        write_results(results, out, out_format)
                    return EXIT_OK
                results = merged
                for entry in results["per_example"]:
                    on_example(entry)
            else:
                results = judge_file(cases, attempts, config=config, recorder=recorder, db=database, keep_per_example=False,
                                     on_example=on_example)
            if run_store.note and not quiet:
                click.echo(f"goldeval: {run_store.note}", err=True)
            if not quiet:
                kept_in = " and ".join(w for w in (f"--out {out}" if out else None, "the run store" if recorder is not None else None) if w)
                render_judge({**results, "per_example": shown}, console, not_shown=state["n"] - len(shown), kept_in=kept_in)
            code = apply_gates(results, gates, console, definition=definition, recorder=recorder)
        run_store.stamp(results)  # the top-level "run": {id, arm, store} (absent with --no-store)
        if writer is not None:
            writer.close(results)
        elif out:
            write_results(results, out, out_format)
    ci.write(results if junit_cases is None else {**results, "per_example": junit_cases})
    agg = results["aggregate"]
    if agg.get("n", 0) == 0 or agg.get("unscored", 0) == agg.get("n", 0):
        first = state["first_reason"] or (results["failures"][0]["error"] if results.get("failures") else "no case")
        fail(f"no case could be judged ({agg.get('n', 0)} cases, {agg.get('unscored', 0)} unscored); the first: {first.rstrip('.')}. "
             "Check the argument order (CASES first, then ATTEMPTS) and --db.", EXIT_BAD_INPUT)
    sys.exit(code)


def _named_databases(cases: str, db_dir: str | None) -> dict[str, str]:
    """name → file of each database the case file names (``"db"``) that resolves under *db_dir* ({} without one)."""
    if db_dir is None:
        return {}
    import os

    from goldeval.answers.databases import DatabaseDir, case_database_names
    from goldeval.io.reading import read_rows

    if not os.path.isfile(cases):
        return {}  # the judge names the missing file
    names = case_database_names(read_rows(cases))
    return DatabaseDir(db_dir, open_one=lambda path: None).files(names)


class _NoFinish:
    """A recorder that passes everything through except ``finish`` (the rule stage of a judge --llm run)."""

    def __init__(self, recorder: Any) -> None:
        self._recorder = recorder

    def finish(self, results: dict[str, Any]) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._recorder, name)


def _refuse_answering_model(attempts_path: str, judge_model: str | None) -> None:
    """Refuse, before any work, a judge model that produced some of the answers (the attempt's ``model`` or
    ``answer_model`` field names it): a model never judges its own answers."""
    from goldeval.errors import InputError
    from goldeval.io.reading import Row, read_rows
    from goldeval.llm.run import same_model

    for item in read_rows(attempts_path):
        if isinstance(item, Row):
            answered_by = item.data.get("model") or item.data.get("answer_model")
            if isinstance(answered_by, str) and same_model(answered_by, judge_model):
                raise InputError(
                    f"{attempts_path}:{item.line}: this answer was produced by {answered_by!r}, the judge model given "
                    f"with --llm ({judge_model!r}). A model never judges its own answers: choose another judge model."
                )


def render_judge(results: dict[str, Any], console: Any, *, not_shown: int = 0, kept_in: str | None = None) -> None:
    """Summary: one line per case of ``results["per_example"]`` (verdict, confidence, why), then, when *not_shown*
    cases were left out of that list, a line counting them (and saying where they are: *kept_in*, e.g. ``"--out
    r.json"``), and the pass-rate line with the counts beside it."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", box=None)
    for col in ("id", "verdict", "conf", "why"):
        table.add_column(col, overflow="fold")
    for case in results["per_example"]:
        if case["status"] == "unscored":
            table.add_row(escape(case["id"]), "[yellow]unscored[/]", "", escape(case.get("reason") or ""))
            continue
        v = case["verdict"]
        style = {"match": "green", "no_match": "red", "near_match": "cyan"}.get(v, "yellow")
        flag = " (needs human)" if case.get("needs_human") and v != "needs_human" else ""
        if case.get("gold_status") == "verified_wrong":
            flag += " (golden verified_wrong: not in the pass rate)"
        elif case.get("gold_status") == "suspect":
            flag += " (golden suspect)"
        conf = "" if case.get("confidence") is None else str(case["confidence"])
        table.add_row(escape(case["id"]), f"[{style}]{v}[/]{flag}", conf, escape(case.get("why") or ""))
    console.print(table)
    if not_shown:
        where = f"every case is in {kept_in}" if kept_in else "give --out FILE to keep every case"
        console.print(f"… and {not_shown} more cases not listed (the first {len(results['per_example'])} are); {where}.",
                      highlight=False, markup=False)
    a = results["aggregate"]
    rate = "undefined (nothing decided)" if a["undefined"].get("pass_rate") else f"{a['pass_rate']:.1%}"
    console.print(
        f"pass rate {rate} = {a['match']} match / {a['decided']} decided · {a['unscored']} of {a['n']} unscored · "
        f"near_match {a['near_match']} · needs_human {a['needs_human']} · verified_wrong {a['verified_wrong']} · n {a['n']}",
        highlight=False,
    )
    if a["n"] and a["unscored"] * 2 > a["n"]:
        # the pass rate speaks for the few cases that could be judged: say so where it cannot be missed
        console.print(
            f"[yellow]warning:[/] {a['unscored']} of {a['n']} cases ({a['unscored'] / a['n']:.0%}) are unscored; the pass "
            f"rate covers only the {a['decided']} decided. See the reasons above (without --db a final_query cannot be run).",
            highlight=False,
        )
    for f in results.get("failures", [])[:10]:
        console.print(f"[yellow]skipped[/] {escape(f['error'])}")
