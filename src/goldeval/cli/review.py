"""``goldeval replay`` and ``goldeval review export|import|stats``: human-settled verdicts, the judge regressions and
the judge's agreement with the people."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from goldeval.cli._answers import check_privileged_role, check_sql_dialect, max_result_bytes, query_options
from goldeval.cli._ci import junit_option, write_junit
from goldeval.cli._common import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    exit_codes,
    guard_outputs,
    guarded,
    out_option,
    quiet_option,
    report_console,
    run_inputs,
    write_json,
)
from goldeval.cli._groups import SuggestingGroup
from goldeval.cli._inputs import INPUT
from goldeval.cli._llm import llm_cache_files, llm_config, llm_options
from goldeval.cli._progress import ProgressDisplay
from goldeval.cli._store import store_file, store_files, store_path_option
from goldeval.runs.location import is_server_store
from goldeval.errors import InputError
from goldeval.io.outputs import sqlite_files
from goldeval.runs.backends import open_existing_store

DEFAULT_REGRESSIONS = "judge-regressions.jsonl"


def _current_judge(db: str | None, db_dir: str | None = None, **query: Any):
    """``(judge(case, answer) -> verdict, judge_version)`` for the data-answer judge of this goldeval; *query*: the
    keywords of :func:`goldeval.runs.judges.answer_judge` that say how SQL runs (timeout_s, max_rows, …)."""
    from goldeval.runs.judges import answer_judge  # start-up: the run store loads only when the command runs

    return answer_judge(db=db, db_dir=db_dir, **query)


@click.command()
@exit_codes
@click.argument("regressions", type=INPUT)
@click.option("--cases", "cases", required=True, type=INPUT,
              help="The case file (question, golden, rubric) the settled verdicts refer to.")
@click.option("--db", default=None, type=click.Path(dir_okay=False, path_type=str),
              help="Database to re-execute an answer's final_query on (when the answer holds no rows).")
@click.option("--db-dir", default=None, type=click.Path(file_okay=False, path_type=str),
              help="Folder of the databases the cases name (\"db\": NAME -> NAME.sqlite, NAME.duckdb, NAME.db or "
                   "NAME/NAME.sqlite), as for goldeval judge.")
@query_options  # as the judging ran them: a replay with other limits reports changes the judge did not make
@out_option("Write the replay JSON here ('-' for stdout).")
@quiet_option("Print no summary (the JSON still goes to --out; the exit code says whether any settled verdict changed).")
# a replay judges each settled case once, one at a time, rules first, and reports no cost: those options do not apply
@llm_options(exclude=("repeat", "dry_run", "llm_send", "max_concurrency", "price_in", "price_out", "max_cost"))
@junit_option
@guarded
def replay(regressions, cases, db, db_dir, sql_dialect, timeout_s, max_rows, no_canonical, allow_functions,
           allow_privileged_role, max_result_mb, out, quiet, llm_opts, junit):
    """Re-judge every human-settled verdict in REGRESSIONS with the current judge.

    The rule-based judge decides first; with --llm MODEL the cases it leaves undecided go to the LLM judge (cached,
    so replaying an unchanged judge costs no call). Prints each case whose verdict now differs from the one a
    person settled on; exits 1 when any does (adopt a judge or rubric change only after looking at them) or when any
    settled verdict could not be replayed, 2 when a file cannot be used or none of its verdicts could be replayed.
    """
    # start-up: the library loads only when the command runs, not for --help
    from goldeval.pipeline.judging import named_databases

    # start-up: the run store loads only when the command runs
    from goldeval.runs.regressions import replay as run_replay

    check_sql_dialect(sql_dialect, db, db_dir)
    check_privileged_role(allow_privileged_role, db)
    named = named_databases(cases, db_dir)  # name -> file of each database the cases name under --db-dir
    guard_outputs({"--out": out, "--junit": junit}, {"REGRESSIONS": regressions, "--cases": cases, "--db": sqlite_files(db),
                                   "judge cache": llm_cache_files(llm_opts),
                                   **{f"database {name!r}": sqlite_files(path) for name, path in named.items()}})
    judge, version = _current_judge(db, db_dir, timeout_s=timeout_s, max_rows=max_rows, sql_dialect=sql_dialect,
                                    check_canonical=not no_canonical, allow_functions=allow_functions,
                                    allow_privileged_role=allow_privileged_role,
                                    max_result_bytes=max_result_bytes(max_result_mb))
    cache = None
    if llm_opts.max_calls is not None and not llm_opts.enabled:

        raise InputError("--max-calls caps the LLM judge's calls, and no LLM judge runs in this replay: give --llm MODEL "
                         "with it, or drop it.")
    if llm_opts.enabled:
        from goldeval.llm import JudgeCache  # start-up: the LLM judge loads only when the command runs

        # start-up: the LLM judge loads only when the command runs
        from goldeval.llm.prompt import JUDGE_VERSION as LLM_JUDGE_VERSION
        from goldeval.llm.wiring import with_llm  # start-up: the LLM judge loads only when the command runs

        cache = JudgeCache() if llm_opts.cache else None
        if os.environ.get("GOLDEVAL_JUDGE_MAX_COST") not in (None, ""):
            click.echo("goldeval: replay takes no prices, so $GOLDEVAL_JUDGE_MAX_COST does not apply to it; cap its "
                       "judge calls with --max-calls N.", err=True)
        judge = with_llm(judge, config=llm_config(llm_opts, cost_cap=False), cache=cache)
        version = f"{version} + LLM judge {LLM_JUDGE_VERSION} ({llm_opts.model})"
    try:
        tally = getattr(judge, "tally", None)  # with --llm: the calls made, cached and failed so far

        def advance(k: int) -> None:
            if tally is not None:
                display.tally = tally.to_dict()
            display.advance(k)

        with ProgressDisplay("replaying", unit="verdicts", quiet=quiet) as display:
            result = run_replay(regressions, cases, judge, judge_version=version, on_total=display.start,
                                progress=advance)
    finally:
        if cache is not None:
            cache.close()
    meter = getattr(judge, "budget", None)
    if meter is not None:
        result["llm_spend"] = meter.summary()
    console = report_console(out, quiet=quiet)
    console.print(
        f"replayed {result['n_replayed']} settled verdict(s) with judge {version or '?'}: "
        f"{result['n_same']} unchanged, {result['n_changed']} changed, {result['n_failed']} not replayed",
        highlight=False,
    )
    for c in result["changed"]:
        console.print(
            f"  {c['id']}: settled {c['settled']} (by {c.get('reviewer') or '?'}, under {c.get('settled_under') or '?'}) "
            f"→ now {c['now']}: {c.get('why_now') or ''}",
            highlight=False, markup=False,
        )
    for f in result["failures"]:
        console.print(f"  not replayed: {f['error']}", highlight=False, markup=False)
    if meter is not None and result["llm_spend"]["max_calls"] is not None:
        sp = result["llm_spend"]
        console.print(f"LLM judge calls: {sp['calls']} of --max-calls {sp['max_calls']}"
                      + (f"; spend cap reached ({sp['reached']})" if sp["reached"] else ""), highlight=False, markup=False)
    if out:
        write_json(result, out)
    if junit:
        # start-up: the report modules load only when one is written or rendered
        from goldeval.report.junit import replay_junit

        write_junit(junit, replay_junit(result))  # one testcase per changed settled verdict
    if result["n_failed"] and not result["n_replayed"]:

        raise InputError(
            f"replay {regressions}: none of its {result['n_failed']} settled verdict(s) could be replayed, so nothing "
            f"shows the judge still agrees with them; the first: {result['failures'][0]['error']}"
        )
    if result["n_changed"]:
        sys.exit(EXIT_GATE_FAILED)
    if result["n_failed"]:
        # a settled verdict that was not replayed is not shown unchanged: the gate does not pass on it
        click.echo(f"goldeval: replay: {result['n_failed']} settled verdict(s) were not replayed (listed above); fix them "
                   "or the case file, and replay again.", err=True)
        sys.exit(EXIT_GATE_FAILED)
    return EXIT_OK


@click.group(cls=SuggestingGroup)
@exit_codes
def review() -> None:
    """Human review of the cases a judge could not settle: export them, import the verdicts."""


@review.command("export")
@exit_codes
@click.argument("run")
@store_path_option
@out_option("Where to write the JSONL for the reviewer ('-' for stdout).", default="-")
@quiet_option("Do not say how many cases were exported.")
@click.option("--all", "all_cases", is_flag=True,
              help="Every scored case, not only the needs_human ones: a person's verdicts on decided cases calibrate the judge (review stats).")
@guarded
def review_export(run, store, out, quiet, all_cases):
    """Write RUN's needs_human cases (with --all: every scored case) as JSONL, one per line, for a person to fill in.

    Each line holds the question, golden, answer, the judge's verdict and why; the person fills "verdict"
    (match | near_match | no_match), "reviewer" and optionally "note", then runs `goldeval review import`.
    """
    import orjson  # start-up: loaded only when the command runs

    from goldeval.cli.runs import write_bytes  # start-up: loaded only when the command runs, not for --help
    from goldeval.runs.regressions import export_review  # start-up: the run store loads only when the command runs

    guard_outputs({"--out": out}, {"--store": store_files(store)})
    with open_existing_store(store) as st:
        guard_outputs({"--out": out}, run_inputs(st, st.resolve(run)))  # never over the run's own cases or attempts
        rows = export_review(st, run, only_needs_human=not all_cases)
    data = b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in rows)
    write_bytes(data, out)
    if not quiet:
        click.echo(f"goldeval: {len(rows)} {'scored' if all_cases else 'needs_human'} case(s) exported" + ("" if out == "-" else f" to {out}"), err=True)
    return EXIT_OK


@review.command("import")
@exit_codes
@click.argument("file", type=INPUT)
@store_path_option
@click.option("--regressions", default=DEFAULT_REGRESSIONS, show_default=True, type=click.Path(dir_okay=False, path_type=str),
              help="Regression file to append the settled verdicts to.")
@click.option("--reviewer", default=None, help="Reviewer name for rows that leave 'reviewer' empty.")
@click.option("--on-conflict", "on_conflict", type=click.Choice(["fail", "latest"]), default="fail", show_default=True,
              help="A verdict that differs from one recorded before for the same case: fail (import nothing, list "
                   "every conflict) or latest (the imported verdict settles the case; the regression file keeps only it).")
@quiet_option("Print no summary of what was recorded and appended.")
@guarded
def review_import(file, store, regressions, reviewer, on_conflict, quiet):
    """Record the verdicts filled in FILE (written by `review export`) in the store and append them to the
    regression file. Rows still without a verdict are left for later; nothing is imported while any row is
    unusable."""
    from goldeval.runs.regressions import import_review  # start-up: the run store loads only when the command runs

    # the regressions file is appended to by design; it must not be the reviewed file or the store
    guard_outputs({"--regressions": regressions}, {"FILE": file, "--store": store_files(store)})

    with open_existing_store(store) as st:
        result = import_review(st, file, regressions_path=regressions, reviewer=reviewer, on_conflict=on_conflict)
    if quiet:
        return EXIT_OK
    click.echo(
        f"goldeval: {result['n_imported']} verdict(s) recorded, {result['n_already']} already recorded, "
        f"{result['n_pending']} left for later; {result['n_appended']} appended to {regressions}",
        err=True,
    )
    if result.get("n_settled"):
        click.echo(f"goldeval: {result['n_settled']} conflicting case(s) settled by the latest verdict "
                   f"(the earlier reviews stay in the store; {regressions} keeps only the settled one).", err=True)
    if result["n_without_answer"]:
        click.echo(
            f"goldeval: {result['n_without_answer']} row(s) have no 'answer' and were not added to the regression file "
            "(they cannot be replayed without the answer as judged).",
            err=True,
        )
    return EXIT_OK


@review.command("stats")
@exit_codes
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@store_path_option
@click.option("--regressions", default=None, type=click.Path(dir_okay=False, path_type=str),
              help="A regression file whose settled verdicts join the store's reviews.")
@click.option("--out", "-o", default=None, metavar="PATH",
              help="Write the results JSON here ('-' for stdout); `goldeval gate` reads it (judge_kappa, judge_agreement).")
@click.option("--quiet", "-q", is_flag=True, help="No summary on the console (the JSON still goes to --out).")
@guarded
def review_stats(runs, store, regressions, out, quiet):
    """The judge against the settled human verdicts: confusion matrix, agreement and Cohen's kappa, separately for
    the cases decided by rule and by the LLM judge, and every disagreement with both whys.

    RUN ... are the runs whose reviews to read (default: every run with reviews; with --regressions alone, the
    runs its entries name). A case the judge left to a person (needs_human) is shown in the matrix but not counted;
    reviewers who disagree on a case and were never settled are listed, not counted. Exit 0; gate the --out file
    (`judge_kappa = { min = 0.6 }`) to refuse a judge below the line the team agreed.
    """
    from goldeval.runs.calibration import judge_calibration  # start-up: the run store loads only when the command runs

    guard_outputs({"--out": out}, {"--store": store_files(store), "--regressions": regressions})
    path = store_file(store)
    if is_server_store(path) or os.path.exists(path):
        with open_existing_store(store) as st:
            guard_outputs({"--out": out}, run_inputs(st, *(st.resolve(r) for r in runs)))  # the named runs' inputs
            result = judge_calibration(st, runs, regressions=regressions)
    elif runs or regressions is None:

        raise InputError(f"review stats: there is no run store at {path}. Pass --store PATH, or --regressions FILE alone.")
    else:
        result = judge_calibration(None, (), regressions=regressions)
    if not quiet:
        render_stats(result, report_console(out))
    if out:
        write_json(result, out)
    return EXIT_OK


def render_stats(result: dict, console) -> None:
    """The confusion matrices, the agreement lines, the disagreements and the unsettled conflicts (rounding here)."""
    from rich.markup import escape  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    from goldeval.runs.calibration import VERDICTS  # start-up: the run store loads only when the command runs

    agg = result["aggregate"]
    names = {"all": "all cases", "rule": "decided by rule", "llm": "decided by the LLM judge", "unknown": "decided by ? (regression file only)"}
    for group, st in result["by_decided_by"].items():
        if not st["n"] and group != "all":
            continue
        t = Table(title=f"judge (rows) against the settled human verdict (columns): {names[group]}", header_style="bold")
        t.add_column("judge \\ human")
        for v in VERDICTS:
            t.add_column(v, justify="right")
        for label, row in st["matrix"].items():
            t.add_row(label + (" (not counted)" if label not in VERDICTS else ""), *[str(row[v]) for v in VERDICTS])
        console.print(t)
        key = "" if group == "all" else f"_{group}"
        if st["undefined"].get("agreement"):  # no counted case: "over 0 case(s)" after "no case had both" read garbled
            line = f"agreement undefined, kappa undefined: {st['undefined']['agreement']}"
        else:
            kappa = "undefined (" + st["undefined"]["kappa"] + ")" if st["undefined"].get("kappa") else f"{st['kappa']:.3f}"
            line = f"judge_agreement{key} {st['agreement']:.3f}, judge_kappa{key} {kappa} over {st['n_counted']} case(s)"
        console.print(f"  {line}; {st['n_abstained']} left to a person by the judge", highlight=False, markup=False)
    for d in result["disagreements"]:
        console.print(f"[red]disagree[/] {escape(str(d['id']))} ({escape(str(d['run_id']))}, decided by {d['decided_by']}): "
                      f"judge {d['judge']}: {escape(str(d['judge_why'] or '(no why recorded)'))} | human {d['human']} "
                      f"({escape(', '.join(str(r) for r in d['reviewers']))}): {escape(str(d['human_why'] or '(no note)'))}")
    for c in result["unsettled"]:
        said = "; ".join(f"{v['verdict']} by {v['reviewer']}" for v in c["verdicts"])
        console.print(f"[yellow]unsettled[/] {escape(str(c['case_id']))} ({escape(str(c['run_id']))}): {escape(said)} - not counted; "
                      "settle it with review import --on-conflict latest", highlight=False)
    for f in result["failures"][:10]:
        console.print(f"[yellow]not counted[/] {escape(f['error'])}", highlight=False)
    console.print(f"{agg['n']} settled human verdict(s), {agg['n_scored']} counted, {agg['n_abstained']} left to a person, "
                  f"{agg['n_unsettled']} unsettled, {agg['n_failed']} not usable", highlight=False)
